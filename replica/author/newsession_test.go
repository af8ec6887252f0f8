package author_test

import (
	"context"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
)

// TestNewSessionToAVote: NewSession's envelopes are accepted by a real
// node in order, and an MR on the root under its Rule, a ballot and the
// tally follow with nothing else declared.
func TestNewSessionToAVote(t *testing.T) {
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	t0 := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
	tick := func() time.Time { t0 = t0.Add(time.Second); return t0 }
	var as []*author.Author
	var keys []dag.Key
	for i := range 3 {
		a, err := author.New(author.Options{Signer: signer(t, byte(40+i)), Clock: tick, Heads: n})
		if err != nil {
			t.Fatal(err)
		}
		as, keys = append(as, a), append(keys, a.Key())
	}
	seed := statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{
		{NID: "/us/t1", Kind: "title", Heading: "T", Children: []statute.NodeSpec{{NID: "/us/t1/s1", Kind: "section", Heading: "S", Text: "x"}}}}})
	s, err := as[0].NewSession(ctx, "a class", seed, keys, true)
	if err != nil {
		t.Fatal(err)
	}
	submit := func(tx author.Tx, err error) author.Tx {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := n.Submit(ctx, tx.Bytes, tx.Attach)
		if err == nil {
			err = rc.Err()
		}
		if err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		return tx
	}
	for _, tx := range s.Txs {
		submit(tx, nil)
	}
	if !s.Genesis.Valid() || s.Session != s.Txs[0].Made {
		t.Fatalf("genesis %s, session %s of %s", s.Genesis, s.Session, s.Txs[0].Made)
	}
	open := submit(as[1].MROpen(ctx, s.Session, author.MR{Source: house.RootBranch, SourceHead: s.Genesis, TargetHead: s.Genesis,
		Members: keys, Rule: s.Rule, Summary: "a first vote"}, nil))
	submit(as[2].BallotCast(ctx, s.Session, author.Ballot{MR: open.Made, Choice: "approve"}, nil))
	tl, err := n.Views().Tally(ctx, s.Session.String(), open.Made)
	if err != nil || tl.Result.Tally.Approve != 1 || tl.Result.Tally.Electorate != 3 {
		t.Fatalf("tally %+v, %v: want 1 approve of 3", tl.Result.Tally, err)
	}
}
