package opinion

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func vectorBodies(t testing.TB) [][]byte {
	b, err := os.ReadFile("testdata/vectors/opinion_publish.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			Body json.RawMessage `json:"body"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, c := range v.Cases {
		out = append(out, c.Body)
	}
	// Shapes the vectors do not have: escapes, a subject off the fast
	// shape, nulls, a top-level name from a nested type.
	for _, s := range []string{
		`{"subject":{"id":"x\"y","type":"spec"},"author_kind":"member","stance":"neutral","summary":"a \"quoted\" word","body":"b"}`,
		`{"subject":{"id":"x","type":"spec","extra":1},"author_kind":"member","stance":"neutral","summary":"s","body":"b"}`,
		`{"subject":null,"author_kind":"member","stance":"neutral","summary":"s","body":"b"}`,
		`{"subject":{"id":"x","type":"spec"},"author_kind":"member","stance":"neutral","summary":"s","body":"b","quotes":null,"evidence":null}`,
		`{"subject":{"id":"x","type":"spec"},"author_kind":"member","stance":"neutral","summary":"s","body":"b","nid":"x"}`,
		`{"subject":{"id":"x","type":"spec"},"author_kind":7,"stance":"neutral","summary":"s","body":"b"}`,
		`{"subject":{"id":"x","type":"spec"},"author_kind":"member","stance":"neutral","summary":"s","body":"b","proposes":{}}`,
		`{}`, `[]`, `"x"`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// agree checks that the fast decoder and the reference agree on b.
func agree(t testing.TB, b []byte) {
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return
	}
	fast, ferr := DecodeCanonical(canon)
	ref, rerr := decodeReference(canon)
	if dag.CodeOf(ferr) != dag.CodeOf(rerr) {
		t.Fatalf("%s: fast %v, reference %v", canon, ferr, rerr)
	}
	if ferr == nil && !reflect.DeepEqual(fast, ref) {
		t.Fatalf("%s: fast %+v, reference %+v", canon, fast, ref)
	}
}

// TestFastDecode: the fast path and the reference decoder agree on every
// vector body and on shapes off the fast path.
func TestFastDecode(t *testing.T) {
	for _, b := range vectorBodies(t) {
		agree(t, b)
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, b := range vectorBodies(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { agree(t, b) })
}
