// Command embed is the smallest program that embeds a witan replica: it
// opens a replica on an in-memory store, submits a session and a vote,
// reads the derived state, and signs a checkpoint, after which what it
// read is final_advisory. No network, no HTTP.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
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
	// 1. A node key signs receipts and checkpoints; the store is Badger
	//    (InMemory here; Options.Dir for a directory on disk).
	nodeKey, err := dag.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey})
	if err != nil {
		return nil, err
	}
	defer r.Close()

	// 2. Envelopes: a simulated session with a roster of three and an
	//    open MR, made by housetest's builder (synthetic keys, 30k §3).
	b := ht.New(ht.Options{Simulation: true, Label: "embed"})
	space := b.Session.String()
	setup := []ht.Tx{b.Create}
	setup = append(setup, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), b.Create.ID))
	setup = append(setup, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), setup[1].ID))
	open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 3), Rule: ht.Majority(house.MinRootNotice), Summary: "A first vote"}, setup[2].ID)
	setup = append(setup, open)
	for _, tx := range setup {
		if _, err := submit(ctx, r, tx.Bytes, tx.Attach); err != nil {
			return nil, err
		}
	}

	// 3. A ballot written by hand: the envelope is the only write format.
	body, err := dag.Marshal(map[string]any{"mr": mr, "choice": "approve", "supersedes": nil})
	if err != nil {
		return nil, err
	}
	env := &dag.Envelope{Type: dag.TxBallotCast, Session: b.Session, Parents: []dag.ID{open.ID}, Body: body, TS: "2026-09-21T12:00:00Z"}
	data, _, err := env.Seal(ht.Member(1))
	if err != nil {
		return nil, err
	}
	rc, err := submit(ctx, r, data, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "ballot %s: %s at log index %d\n", short(rc.Tx), rc.Status, *rc.LogIndex)

	// 4. Read the derived state: provisional until a checkpoint.
	o := &outcome{}
	t, err := r.Tally(ctx, space, mr)
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

	// 5. Sign a checkpoint: everything in it is now final_advisory (an
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

// submit hands an envelope to the replica and checks its signed receipt.
func submit(ctx context.Context, r *replica.Replica, env []byte, attach [][]byte) (*replica.Receipt, error) {
	rc, err := r.Submit(ctx, env, attach)
	if err != nil {
		return nil, err
	}
	if err := rc.Verify(); err != nil {
		return nil, err
	}
	if rc.Status != "accepted" {
		return nil, fmt.Errorf("refused: %v", rc.Errors)
	}
	return rc, nil
}

func short(id dag.ID) string { return id.String()[:15] + "…" }
