package replica_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestReplicaConvergence: random sessions (groups, MRs, ballots,
// determinations, unauthorised entries, forged signatures) delivered to
// several replicas on Badger, in random orders and batches with
// duplicates, give identical state hashes and identical quarantines.
func TestReplicaConvergence(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		subs := make([]replica.Submission, 0, len(hs.All))
		for _, tx := range hs.All {
			subs = append(subs, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		// Forged copies: one flipped signature bit each.
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(hs.All)-1), 0, 3, rapid.ID[int]).Draw(rt, "forge") {
			env := *hs.All[i].Env
			env.Sig = slices.Clone(env.Sig)
			env.Sig[5] ^= 0x10
			subs = append(subs, replica.Submission{Envelope: env.Canonical(), Attachments: hs.All[i].Attach})
		}
		space := hs.B.Session
		var wantHash dag.ID
		var wantQ string
		for n := 0; n < 3; n++ {
			order := rapid.Permutation(subs).Draw(rt, fmt.Sprintf("order%d", n))
			for _, d := range rapid.SliceOfN(rapid.IntRange(0, len(order)-1), 0, 4).Draw(rt, fmt.Sprintf("dups%d", n)) {
				order = append(order, order[d])
			}
			// Some entries first arrive without their objects, which come
			// later with a copy of the entry.
			for _, d := range rapid.SliceOfN(rapid.IntRange(0, len(subs)-1), 0, 3).Draw(rt, fmt.Sprintf("strip%d", n)) {
				if len(order[d].Attachments) > 0 {
					order = append(order, order[d])
					order[d] = replica.Submission{Envelope: order[d].Envelope}
				}
			}
			r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(t, n)})
			if err != nil {
				rt.Fatal(err)
			}
			for len(order) > 0 {
				k := rapid.IntRange(1, len(order)).Draw(rt, "batch")
				if _, err := r.Ingest(ctx, order[:k]); err != nil {
					rt.Fatal(err)
				}
				order = order[k:]
			}
			if p, _ := r.Pending(ctx, space); len(p) > 0 {
				rt.Fatalf("replica %d: pending %v", n, p)
			}
			_, h, err := r.State(ctx, space)
			if err != nil {
				rt.Fatal(err)
			}
			q := fmt.Sprint(quarantineCodes(r.Quarantine(space.String())))
			r.Close()
			if n == 0 {
				wantHash, wantQ = h, q
				continue
			}
			if h != wantHash {
				rt.Fatalf("replica %d state hash %s, want %s", n, h, wantHash)
			}
			if q != wantQ {
				rt.Fatalf("replica %d quarantine %s, want %s", n, q, wantQ)
			}
		}
	})
}

func quarantineCodes(q []house.Rejection) []string {
	out := make([]string, len(q))
	for i, x := range q {
		out[i] = x.ID.String() + "=" + string(x.Code)
	}
	return out
}
