package author_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
)

// voteSetup is a NewSession of three authors on a real node, its
// envelopes submitted; groups, when true, lets the authors read the
// node's groups (Options.Groups).
type voteSetup struct {
	n      *node.Node
	as     []*author.Author
	keys   []dag.Key
	s      author.NewSession
	submit func(author.Tx, error) author.Tx
}

func newVote(t *testing.T, groups bool) *voteSetup {
	t.Helper()
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	t0 := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
	tick := func() time.Time { t0 = t0.Add(time.Second); return t0 }
	v := &voteSetup{n: n}
	for i := range 3 {
		o := author.Options{Signer: signer(t, byte(40+i)), Clock: tick, Heads: n}
		if groups {
			o.Groups = n.Replica()
		}
		a, err := author.New(o)
		if err != nil {
			t.Fatal(err)
		}
		v.as, v.keys = append(v.as, a), append(v.keys, a.Key())
	}
	seed := statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{
		{NID: "/us/t1", Kind: "title", Heading: "T", Children: []statute.NodeSpec{{NID: "/us/t1/s1", Kind: "section", Heading: "S", Text: "x"}}}}})
	if v.s, err = v.as[0].NewSession(ctx, "a class", seed, v.keys, true); err != nil {
		t.Fatal(err)
	}
	v.submit = func(tx author.Tx, err error) author.Tx {
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
	for _, tx := range v.s.Txs {
		v.submit(tx, nil)
	}
	return v
}

// TestNewSessionToAVote: NewSession's envelopes are accepted by a real
// node in order, and an MR on the root under its Rule, a ballot and the
// tally follow with nothing else declared.
func TestNewSessionToAVote(t *testing.T) {
	ctx := context.Background()
	v := newVote(t, false)
	s := v.s
	if !s.Genesis.Valid() || s.Session != s.Txs[0].Made {
		t.Fatalf("genesis %s, session %s of %s", s.Genesis, s.Session, s.Txs[0].Made)
	}
	open := v.submit(v.as[1].MROpen(ctx, s.Session, author.MR{Source: house.RootBranch, SourceHead: s.Genesis, TargetHead: s.Genesis,
		Members: v.keys, Rule: s.Rule, Summary: "a first vote"}, nil))
	v.submit(v.as[2].BallotCast(ctx, s.Session, author.Ballot{MR: open.Made, Choice: "approve"}, nil))
	tl, err := v.n.Views().Tally(ctx, s.Session, open.Made)
	if err != nil || tl.Result.Tally.Approve != 1 || tl.Result.Tally.Electorate != 3 {
		t.Fatalf("tally %+v, %v: want 1 approve of 3", tl.Result.Tally, err)
	}
}

// TestMROpenFillsElectorate: with Options.Groups, an MR that lists no
// members gets the roster's three from the node: the same MR id as the
// one listing them by hand, accepted, tallied over 3. A group the node
// does not know is an error naming it, which errors.Is finds
// dag.ErrNotFound in.
func TestMROpenFillsElectorate(t *testing.T) {
	ctx := context.Background()
	v := newVote(t, true)
	s := v.s
	mr := author.MR{Source: house.RootBranch, SourceHead: s.Genesis, TargetHead: s.Genesis, Rule: s.Rule, Summary: "filled"}
	byHand := mr
	byHand.Members = []dag.Key{v.keys[2], v.keys[0], v.keys[1]} // the snapshot does not depend on the order
	_, want, err := author.MRBody(s.Session, byHand)
	if err != nil {
		t.Fatal(err)
	}
	open := v.submit(v.as[1].MROpen(ctx, s.Session, mr, nil))
	if open.Made != want {
		t.Fatalf("MR %s, want %s (the roster listed by hand)", open.Made, want)
	}
	v.submit(v.as[2].BallotCast(ctx, s.Session, author.Ballot{MR: open.Made, Choice: "approve"}, nil))
	tl, err := v.n.Views().Tally(ctx, s.Session, open.Made)
	if err != nil || tl.Result.Tally.Electorate != 3 {
		t.Fatalf("tally %+v, %v: want an electorate of 3", tl.Result.Tally, err)
	}
	mr.Group = "drafters"
	if _, err := v.as[1].MROpen(ctx, s.Session, mr, nil); !errors.Is(err, dag.ErrNotFound) || !strings.Contains(err.Error(), "drafters") {
		t.Fatalf("an MR on a group the node does not hold: %v", err)
	}
}
