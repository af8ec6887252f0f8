package opinion_test

import (
	"encoding/json"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// TestTranslationVectors runs the hand-derived translation vectors (D63):
// a member's opinion decoded, its quotes verified against the vector's
// record (Check), its passages anchored to quotes of the source
// (CheckParts), as the house judges them.
func TestTranslationVectors(t *testing.T) {
	var f struct {
		Provisional bool      `json:"provisional"`
		Record      vecRecord `json:"record"`
		Cases       []struct {
			Name        string          `json:"name"`
			Provisional bool            `json:"provisional"`
			Body        json.RawMessage `json:"body"`
			Code        string          `json:"code"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/vectors/translations.json", &f)
	if !f.Provisional || len(f.Cases) < 15 {
		t.Fatalf("vectors: provisional %v, %d cases", f.Provisional, len(f.Cases))
	}
	signer := mustKey("ed25519:iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w")
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Provisional {
				t.Fatal("every vector we write is provisional")
			}
			o, err := opinion.Decode(c.Body)
			if err == nil {
				err = opinion.CheckAuthor(o, opinion.Standing{Member: true})
			}
			if err == nil {
				err = opinion.Check(o, signer, &f.Record)
			}
			if err == nil {
				err = opinion.CheckParts(o, signer)
			}
			if got := string(dag.CodeOf(err)); got != c.Code {
				t.Fatalf("code %q, want %q (%v)", got, c.Code, err)
			}
		})
	}
}
