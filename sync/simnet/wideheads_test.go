package simnet_test

import (
	"context"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/simnet"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestWideHeadsConverge: a space with more heads than an announcement
// carries (sync.MaxAnnouncedHeads), where the one entry a replica lacks
// is not among the heads announced, still converges: a full
// announcement whose heads differ from the receiver's makes it pull.
func TestWideHeadsConverge(t *testing.T) {
	ctx := context.Background()
	author := synctest.NewAuthor(1)
	space, root, rootID := author.Session("wide")
	a, b := synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{})
	for _, r := range []*synctest.Replica{a, b} {
		if _, err := r.Submit(ctx, root); err != nil {
			t.Fatal(err)
		}
	}
	// 80 siblings on the root: 80 heads. b gets all but the one whose id
	// sorts last, beyond the first MaxAnnouncedHeads.
	var ids []dag.ID
	datas := map[dag.ID][]byte{}
	for i := range 80 {
		data, id := author.Entry(space, []dag.ID{rootID}, i)
		ids = append(ids, id)
		datas[id] = data
		if _, err := a.Submit(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(ids, dag.ID.Compare)
	for _, id := range ids[:len(ids)-1] {
		if _, err := b.Submit(ctx, datas[id]); err != nil {
			t.Fatal(err)
		}
	}
	if sync.MaxAnnouncedHeads >= len(ids)-1 {
		t.Fatal("the test needs more heads than an announcement carries")
	}
	for _, cfg := range []simnet.Config{{Seed: 1}, {Seed: 1, Gossip: &simnet.Gossip{}}} {
		n := simnet.New(cfg)
		n.Add("a", a, sync.Options{})
		n.Add("b", b, sync.Options{})
		if _, err := n.RunUntilConverged(ctx, space, 400); err != nil {
			t.Fatalf("gossip %v: %v (%+v)", cfg.Gossip != nil, err, n.Stats())
		}
	}
}
