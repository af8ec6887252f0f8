package replica_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestRestartChangesNothing: two replicas take the same random history in
// the same random batches (some entries first without their objects,
// forged copies, duplicates) and sign checkpoints at the same moments; one
// is restarted (closed and opened again on its store) at random points.
// After every step both answer the same: outcomes, log, checkpoints,
// finality of every logged entry, state hash, quarantine, pending. So
// nothing the replica knows lives in memory only.
func TestRestartChangesNothing(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		space := hs.B.Session
		var order []replica.Submission
		for _, tx := range hs.All {
			order = append(order, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(hs.All)-1), 0, 2, rapid.ID[int]).Draw(rt, "forge") {
			env := *hs.All[i].Env
			env.Sig = slices.Clone(env.Sig)
			env.Sig[9] ^= 0x20
			order = append(order, replica.Submission{Envelope: env.Canonical(), Attachments: hs.All[i].Attach})
		}
		order = rapid.Permutation(order).Draw(rt, "order")
		// Some entries arrive without their objects, which come later:
		// with a copy of the entry, or only attached to a copy of another
		// entry (then only the replica's index of held entries, rebuilt
		// after a restart, brings the entry back to be judged).
		for _, d := range rapid.SliceOfN(rapid.IntRange(0, len(order)-1), 0, 4).Draw(rt, "strip") {
			if len(order[d].Attachments) == 0 {
				continue
			}
			carrier := order[d]
			if rapid.Bool().Draw(rt, "elsewhere") {
				other := order[rapid.IntRange(0, len(order)-1).Draw(rt, "carrier")]
				carrier = replica.Submission{Envelope: other.Envelope, Attachments: append(slices.Clone(other.Attachments), order[d].Attachments...)}
			}
			order = append(order, carrier)
			order[d] = replica.Submission{Envelope: order[d].Envelope}
		}
		c := &clock{t: time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)}
		open := func(st dag.Store) *replica.Replica {
			r, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey(t, 0), Clock: c.now})
			if err != nil {
				rt.Fatal(err)
			}
			return r
		}
		stA, stB := dag.NewMemStore(), dag.NewMemStore()
		a, b := open(stA), open(stB)
		defer func() { a.Close(); b.Close() }()
		for step := 0; len(order) > 0; step++ {
			k := rapid.IntRange(1, min(len(order), 6)).Draw(rt, "batch")
			oa, errA := a.Ingest(ctx, order[:k])
			ob, errB := b.Ingest(ctx, order[:k])
			if errA != nil || errB != nil {
				rt.Fatalf("step %d: %v / %v", step, errA, errB)
			}
			if fmt.Sprint(oa) != fmt.Sprint(ob) {
				rt.Fatalf("step %d: outcomes\n%v\n%v", step, oa, ob)
			}
			order = order[k:]
			c.advance(time.Minute)
			if rapid.Bool().Draw(rt, "checkpoint") {
				ca, errA := a.Checkpoint(ctx, space)
				cb, errB := b.Checkpoint(ctx, space)
				// A session neither holds yet (its session.create not
				// applied, or forged) is not checkpointed, by both alike.
				unheld := errors.Is(errA, replica.ErrUnknownSpace) && errors.Is(errB, replica.ErrUnknownSpace)
				if !unheld && (errA != nil || errB != nil || ca.Root != cb.Root || ca.Size != cb.Size) {
					rt.Fatalf("step %d: checkpoints %+v %v / %+v %v", step, ca, errA, cb, errB)
				}
			}
			if rapid.Bool().Draw(rt, "restart") {
				b.Close()
				b = open(stB)
			}
			if sa, sb := restartView(rt, a, space), restartView(rt, b, space); sa != sb {
				rt.Fatalf("step %d: the restarted replica differs:\n%s\nthe other:\n%s", step, sb, sa)
			}
		}
	})
}

// restartView is everything a replica answers about a space, as text.
func restartView(rt *rapid.T, r *replica.Replica, space dag.ID) string {
	ctx := context.Background()
	var b strings.Builder
	log, err := r.Log(ctx, space, 0, 0)
	if err != nil {
		rt.Fatal(err)
	}
	for _, c := range r.Checkpoints(space) {
		j, _ := c.MarshalJSON()
		fmt.Fprintf(&b, "checkpoint %s\n", j)
	}
	for _, id := range log {
		f, err := r.Finality(ctx, space, id)
		fmt.Fprintf(&b, "%s %s %v\n", id, f, err)
	}
	if _, h, err := r.State(ctx, space); err == nil {
		fmt.Fprintf(&b, "state %s\n", h)
	}
	// The quarantine is a bounded record in memory, not stored
	// (docs/security.md): a restart forgets it, and judges a refused
	// entry again, with the same result, if it comes again.
	p, _ := r.Pending(ctx, space)
	fmt.Fprintf(&b, "pending %v\n", p)
	return b.String()
}
