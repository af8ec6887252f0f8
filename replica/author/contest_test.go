package author_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/rules"
)

// The contest family's bodies, written out by hand from 30k §7's shapes,
// and read back by the rules' and the house's own decoders.
func TestContestFamily(t *testing.T) {
	ctx := context.Background()
	a, err := author.New(author.Options{Signer: signer(t, 5), Clock: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	at := []dag.ID{parentA}
	m1, m2 := dag.Sum([]byte("mr 1")), dag.Sum([]byte("mr 2"))
	deadline := time.Date(2026, 10, 1, 12, 0, 0, 0, time.FixedZone("", 3600))

	open, err := a.ContestOpen(ctx, session, author.Contest{Options: []dag.ID{m1, m2}, Deadline: deadline}, at)
	if err != nil {
		t.Fatal(err)
	}
	// 12:00 at UTC+1 is 11:00Z; members sorted: deadline before options.
	if want := `{"deadline":"2026-10-01T11:00:00Z","options":["` + m1.String() + `","` + m2.String() + `"]}`; string(open.Env.Body) != want {
		t.Errorf("contest.open body %s, want %s", open.Env.Body, want)
	}
	if open.Made != open.ID || open.Env.Type != dag.TxContestOpen {
		t.Errorf("contest.open: made %s, id %s, type %s", open.Made, open.ID, open.Env.Type)
	}
	if ob, err := rules.DecodeContestOpen(open.Env.Body); err != nil || !ob.Deadline.Equal(deadline) || len(ob.Options) != 2 {
		t.Errorf("decoded contest.open %+v, %v", ob, err)
	}

	rank, err := a.ContestRank(ctx, session, author.Ranking{Contest: open.ID, Order: []dag.ID{m2, {}, m1}}, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"contest":"` + open.ID.String() + `","ranking":["` + m2.String() + `","status_quo","` + m1.String() + `"],"supersedes":null}`; string(rank.Env.Body) != want {
		t.Errorf("contest.rank body %s, want %s", rank.Env.Body, want)
	}
	if rb, err := rules.DecodeRankBody(rank.Env.Body); err != nil || !slices.Equal(rb.Ranking, []dag.ID{m2, {}, m1}) {
		t.Errorf("decoded contest.rank %+v, %v", rb, err)
	}

	for _, c := range []struct {
		d    author.ContestDetermination
		want string
	}{
		{author.ContestDetermination{Contest: open.ID, Rankings: []dag.ID{rank.ID}, Outcome: "approved", Winner: m2},
			`{"contest":"` + open.ID.String() + `","outcome":"approved","rankings":["` + rank.ID.String() + `"],"winner":"` + m2.String() + `"}`},
		{author.ContestDetermination{Contest: open.ID, Outcome: "rejected", StatusQuo: true},
			`{"contest":"` + open.ID.String() + `","outcome":"rejected","rankings":[],"winner":"status_quo"}`},
		{author.ContestDetermination{Contest: open.ID, Outcome: "pending"},
			`{"contest":"` + open.ID.String() + `","outcome":"pending","rankings":[],"winner":null}`},
	} {
		tx, err := a.ContestDetermine(ctx, session, c.d, at)
		if err != nil {
			t.Fatal(err)
		}
		if string(tx.Env.Body) != c.want {
			t.Errorf("contest.determine body %s, want %s", tx.Env.Body, c.want)
		}
		if _, err := house.DecodeContestDetermination(tx.Env.Body); err != nil {
			t.Errorf("the house refuses %s: %v", tx.Env.Body, err)
		}
	}

	// A ballot answering an emergency MR, with a weight.
	w := uint64(3)
	b, err := a.BallotCast(ctx, session, author.Ballot{MR: m1, Choice: "approve", Emergency: "yes", Weight: &w}, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"choice":"approve","emergency":"yes","mr":"` + m1.String() + `","supersedes":null,"weight":3}`; string(b.Env.Body) != want {
		t.Errorf("ballot body %s, want %s", b.Env.Body, want)
	}
	if bb, err := rules.DecodeBallotBody(b.Env.Body); err != nil || bb.Emergency != rules.EmergencyYes || !bb.HasWeight || bb.Weight != 3 {
		t.Errorf("decoded ballot %+v, %v", bb, err)
	}
}
