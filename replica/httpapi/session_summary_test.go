package httpapi_test

import (
	"context"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestSessionSummaryAndState: GET /sessions/{id} answers the session's
// summary (newSession's three groups by id, its two branches, one MR and
// seven entries, counted by hand) with the hash of the whole state, and
// the paths of its parts; GET /sessions/{id}/state answers the whole
// state with the same hash. Both follow a new entry: the hash is derived
// again for the new version of the state.
func TestSessionSummaryAndState(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t)
	check := func(entries, ballots int) dag.ID {
		t.Helper()
		var sa httpapi.SessionAnswer
		if err := n.c.Get(ctx, "/sessions/"+s.space, nil, &sa); err != nil {
			t.Fatal(err)
		}
		sum := sa.State
		if sum == nil || sum.Entries != entries || sum.Ballots != ballots || !slices.Equal(sum.Groups, []string{"drafters", "registrar", "roster"}) ||
			sum.Branches != 2 || sum.MRs != 1 || sum.Contests != 0 || !sum.Simulation || !sa.Simulation {
			t.Fatalf("summary %+v", sa)
		}
		if sa.Parts.State != httpapi.Base+"/sessions/"+s.space+"/state" || sa.Parts.MergeRequests != httpapi.Base+"/merge-requests?session="+s.space {
			t.Fatalf("parts %+v", sa.Parts)
		}
		var st httpapi.StateAnswer
		if err := n.c.Get(ctx, "/sessions/"+s.space+"/state", nil, &st); err != nil {
			t.Fatal(err)
		}
		if st.State == nil || st.State.Entries != entries || len(st.State.MRs) != 1 || len(st.State.Keys) != sum.Keys || len(st.State.Groups) != 3 || !st.Simulation {
			t.Fatalf("state %+v", st)
		}
		_, want, err := n.node.Replica().State(ctx, dag.MustParseID(s.space))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := st.State.Hash(); err != nil || got != want || st.StateHash != want || sa.StateHash != want {
			t.Fatalf("state hash: summary %s, state %s, its bytes %s, replica %s", sa.StateHash, st.StateHash, got, want)
		}
		if st.Finality != sa.Finality {
			t.Fatalf("finality: summary %s, state %s", sa.Finality, st.Finality)
		}
		return want
	}
	h1 := check(7, 0)
	n.submit(t, s, s.b.Ballot(ht.Member(0), s.mr, "approve", dag.ID{}, s.last))
	n.submit(t, s, s.b.Ballot(ht.Member(1), s.mr, "approve", dag.ID{}, s.last))
	if h2 := check(9, 2); h2 == h1 {
		t.Fatalf("two ballots later the state hash is still %s", h1)
	}
}
