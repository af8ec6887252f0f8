package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/witan-dev/witan/replica/meeting"
)

// FuzzMeetingReplay: a meeting transcript is untrusted bytes (a file, a
// device); meeting.Replay refuses what it cannot run with a meeting code
// and never panics, and a note it writes carries no label.
func FuzzMeetingReplay(f *testing.F) {
	for _, name := range []string{"roadmap-en.jsonl", "roadmap-es.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "replica", "meeting", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"type":"press","at":1,"held_ms":-1}`))
	f.Add([]byte(`{"type":"speech","label":"a","start":2,"end":1}`))
	f.Add([]byte(`{"type":"speech","label":"zq","start":1,"end":2,"confidence":900,"text":"erase me"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := meeting.Replay(meeting.StartOptions{}, bytes.NewReader(b))
		if err != nil {
			if meeting.CodeOf(err) == meeting.CodeInternal {
				t.Fatalf("uncoded error: %v", err)
			}
			return
		}
		// "zq" said once, as a label only, must not reach the note.
		if r.Note != nil && bytes.Count(b, []byte("zq")) == 1 && bytes.Contains([]byte(r.Note.Text), []byte("zq")) {
			t.Fatal("a label in the note")
		}
	})
}
