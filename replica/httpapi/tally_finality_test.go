package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestTallyFinalityGoEqualsHTTP: Tally.Finality has one meaning in Go
// (node.Views().Tally) and over HTTP (GET /merge-requests/{id}/tally):
// provisional while the MR is open, even checkpointed; final_advisory,
// with the determination's tally, once an executed determination that a
// checkpoint of this node includes decides it.
func TestTallyFinalityGoEqualsHTTP(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	both := func(when string, want replica.Finality) {
		t.Helper()
		g, err := n.node.Views().Tally(ctx, dag.MustParseID(s.space), s.mr)
		if err != nil {
			t.Fatal(err)
		}
		var h httpapi.TallyAnswer
		if err := n.c.Get(ctx, "/merge-requests/"+s.mr.String()+"/tally", nil, &h); err != nil {
			t.Fatal(err)
		}
		if g.Finality != want || h.Finality != want {
			t.Fatalf("%s: Go %s, HTTP %s; want %s", when, g.Finality, h.Finality, want)
		}
		gj, err1 := dag.Marshal(g.Result)
		hj, err2 := dag.Marshal(h.Result)
		if err1 != nil || err2 != nil || string(gj) != string(hj) {
			t.Fatalf("%s: Go result %s, HTTP %s (%v %v)", when, gj, hj, err1, err2)
		}
	}
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		tx := s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	both("open, checkpointed", replica.Provisional)
	n.submit(t, s, s.b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last))
	both("determined, not checkpointed", replica.Provisional)
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}
	both("determined and checkpointed", replica.FinalAdvisory)
}
