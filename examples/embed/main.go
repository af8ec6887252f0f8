// Command embed is the smallest program that embeds a witan node: it
// opens a node on an in-memory store, writes a session and a vote with the
// author API (which fills ids, parents and timestamps, and signs), reads
// the derived state, and signs a checkpoint, after which what it read is
// final_advisory. No network, no HTTP: only replica/node and
// replica/author.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/statute"
)

func main() {
	if _, err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// outcome is what the test checks.
type outcome struct {
	Approve          uint64
	Before, After    replica.Finality
	StateHash        dag.ID
	CheckpointSize   uint64
	CheckpointVerify error
}

func run(ctx context.Context, w io.Writer) (*outcome, error) {
	// 1. The node: a Badger store (InMemory here; Options.Dir for a
	//    directory on disk, which then needs a NodeKey kept beside it).
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		return nil, err
	}
	defer n.Close()

	// 2. Three members (synthetic keys: a simulation, 30k §3), each an
	//    author whose parents default to the node's current heads.
	clock := func() time.Time { return time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC) }
	var members []*author.Author
	var keys []dag.Key
	for range 3 {
		s, err := dag.GenerateSigner(nil)
		if err != nil {
			return nil, err
		}
		a, err := author.New(author.Options{Signer: s, Clock: clock, Heads: n, Groups: n.Replica()})
		if err != nil {
			return nil, err
		}
		members, keys = append(members, a), append(keys, s.Key())
	}
	chair := members[0]

	// 3. The session: a seed statute and a roster of three, with a majority
	//    rule on the root (author.NewSession chooses the rules and attaches
	//    their texts), and an MR that amends nothing (a first vote).
	seed := statute.MustTree(&statute.NodeSpec{NID: "/us", Kind: "root", Children: []statute.NodeSpec{
		{NID: "/us/t1", Kind: "title", Heading: "Title 1", Children: []statute.NodeSpec{
			{NID: "/us/t1/s1", Kind: "section", Heading: "Section 1", Text: "The period is 30 days."}}}}})
	s, err := chair.NewSession(ctx, "embed", seed, keys, true)
	if err != nil {
		return nil, err
	}
	for _, tx := range s.Txs {
		if _, err := submit(ctx, n, tx); err != nil {
			return nil, err
		}
	}
	space := s.Session
	open, err := chair.MROpen(ctx, space, author.MR{Source: house.RootBranch, SourceHead: s.Genesis, TargetHead: s.Genesis,
		Rule: s.Rule, Summary: "A first vote"}, nil) // the electorate: the roster, read from the node (Options.Groups)
	if err != nil {
		return nil, err
	}
	if _, err := submit(ctx, n, open); err != nil {
		return nil, err
	}
	mr := open.Made

	// 4. A ballot from the second member.
	ballot, err := members[1].BallotCast(ctx, space, author.Ballot{MR: mr, Choice: "approve"}, nil)
	if err != nil {
		return nil, err
	}
	rc, err := submit(ctx, n, ballot)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "ballot %s: %s at log index %d\n", short(rc.Tx), rc.Status, *rc.LogIndex)

	// 5. Read the derived state: provisional until a checkpoint.
	r := n.Replica()
	o := &outcome{}
	t, err := n.Views().Tally(ctx, space, mr)
	if err != nil {
		return nil, err
	}
	o.Approve = t.Result.Tally.Approve
	o.Before, _ = r.Finality(ctx, space, rc.Tx)
	_, o.StateHash, err = r.State(ctx, space)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "tally: %d approve of %d, %s\n", t.Result.Tally.Approve, t.Result.Tally.Electorate, t.Finality)
	fmt.Fprintf(w, "state %s\n", short(o.StateHash))

	// 6. Sign a checkpoint: everything in it is now final_advisory (an
	//    eventual node never says final).
	cp, err := r.Checkpoint(ctx, space)
	if err != nil {
		return nil, err
	}
	o.CheckpointSize, o.CheckpointVerify = cp.Size, cp.Verify()
	o.After, _ = r.Finality(ctx, space, rc.Tx)
	fmt.Fprintf(w, "checkpoint size %d root %s\n", cp.Size, short(cp.Root))
	fmt.Fprintf(w, "the ballot was %s, is now %s\n", o.Before, o.After)
	return o, nil
}

// submit hands an envelope to the node and checks its signed receipt.
func submit(ctx context.Context, n *node.Node, tx author.Tx) (*replica.Receipt, error) {
	rc, err := n.Submit(ctx, tx.Bytes, tx.Attach)
	if err != nil {
		return nil, err
	}
	if err := rc.Verify(); err != nil {
		return nil, err
	}
	if err := rc.Err(); err != nil { // a *replica.Rejection, carrying the signed receipt
		return nil, fmt.Errorf("%s: %w", tx.Env.Type, err)
	}
	return rc, nil
}

func short(id dag.ID) string { return id.String()[:15] + "…" }
