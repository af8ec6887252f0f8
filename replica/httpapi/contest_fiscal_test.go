package httpapi_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// TestContestFiscalHTTP (D53 with D47): a contest cannot approve a fiscal
// MR that mr.determine could not. Two fiscal options; members 0, 1 and 2
// rank option A above the status quo, 3 and 4 the status quo first, so A
// wins with A = 3 > 5/2. A contest.determine approving A is refused
// estimate_missing until an estimate on A is in its causal past; then it
// is accepted and A merges.
func TestContestFiscalHTTP(t *testing.T) {
	nd := newNode(t)
	cs := newContestSession(t, nd, 5)
	b := cs.b
	var opts []dag.ID
	for i, text := range []string{"$500 is appropriated.", "$700 is appropriated."} {
		name := []string{"fa", "fb"}[i]
		nd.submit(t, cs.session, b.BranchCreate(ht.Member(1), name, "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), cs.last))
		tx, change := b.Append(ht.Member(2), name, b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", text)}, cs.last)
		nd.submit(t, cs.session, tx)
		open, mr := b.Open(ht.Member(1), ht.MR{Source: name, SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: cs.rule, Fiscal: true}, cs.last)
		nd.submit(t, cs.session, open)
		opts = append(opts, mr)
	}
	open, cid := cs.open(t, nd, opts, "")
	nd.submit(t, cs.session, open)
	var ranks []dag.ID
	for m := 0; m < 3; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, opts[0], sq, opts[1]))
	}
	for m := 3; m < 5; m++ {
		ranks = append(ranks, cs.rank(t, nd, cid, m, sq))
	}
	refusedWith(t, nd, cs.determine(cid, ranks, "approved", opts[0]), dag.CodeEstimateMissing)

	var byYear []any
	for y := 2026; y < 2036; y++ {
		byYear = append(byYear, map[string]any{"year": y, "outlays": "500"})
	}
	est := b.Opinion(ht.Member(3), ht.OpinionBody("member", "mr", opts[0].String(), map[string]any{"estimate": map[string]any{
		"mr": opts[0].String(), "baseline": "current law", "by_year": byYear, "assumptions": "simulated"}}), cs.last)
	nd.submit(t, cs.session, est)
	nd.submit(t, cs.session, cs.determine(cid, ranks, "approved", opts[0]))
	if st, _ := mrStatus(t, nd, opts[0]); st != house.StatusMerged {
		t.Fatalf("option A: %s, want merged", st)
	}
}
