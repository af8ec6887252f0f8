package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeetingReplay(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join("..", "..", "replica", "meeting", "testdata", "roadmap-en.jsonl")
	out, errOut, code := run(ctx, "", "meeting", "replay", file)
	if code != exitOK {
		t.Fatalf("replay: %d %s", code, errOut)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "sessions", "testdata", "roadmap-note.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "\n"+string(golden)) {
		t.Errorf("the note printed is not §8.4's:\n%s", out)
	}
	// Outcomes of §8.4: Dana's line at 0, the double press provisional,
	// the undo, the end.
	for _, want := range []string{"filed u3 s=0", "decided resume room provisional", "window-undone", "session-ended"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, label := range []string{"Alice", "Dana", "1791936"} {
		if strings.Contains(out, label) {
			t.Errorf("output contains %q", label)
		}
	}
	es := filepath.Join("..", "..", "replica", "meeting", "testdata", "roadmap-es.jsonl")
	out, _, code = run(ctx, "", "meeting", "replay", "-locale", "es", "-json", es)
	var j struct {
		Results []struct{ Kind string }
		Note    string
	}
	if code != exitOK || json.Unmarshal([]byte(out), &j) != nil || !strings.Contains(j.Note, "Puedes citarme") {
		t.Fatalf("replay -json -locale es: %d %s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"tick","at":5}`+"\n"+`{"type":"tick","at":4}`+"\n"), 0o600)
	if _, errOut, code := run(ctx, "", "meeting", "replay", bad); code != exitFailure || !strings.Contains(errOut, "witan:out_of_order") || !strings.Contains(errOut, "line 2") {
		t.Errorf("out of order: %d %q", code, errOut)
	}
	if _, _, code := run(ctx, "", "meeting", "play", bad); code != exitUsage {
		t.Errorf("unknown verb: %d", code)
	}
}
