package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestRollCall (D46) over a real listener: each member's effective choice
// on the MR, worked out by hand from the ballots the test signs — a
// superseded ballot gives way to the one that names it, two ballots of one
// member that do not supersede each other void the member, no ballot is
// null —, with the MR's finality and no weights.
func TestRollCall(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	for i := 0; i < 4; i++ {
		n.submit(t, s, s.b.Ballot(ht.Member(i), s.mr, "approve", dag.ID{}, s.last))
	}
	n.submit(t, s, s.b.Ballot(ht.Member(4), s.mr, "reject", dag.ID{}, s.last))
	n.submit(t, s, s.b.Ballot(ht.Member(5), s.mr, "abstain", dag.ID{}, s.last))
	first := s.b.Ballot(ht.Member(6), s.mr, "approve", dag.ID{}, s.last)
	n.submit(t, s, first)
	n.submit(t, s, s.b.Ballot(ht.Member(6), s.mr, "reject", first.ID, s.last)) // supersedes: reject
	n.submit(t, s, s.b.Ballot(ht.Member(7), s.mr, "approve", dag.ID{}, s.last))
	n.submit(t, s, s.b.Ballot(ht.Member(7), s.mr, "reject", dag.ID{}, s.last)) // equivocation: void
	// Members 8 and 9 cast nothing.
	var rc httpapi.RollCallAnswer
	if err := n.c.Get(ctx, "/export/rollcall", nil, &rc); err != nil {
		t.Fatal(err)
	}
	if len(rc.MRs) != 1 || rc.MRs[0] != s.mr || len(rc.Finality) != 1 || rc.Finality[0] != replica.Provisional || rc.Weights != nil || rc.Authoritative || !rc.Simulation {
		t.Fatalf("roll call %+v", rc)
	}
	want := map[int]string{0: "approve", 1: "approve", 2: "approve", 3: "approve", 4: "reject", 5: "abstain", 6: "reject", 7: "void", 8: "", 9: ""}
	if len(rc.Members) != 10 || !slices.IsSortedFunc(rc.Members, func(a, b dag.Key) int { return a.Compare(b) }) {
		t.Fatalf("members %v", rc.Members)
	}
	for m, w := range want {
		i := slices.Index(rc.Members, ht.Member(m).Key())
		if i < 0 {
			t.Fatalf("member %d missing", m)
		}
		got := ""
		if c := rc.Choices[i][0]; c != nil {
			got = *c
		}
		if got != w {
			t.Errorf("member %d: %q, want %q", m, got, w)
		}
	}
	n.problem(t, http.MethodGet, httpapi.Base+"/export/rollcall?session=nope", "", nil, http.StatusBadRequest, dag.CodeSchema)
}
