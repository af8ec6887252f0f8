package opinion_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// FuzzDecode: any bytes decode to an opinion or to a protocol error with
// a code, never a panic; seeded with the bodies of the vectors.
func FuzzDecode(f *testing.F) {
	var v struct {
		Cases []struct {
			Body json.RawMessage `json:"body"`
		} `json:"cases"`
	}
	readJSON(&testing.T{}, "testdata/vectors/opinion_publish.json", &v)
	for _, c := range v.Cases {
		f.Add([]byte(c.Body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := opinion.Decode(b)
		if err != nil {
			if dag.CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if o.Subject.Type == "" || o.AuthorKind == "" {
			t.Fatal("decoded an opinion without subject or author_kind")
		}
	})
}

// TestForeignPrincipal: null declares none, an object must be complete,
// absence is what disclosure_missing is about.
func TestForeignPrincipal(t *testing.T) {
	base := `{"subject":{"type":"spec","id":"x"},"author_kind":"advisor","stance":"neutral","summary":"s","body":"b",` +
		`"disclosure":{"funding":[{"kind":"grant","source":"a foundation"}],"affiliations":["uni"],"ai_assistance":"none","stakes":[],"foreign_principal":%s}}`
	for _, c := range []struct {
		fp   string
		code dag.Code
		has  bool
	}{
		{`null`, "", false},
		{`{"country":"Freedonia","relationship":"funded by its ministry"}`, "", true},
		{`{"country":"Freedonia"}`, dag.CodeSchema, false},
		{`{"country":"Freedonia","relationship":"x","since":"2020"}`, dag.CodeSchema, false},
	} {
		o, err := opinion.Decode([]byte(fmt.Sprintf(base, c.fp)))
		if dag.CodeOf(err) != c.code {
			t.Fatalf("%s: %v, want %q", c.fp, err, c.code)
		}
		if err == nil && (!o.Disclosure.HasForeign || (o.Disclosure.ForeignPrincipal != nil) != c.has) {
			t.Fatalf("%s: decoded %+v", c.fp, o.Disclosure)
		}
	}
}
