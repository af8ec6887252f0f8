package opinion_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// BenchmarkDecodePlain is the admission-time decoding of a plain member
// opinion with a stakes disclosure, the common case beside S11's ballots.
func BenchmarkDecodePlain(b *testing.B) {
	body, err := dag.Canonicalize([]byte(`{"subject":{"type":"mr","id":"sha256:2222222222222222222222222222222222222222222222222222222222222222"},` +
		`"author_kind":"member","on_behalf_of":null,"stance":"support","summary":"opinion 12345","body":"Some words.","proposes":[],"replies_to":null,"evidence":[],` +
		`"disclosure":{"funding":[{"kind":"none"}],"affiliations":[],"ai_assistance":"none","foreign_principal":null,` +
		`"stakes":[{"subject":"sha256:2222222222222222222222222222222222222222222222222222222222222222","direction":"yes","venue":"a simulated market","size_band":null}]}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := opinion.DecodeCanonical(body); err != nil {
			b.Fatal(err)
		}
	}
}
