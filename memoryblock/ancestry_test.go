package memoryblock_test

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

// chain builds n blocks, each the parent of the next, and returns them with
// their ids (root first).
func chain(t testing.TB, n int) (mb.Map, []dag.ID) {
	t.Helper()
	m := make(mb.Map, n)
	ids := make([]dag.ID, 0, n)
	var lin mb.Parents = mb.MustParents()
	for i := 0; i < n; i++ {
		v, _ := mb.Int(int64(i))
		b := mb.Block{Origin: mb.MustText("agent:ada"), Body: v, Lineage: lin}.Seal()
		id := m.Add(b)
		ids = append(ids, id)
		lin = mb.MustParents(id)
	}
	return m, ids
}

func reversed(ids []dag.ID) []dag.ID {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func TestAncestryChain(t *testing.T) {
	m, ids := chain(t, 5)
	h := mb.Ancestry(ids[4], m)
	if !slices.Equal(h.Chain, reversed(ids)) || len(h.Missing) != 0 || h.Cycle || h.Depth != 4 || h.Err() != nil {
		t.Fatalf("history %+v", h)
	}
	if h := mb.Ancestry(ids[0], m); !slices.Equal(h.Chain, ids[:1]) || h.Depth != 0 || h.Missing == nil {
		t.Fatalf("root history %+v", h)
	}
	// a hole: drop ids[2]
	delete(m, ids[2])
	h = mb.Ancestry(ids[4], m)
	if !slices.Equal(h.Chain, []dag.ID{ids[4], ids[3]}) || !slices.Equal(h.Missing, []dag.ID{ids[2]}) || h.Depth != 1 {
		t.Fatalf("history with a hole %+v", h)
	}
	// the start itself absent
	absent := dag.Sum([]byte("x"))
	h = mb.Ancestry(absent, m)
	if len(h.Chain) != 0 || h.Chain == nil || !slices.Equal(h.Missing, []dag.ID{absent}) || h.Cycle {
		t.Fatalf("absent start %+v", h)
	}
}

func TestAncestryDiamond(t *testing.T) {
	m := mb.Map{}
	root := m.Add(mb.Block{Subject: mb.MustText("root"), Lineage: mb.MustParents()}.Seal())
	left := m.Add(mb.Block{Subject: mb.MustText("left"), Lineage: mb.MustParents(root)}.Seal())
	right := m.Add(mb.Block{Subject: mb.MustText("right"), Lineage: mb.MustParents(root)}.Seal())
	gone := dag.Sum([]byte("gone"))
	mid := m.Add(mb.Block{Subject: mb.MustText("mid"), Lineage: mb.MustParents(left, gone)}.Seal())
	top := m.Add(mb.Block{Subject: mb.MustText("top"), Lineage: mb.MustParents(mid, right, gone)}.Seal())
	h := mb.Ancestry(top, m)
	want := []dag.ID{top, mid, right, left, root}
	if !slices.Equal(h.Chain, want) || !slices.Equal(h.Missing, []dag.ID{gone}) || h.Cycle || h.Depth != 2 {
		t.Fatalf("history %+v\nwant chain %v", h, want)
	}
	d := mb.IsDescendantOf(top, root, m)
	if !d.Descendant || !slices.Equal(d.Chain, []dag.ID{top, right, root}) {
		t.Fatalf("descent %+v", d)
	}
	if d := mb.IsDescendantOf(left, right, m); d.Descendant || len(d.Chain) != 0 || d.Chain == nil || d.Checked != 2 {
		t.Fatalf("siblings %+v", d)
	}
	if d := mb.IsDescendantOf(top, top, m); d.Descendant {
		t.Fatalf("a block is its own descendant: %+v", d)
	}
	if d := mb.IsDescendantOf(root, top, m); d.Descendant {
		t.Fatalf("ancestor descends from descendant: %+v", d)
	}
	// the ancestor need not be held: naming its hash is enough
	if d := mb.IsDescendantOf(mid, gone, m); !d.Descendant || !slices.Equal(d.Chain, []dag.ID{mid, gone}) || d.Checked != 1 {
		t.Fatalf("unheld ancestor %+v", d)
	}
}

// A store whose keys disagree with its blocks can hold a cycle. The walk
// reports it, names the code, and terminates.
func TestAncestryCycleInLyingStore(t *testing.T) {
	b := dag.Sum([]byte("key the store lies about"))
	a := mb.Block{Subject: mb.MustText("a"), Lineage: mb.MustParents(b)}.Seal()
	aID := a.ID()
	c := mb.Block{Subject: mb.MustText("c"), Lineage: mb.MustParents(aID)}.Seal()
	m := mb.Map{aID: a, b: c} // c is stored under b: the key disagrees with the block
	h := mb.Ancestry(aID, m)
	if !h.Cycle || h.CycleAt != aID || !slices.Equal(h.Chain, []dag.ID{aID, b}) || len(h.Missing) != 0 {
		t.Fatalf("history %+v", h)
	}
	if mb.CodeOf(h.Err()) != mb.CodeBlockCycle {
		t.Fatalf("Err() = %v", h.Err())
	}
	if d := mb.IsDescendantOf(aID, dag.Sum([]byte("elsewhere")), m); d.Descendant || d.Checked != 2 {
		t.Fatalf("descent in a cycle %+v", d)
	}
	// a block that names itself, stored under the name it gives
	self := dag.Sum([]byte("self"))
	loop := mb.Map{self: mb.Block{Lineage: mb.MustParents(self)}}
	if h := mb.Ancestry(self, loop); !h.Cycle || h.CycleAt != self || len(h.Chain) != 1 {
		t.Fatalf("self loop %+v", h)
	}
	// a cycle hanging off a honest chain is found too, and a diamond is not one
	m2, ids := chain(t, 3)
	// top -> b -> {ids[2] -> ids[1] -> ids[0], ids[0]}, and ids[0] -> top
	top := dag.Sum([]byte("top"))
	m2[top] = mb.Block{Lineage: mb.MustParents(b)}
	m2[b] = mb.Block{Lineage: mb.MustParents(ids[2], ids[0])}
	m2[ids[0]] = mb.Block{Lineage: mb.MustParents(top)}
	if h := mb.Ancestry(top, m2); !h.Cycle {
		t.Fatalf("cycle through a chain not found: %+v", h)
	}
}

func TestOverlay(t *testing.T) {
	m, ids := chain(t, 3)
	incoming := mb.Block{Subject: mb.MustText("echo"), Lineage: mb.MustParents(ids[2])}.Seal()
	if _, ok := m.Block(incoming.ID()); ok {
		t.Fatal("incoming already held")
	}
	src := mb.Overlay(m, incoming)
	d := mb.IsDescendantOf(incoming.ID(), ids[0], src)
	if !d.Descendant || !slices.Equal(d.Chain, []dag.ID{incoming.ID(), ids[2], ids[1], ids[0]}) {
		t.Fatalf("echo not seen: %+v", d)
	}
	if _, ok := mb.Overlay(nil, incoming).Block(ids[0]); ok {
		t.Fatal("nil under holds blocks")
	}
}

// Neither walk recurses: a 100,000-block chain is walked in full.
func TestAncestryDeepChain(t *testing.T) {
	n := 100_000
	m, ids := chain(t, n)
	top := ids[n-1]
	h := mb.Ancestry(top, m)
	if len(h.Chain) != n || h.Depth != n-1 || len(h.Missing) != 0 || h.Cycle || h.Chain[n-1] != ids[0] {
		t.Fatalf("chain %d depth %d missing %d cycle %v", len(h.Chain), h.Depth, len(h.Missing), h.Cycle)
	}
	d := mb.IsDescendantOf(top, ids[0], m)
	if !d.Descendant || len(d.Chain) != n || d.Checked != n-1 {
		t.Fatalf("descent: %v chain %d checked %d", d.Descendant, len(d.Chain), d.Checked)
	}
	// a hole half way down
	delete(m, ids[n/2])
	h = mb.Ancestry(top, m)
	if len(h.Chain) != n-n/2-1 || !slices.Equal(h.Missing, []dag.ID{ids[n/2]}) {
		t.Fatalf("with a hole: chain %d missing %v", len(h.Chain), h.Missing)
	}
	if d := mb.IsDescendantOf(top, ids[0], m); d.Descendant || !slices.Equal(d.Missing, []dag.ID{ids[n/2]}) {
		t.Fatalf("descent across a hole: %v missing %v", d.Descendant, d.Missing)
	}
}

// TestFuncAdapters: a SourceFunc and a KnownFunc answer exactly what their
// function answers, so a store-backed caller can build one per call.
func TestFuncAdapters(t *testing.T) {
	m, ids := chain(t, 3)
	src := mb.SourceFunc(func(id dag.ID) (mb.Block, bool) { b, ok := m[id]; return b, ok })
	if h := mb.Ancestry(ids[2], src); !slices.Equal(h.Chain, reversed(ids)) || h.Err() != nil {
		t.Fatalf("history through SourceFunc %+v", h)
	}
	asked := 0
	known := mb.KnownFunc(func(id dag.ID) bool { asked++; return id == ids[0] })
	if r := mb.AcceptBlock(m[ids[1]], 0, known); r.Accepted == nil || asked == 0 {
		t.Fatalf("child of a known parent through KnownFunc: %+v (asked %d)", r, asked)
	}
	if r := mb.AcceptBlock(m[ids[2]], 0, known); r.Accepted != nil {
		t.Fatalf("child of an unknown parent accepted through KnownFunc: %+v", r)
	}
}
