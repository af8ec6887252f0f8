package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeeting(t *testing.T) {
	var out bytes.Buffer
	o, err := run(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "sessions", "testdata", "roadmap-note.md"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Notes["en"].Text != string(golden) {
		t.Errorf("English note differs from §8.4's:\n%s", o.Notes["en"].Text)
	}
	es := o.Notes["es"]
	if len(es.Sections) != 3 || es.Voices != 5 || !strings.Contains(es.Text, "- v5: Puedes citarme en esto.") ||
		strings.Contains(es.Text, "proveedor se retrasa") {
		t.Errorf("Spanish note:\n%s", es.Text)
	}
	// The same levels in both languages: the outcomes are the same.
	en, _ := json.Marshal(o.Results["en"])
	esr, _ := json.Marshal(o.Results["es"])
	if !bytes.Equal(en, esr) {
		t.Errorf("English and Spanish outcomes differ")
	}
	for _, l := range []string{"en", "es"} {
		if s := o.Later[l].Sections; len(s) != 2 || s[0].Title != "Outcomes" || s[1].Title != "Gist" {
			t.Errorf("%s three days later: %+v", l, s)
		}
	}
	if !strings.Contains(o.Warning, "can no longer be forgotten by this node alone") {
		t.Errorf("warning %q", o.Warning)
	}
	for _, label := range []string{"Alice", "Dana", "Charlie"} {
		if strings.Contains(out.String(), label) {
			t.Errorf("output names %s", label)
		}
	}
}
