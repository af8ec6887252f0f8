package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestHistory (D44) over a real listener: before the merge a node has no
// history; after the amendment merges into the root, /history of the
// amended section lists that MR with the proposer's summary labelled as
// the proposer's words, empty opinion lists and authoritative false.
func TestHistory(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	var h httpapi.HistoryAnswer
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.History) != 0 || h.Authoritative || h.NID != "/us/t1/s1" {
		t.Fatalf("history before any merge %+v", h)
	}
	var ballots []dag.ID
	for i := 0; i < 7; i++ {
		tx := s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last)
		n.submit(t, s, tx)
		ballots = append(ballots, tx.ID)
	}
	if _, err := n.node.Replica().Checkpoint(ctx, s.space); err != nil {
		t.Fatal(err)
	}
	det := s.b.Determine(ht.Member(3), s.mr, ballots, "approved", s.last)
	n.submit(t, s, det)
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.History) != 1 || h.Finality != replica.Provisional {
		t.Fatalf("history after the merge, before its checkpoint %+v", h)
	}
	n.clk.t = n.clk.t.Add(73 * time.Hour)
	if _, err := n.node.Replica().Checkpoint(ctx, s.space); err != nil {
		t.Fatal(err)
	}
	n.getMap(t, "/history/us/t1/s1", nil)
	if err := n.c.Get(ctx, "/history/us/t1/s1", nil, &h); err != nil {
		t.Fatal(err)
	}
	it := h.History[0]
	if len(h.History) != 1 || it.MR != s.mr || it.Determination != det.ID || it.ProposerSummary.Text != "Extends the period to 45 days" ||
		it.ProposerSummary.Label == "" || len(it.MemberOpinions)+len(it.GroupPositions)+len(it.OtherOpinions) != 0 ||
		it.MemberOpinions == nil || h.Finality != replica.FinalAdvisory || h.Authoritative {
		t.Fatalf("history %+v", h)
	}
	n.problem(t, http.MethodGet, httpapi.Base+"/history/us/t9/nope", "", nil, http.StatusNotFound, httpapi.CodeNotFound)
}
