package badgerstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/view"
)

// A replica opened over a store where a crash cut a promotion off
// finishes it at Open, judging the promoted ballots as it would have: its
// log and tally match those of a replica that took the same ballots in
// order. (Here, not in replica's tests, because cutting a promotion takes
// this package's test hook.)
func TestReplicaFinishesCutPromotionAtOpen(t *testing.T) {
	ctx := context.Background()
	const n = 300
	b := ht.New(ht.Options{})
	h, mr, bs := b.BallotChain(n)
	var head, ballots []replica.Submission
	for _, tx := range h {
		head = append(head, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
	}
	for _, tx := range bs {
		ballots = append(ballots, replica.Submission{Envelope: tx.Bytes})
	}
	space := b.Session.String()
	nodeKey, _ := dag.SignerFromSeed(slices.Repeat([]byte{9}, 32))

	// The reference: everything in order.
	ref, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if _, err := ref.Ingest(ctx, append(slices.Clone(head), ballots...)); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Ingest(ctx, head); err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(ballots[1:])
	slices.Reverse(rev)
	if _, err := r.Ingest(ctx, rev); err != nil { // all wait for the first ballot
		t.Fatal(err)
	}
	// Promotions of 20 entries per transaction, and a crash before the
	// third.
	badgerstore.SetLimits(st, 20, 1<<20, 20, 1<<20)
	errCut := errors.New("cut")
	badgerstore.SetPromoteHook(st, func(k int) error {
		if k == 2 {
			return errCut
		}
		return nil
	})
	if _, err := r.Ingest(ctx, ballots[:1]); err == nil {
		t.Fatal("the cut Put succeeded")
	}
	r.Close()
	st.Close()

	st, err = badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if u, _ := st.Unfinished(ctx); len(u) != 1 || u[0] != space {
		t.Fatalf("reopened store: unfinished %v, want [%s]", u, space)
	}
	r, err = replica.Open(ctx, replica.Options{Store: st, NodeKey: nodeKey})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if u, _ := st.Unfinished(ctx); len(u) != 0 {
		t.Fatalf("after replica.Open: unfinished %v", u)
	}
	if p, _ := r.Pending(ctx, dag.MustParseID(space)); len(p) != 0 {
		t.Fatalf("%d entries still pending", len(p))
	}
	got, _ := r.Log(ctx, dag.MustParseID(space), 0, 0)
	want, _ := ref.Log(ctx, dag.MustParseID(space), 0, 0)
	if len(got) != len(want) {
		t.Fatalf("log of %d entries, want %d", len(got), len(want))
	}
	tg, err := view.New(r).Tally(ctx, dag.MustParseID(space), mr)
	if err != nil {
		t.Fatal(err)
	}
	tw, _ := view.New(ref).Tally(ctx, dag.MustParseID(space), mr)
	jg, _ := json.Marshal(tg)
	jw, _ := json.Marshal(tw)
	if string(jg) != string(jw) {
		t.Fatalf("tally after the resumed promotion\n%s\nwant\n%s", jg, jw)
	}
}
