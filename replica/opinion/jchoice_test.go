package opinion_test

import (
	"encoding/json"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// TestJurisdictionChoiceVectors runs the hand-derived jurisdiction_choice
// vectors (D73), decoded inside a member's opinion body.
func TestJurisdictionChoiceVectors(t *testing.T) {
	var f struct {
		Provisional bool `json:"provisional"`
		Cases       []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Choice      json.RawMessage `json:"jurisdiction_choice"`
			Code        string          `json:"code"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/vectors/jurisdiction_choices.json", &f)
	if !f.Provisional || len(f.Cases) < 10 {
		t.Fatalf("vectors: provisional %v, %d cases", f.Provisional, len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			body, err := json.Marshal(map[string]any{"subject": map[string]any{"type": "spec", "id": "30k-v0.13"},
				"author_kind": "member", "stance": "neutral", "summary": "s", "body": "b", "jurisdiction_choice": c.Choice})
			if err != nil {
				t.Fatal(err)
			}
			o, err := opinion.Decode(body)
			if err == nil {
				err = opinion.CheckAuthor(o, opinion.Standing{Member: true})
			}
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
			if err == nil && (o.JurisdictionChoice == nil || o.JurisdictionChoice.Program != "medicaid-x") {
				t.Fatalf("decoded %+v", o.JurisdictionChoice)
			}
		})
	}
}
