package fuzz

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// FuzzRulesContestBodies: any bytes either fail DecodeContestOpen and
// DecodeRankBody with code schema or contest_invalid, or give a body whose
// canonical form decodes to the same body.
func FuzzRulesContestBodies(f *testing.F) {
	x := "sha256:79032b8a85663acddd601fd25371b7cb91f3ee6fbe68215f3cf6d4736bcbeea9"
	y := "sha256:29c5120adae5233a36614587862be0430c91aefe296d9ddffa0e043b71460f6e"
	f.Add([]byte(`{"options":["` + x + `","` + y + `"]}`))
	f.Add([]byte(`{"options":["` + x + `","` + y + `"],"deadline":"2026-09-24T12:00:00Z"}`))
	f.Add([]byte(`{"options":["` + x + `"]}`))
	f.Add([]byte(`{"contest":"` + x + `","ranking":["` + y + `","status_quo"],"supersedes":null}`))
	f.Add([]byte(`{"contest":"` + x + `","ranking":[],"supersedes":"` + y + `"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		o, err := rules.DecodeContestOpen(in)
		if err != nil {
			if c := dag.CodeOf(err); c != dag.CodeSchema && c != dag.CodeContestInvalid {
				t.Fatalf("contest.open: error with code %q: %v", c, err)
			}
		} else {
			out, err := o.MarshalJSON()
			if err != nil || !dag.IsCanonical(out) {
				t.Fatalf("contest.open Marshal: %s %v", out, err)
			}
			o2, err := rules.DecodeContestOpen(out)
			if err != nil || !slices.Equal(o2.Options, o.Options) || !o2.Deadline.Equal(o.Deadline) {
				t.Fatalf("contest.open round trip %s: %+v, %v", out, o2, err)
			}
		}
		r, err := rules.DecodeRankBody(in)
		if err != nil {
			if c := dag.CodeOf(err); c != dag.CodeSchema {
				t.Fatalf("contest.rank: error with code %q: %v", c, err)
			}
			return
		}
		out, err := r.MarshalJSON()
		if err != nil || !dag.IsCanonical(out) {
			t.Fatalf("contest.rank Marshal: %s %v", out, err)
		}
		r2, err := rules.DecodeRankBody(out)
		if err != nil || r2.Contest != r.Contest || r2.Supersedes != r.Supersedes || !slices.Equal(r2.Ranking, r.Ranking) {
			t.Fatalf("contest.rank round trip %s: %+v, %v", out, r2, err)
		}
	})
}
