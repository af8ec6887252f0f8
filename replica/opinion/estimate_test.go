package opinion_test

import (
	"encoding/json"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// TestEstimateVectors runs the hand-derived estimate vectors (D53, D69,
// D75): each estimate is decoded inside a member's opinion body, then
// judged against its MR and session context.
// (A member's opinion: CheckAuthor returns a malformed estimate's schema
// error after the observer rule, D78.)
func TestEstimateVectors(t *testing.T) {
	var f struct {
		Provisional bool `json:"provisional"`
		Cases       []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Estimate    json.RawMessage `json:"estimate"`
			Context     struct {
				EffectiveYear int      `json:"effective_year"`
				Sunsets       bool     `json:"sunsets"`
				Regions       []string `json:"regions"`
				Densities     []string `json:"densities"`
			} `json:"context"`
			Code string `json:"code"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/vectors/estimates.json", &f)
	if !f.Provisional || len(f.Cases) < 20 {
		t.Fatalf("vectors: provisional %v, %d cases", f.Provisional, len(f.Cases))
	}
	codes := map[string]int{}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			err := judgeEstimate(t, c.Estimate, opinion.EstimateContext{EffectiveYear: c.Context.EffectiveYear,
				Sunsets: c.Context.Sunsets, Regions: c.Context.Regions, Densities: c.Context.Densities})
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
			codes[c.Code]++
		})
	}
	for _, want := range []string{"", "schema", "estimate_incomplete"} {
		if codes[want] == 0 {
			t.Errorf("no vector expects %q", want)
		}
	}
}

func judgeEstimate(t *testing.T, est json.RawMessage, c opinion.EstimateContext) error {
	t.Helper()
	body, err := json.Marshal(map[string]any{"subject": map[string]any{"type": "mr", "id": "sha256:" + string(make64('a'))},
		"author_kind": "member", "stance": "neutral", "summary": "s", "body": "b", "estimate": est})
	if err != nil {
		t.Fatal(err)
	}
	o, err := opinion.Decode(body)
	if err != nil {
		return err
	}
	if err := opinion.CheckAuthor(o, opinion.Standing{Member: true}); err != nil {
		return err // a malformed estimate is refused here, after the observer rule
	}
	if o.Estimate == nil {
		t.Fatal("decoded without its estimate")
	}
	return opinion.CheckEstimate(o.Estimate, c)
}

func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}
