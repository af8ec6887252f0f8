package node_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica"
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

// Memory blocks that wait for their lineage count against the replica's
// pending bounds like session entries, charged to the peer that sent them:
// a flood of orphan blocks keeps at most PendingPerSource of one peer's and
// PendingPerSpace in the space, the oldest removed from the store; a pull
// from a peer asks only for the lineage of what that peer sent; a block
// applied leaves the charge sheet; and the bounds hold across a restart
// (the pending blocks the store holds are charged at Open).
func TestMemoryBlocksWithinPendingBounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{4}, 32))
	open := func(perSource, perSpace int) *node.Node {
		l, err := node.Open(ctx, node.Options{Dir: dir, NodeKey: key, Replica: replica.Options{PendingPerSource: perSource, PendingPerSpace: perSpace}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	space, err := node.MemorySpace("flood")
	if err != nil {
		t.Fatal(err)
	}
	ingest := func(l *node.Node, peer string, blocks []mb.Block) {
		t.Helper()
		items := make([]sync.Item, len(blocks))
		for i, b := range blocks {
			items[i] = sync.Item{Data: b.Entry(space).Data}
		}
		res, err := l.Ingest(dag.WithSource(ctx, "peer:"+peer), space, items)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Items {
			if o.Outcome != sync.Pending {
				t.Fatalf("orphan block from %s: %+v, want pending", peer, o)
			}
		}
	}
	flood := func(peer string, n int) []mb.Block {
		out := make([]mb.Block, n)
		for i := range out {
			out[i] = mb.Block{Origin: mb.MustText("agent:" + peer), Subject: mb.MustText("junk"),
				Body:    mb.MustText(peer + " orphan " + strconv.Itoa(i)),
				Lineage: mb.MustParents(randomID())}.Seal()
		}
		return out
	}
	held := func(l *node.Node) map[dag.ID]bool {
		t.Helper()
		ids, err := l.Pending(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		m := map[dag.ID]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}

	l := open(50, 80)
	a := flood("a", 100)
	ingest(l, "a", a[:60])
	ingest(l, "a", a[60:])
	// Per source: a's 50 newest stay, the 50 oldest are gone from the store.
	h := held(l)
	if len(h) != 50 || h[a[49].ID()] || !h[a[50].ID()] || !h[a[99].ID()] {
		t.Fatalf("after 100 orphan blocks from one peer (bound 50 per source): %d held, oldest kept %v, newest kept %v", len(h), h[a[49].ID()], h[a[99].ID()])
	}
	if ps := l.Replica().PendingStats(); ps.Held != 50 || ps.Evicted != 50 {
		t.Fatalf("PendingStats %+v, want 50 held, 50 evicted", ps)
	}
	// A pull from a asks for the lineage of a's 50 blocks; from b, nothing.
	if m, err := l.MissingFrom(ctx, space, "peer:a"); err != nil || len(m) != 50 || !slices.Contains(m, a[99].Lineage.IDs()[0]) {
		t.Fatalf("MissingFrom(a) = %d ids, %v; want the 50 parents of a's blocks", len(m), err)
	}
	if m, err := l.MissingFrom(ctx, space, "peer:b"); err != nil || len(m) != 0 {
		t.Fatalf("MissingFrom(b) = %v, %v; want none", m, err)
	}
	// Per space: b's 40 push the space to 90 > 80: a's 10 oldest go.
	b := flood("b", 40)
	ingest(l, "b", b)
	h = held(l)
	if len(h) != 80 || h[a[59].ID()] || !h[a[60].ID()] || !h[b[0].ID()] {
		t.Fatalf("after b's 40 (bound 80 per space): %d held, a[59] kept %v, a[60] kept %v, b[0] kept %v", len(h), h[a[59].ID()], h[a[60].ID()], h[b[0].ID()])
	}
	// A block whose lineage then arrives is applied and leaves the sheet.
	root := mb.Block{Origin: mb.MustText("agent:ada"), Subject: mb.MustText("tide"), Body: mb.MustText("root"), Lineage: mb.MustParents()}.Seal()
	child := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("child"), Lineage: mb.MustParents(root.ID())}.Seal()
	ingest(l, "b", []mb.Block{child})
	if ps := l.Replica().PendingStats(); ps.Held != 80 {
		t.Fatalf("PendingStats %+v after b's child: want 80 held (b's oldest out of the space bound)", ps)
	}
	if _, err := l.PutBlock(ctx, "flood", root); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Block(ctx, "flood", child.ID(), 0); err != nil {
		t.Fatalf("child after its root: %v", err)
	}
	if ps := l.Replica().PendingStats(); ps.Held != 79 {
		t.Fatalf("PendingStats %+v after the child was applied: want 79 held", ps)
	}
	l.Close()

	// Reopened with a lower bound per space: the store's pending blocks are
	// charged at Open, and the oldest past the bound removed.
	l = open(50, 30)
	defer l.Close()
	if h := held(l); len(h) != 30 {
		t.Fatalf("after reopening with 30 per space: %d pending blocks held", len(h))
	}
	if ps := l.Replica().PendingStats(); ps.Held != 30 {
		t.Fatalf("PendingStats after reopen %+v, want 30 held", ps)
	}
}
