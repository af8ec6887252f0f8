package node_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// A block a peer sends before its lineage is held pending, not re-rooted
// and not dropped: readers are refused it with BLOCK_MISSING_PARENT, sync
// is told which ancestor to fetch, and when the ancestor arrives the block
// is applied and readable. The pending block survives a restart.
func TestPeerBlockWaitsForLineage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{3}, 32))
	open := func() *node.Node {
		l, err := node.Open(ctx, node.Options{Dir: dir, NodeKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	root := mb.Block{Origin: mb.MustText("agent:ada"), Subject: mb.MustText("tide"), Body: mb.MustText("high water 06:10"),
		Lineage: mb.MustParents()}.Seal()
	child := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("confirmed"), Lineage: mb.MustParents(root.ID())}.Seal()
	space, err := node.MemorySpace("harbour")
	if err != nil {
		t.Fatal(err)
	}
	item := func(b mb.Block) sync.Item { return sync.Item{Data: b.Entry(space).Data} }

	l := open()
	res, err := l.Ingest(ctx, space, []sync.Item{item(child)})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Items[0]; o.Outcome != sync.Pending || o.ID != child.ID() {
		t.Fatalf("child before its parent: %+v, want pending", o)
	}
	var me *mb.Error
	if _, err := l.Block(ctx, "harbour", child.ID(), 100); !errors.As(err, &me) || me.Code != mb.CodeBlockMissingParent {
		t.Fatalf("reading a held block: %v, want BLOCK_MISSING_PARENT", err)
	}
	if missing, err := l.Missing(ctx, space); err != nil || !slices.Equal(missing, []dag.ID{root.ID()}) {
		t.Fatalf("Missing = %v, %v; want the root", missing, err)
	}
	// Sent again, it is still pending (not re-judged as new, not quarantined).
	if res, _ := l.Ingest(ctx, space, []sync.Item{item(child)}); res.Items[0].Outcome != sync.Pending {
		t.Fatalf("again: %+v", res.Items[0])
	}
	l.Close()

	l = open() // the pending block is durable
	defer l.Close()
	if missing, err := l.Missing(ctx, space); err != nil || len(missing) != 1 {
		t.Fatalf("after reopen Missing = %v, %v", missing, err)
	}
	if res, err := l.Ingest(ctx, space, []sync.Item{item(root)}); err != nil || res.Items[0].Outcome != sync.Accepted {
		t.Fatalf("root: %+v, %v", res, err)
	}
	got, err := l.Block(ctx, "harbour", child.ID(), 0)
	if err != nil {
		t.Fatalf("child after its parent arrived: %v", err)
	}
	if got.Hash != child.ID() || !got.Accepted.Has(mb.Body) {
		t.Fatalf("child read %+v", got)
	}
	h, err := l.Ancestry(ctx, "harbour", child.ID())
	if err != nil || len(h.Missing) != 0 || len(h.Chain) < 2 {
		t.Fatalf("ancestry %+v, %v", h, err)
	}
}
