package meeting

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReplay: a transcript is untrusted bytes (a file, a device); Replay
// must refuse what it cannot run with a code, and never panic.
func FuzzReplay(f *testing.F) {
	for _, name := range []string{"roadmap-en.jsonl", "roadmap-es.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"type":"press","at":1,"held_ms":-1}`))
	f.Add([]byte(`{"type":"speech","label":"a","start":2,"end":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Replay(StartOptions{}, bytes.NewReader(b))
		if err != nil {
			if CodeOf(err) == CodeInternal {
				t.Fatalf("uncoded error: %v", err)
			}
			return
		}
		if r.Note != nil && bytes.Contains([]byte(r.Note.Text), []byte(`"label"`)) {
			t.Fatal("a label in the note")
		}
	})
}
