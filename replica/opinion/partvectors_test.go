package opinion_test

import (
	"encoding/json"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// runPartVectors runs the hand-derived vectors in file, each the value of
// the opinion member named member inside a member's opinion on the spec:
// every case must decode and pass CheckAuthor with its code, and an
// accepted one must pass decoded (which names what it got when not). The
// file and each case are marked provisional, and it holds at least min
// cases.
func runPartVectors(t *testing.T, file, member string, min int, decoded func(*opinion.Opinion) (ok bool, got any)) {
	t.Helper()
	var f struct {
		Provisional bool `json:"provisional"`
		Cases       []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Value       json.RawMessage `json:"-"`
			Code        string          `json:"code"`
		} `json:"cases"`
	}
	var raw struct {
		Cases []map[string]json.RawMessage `json:"cases"`
	}
	readJSON(t, file, &f)
	readJSON(t, file, &raw)
	if !f.Provisional || len(f.Cases) < min {
		t.Fatalf("vectors: provisional %v, %d cases", f.Provisional, len(f.Cases))
	}
	for i, c := range f.Cases {
		value := raw.Cases[i][member]
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			body, err := json.Marshal(map[string]any{"subject": map[string]any{"type": "spec", "id": "30k-v0.13"},
				"author_kind": "member", "stance": "neutral", "summary": "s", "body": "b", member: value})
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
			if err == nil {
				if ok, got := decoded(o); !ok {
					t.Fatalf("decoded %+v", got)
				}
			}
		})
	}
}
