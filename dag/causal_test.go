package dag_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// named builds a small DAG from "child: parent parent" lines, with ids
// derived from the names so that failures print readable names.
type named struct {
	ids   map[string]dag.ID
	names map[dag.ID]string
	pm    dag.ParentMap
}

func newNamed(edges map[string][]string) *named {
	n := &named{ids: map[string]dag.ID{}, names: map[dag.ID]string{}, pm: dag.ParentMap{}}
	id := func(s string) dag.ID {
		if v, ok := n.ids[s]; ok {
			return v
		}
		v := dag.Sum([]byte(s))
		n.ids[s], n.names[v] = v, s
		return v
	}
	for c, ps := range edges {
		cid := id(c)
		n.pm[cid] = []dag.ID{}
		for _, p := range ps {
			n.pm[cid] = append(n.pm[cid], id(p))
		}
	}
	return n
}

func (n *named) list(ids []dag.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = n.names[id]
	}
	return out
}

// sortedNames returns names in the order of their ids.
func (n *named) sortedNames(names ...string) []string {
	ids := make([]dag.ID, len(names))
	for i, s := range names {
		ids[i] = n.ids[s]
	}
	slices.SortFunc(ids, dag.ID.Compare)
	return n.list(ids)
}

// The diamond-with-criss-cross DAG used by the table tests:
//
//	r ─ a ─ c ─ x
//	 ╲    ╳
//	  b ─ d ─ y       (c and d both have parents a and b)
//	z (a second root)
var crissCross = map[string][]string{
	"r": {}, "a": {"r"}, "b": {"r"}, "c": {"a", "b"}, "d": {"a", "b"},
	"x": {"c"}, "y": {"d"}, "z": {}, "w": {"x", "z"},
}

func TestIsAncestor(t *testing.T) {
	n := newNamed(crissCross)
	tests := []struct {
		a, b string
		want bool
	}{
		{"r", "r", true}, {"r", "y", true}, {"a", "y", true}, {"b", "x", true},
		{"x", "y", false}, {"c", "d", false}, {"y", "r", false}, {"z", "w", true},
		{"z", "x", false}, {"w", "x", false},
	}
	for _, tc := range tests {
		got, err := dag.IsAncestor(ctx, n.pm, n.ids[tc.a], n.ids[tc.b])
		if err != nil || got != tc.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
	}
}

func TestMergeBases(t *testing.T) {
	n := newNamed(crissCross)
	tests := []struct {
		a, b  string
		bases []string // as a set; sorted by id below
	}{
		{"x", "y", []string{"a", "b"}}, // criss-cross: two nearest common ancestors
		{"c", "d", []string{"a", "b"}},
		{"a", "b", []string{"r"}},
		{"x", "c", []string{"c"}}, // an ancestor is its descendant's merge-base
		{"c", "x", []string{"c"}},
		{"r", "r", []string{"r"}},
		{"w", "y", []string{"a", "b"}},
		{"w", "z", []string{"z"}},
		{"z", "y", nil},
	}
	for _, tc := range tests {
		got, err := dag.MergeBases(ctx, n.pm, n.ids[tc.a], n.ids[tc.b])
		if err != nil {
			t.Fatalf("MergeBases(%s, %s): %v", tc.a, tc.b, err)
		}
		want := n.sortedNames(tc.bases...)
		if !slices.Equal(n.list(got), want) {
			t.Errorf("MergeBases(%s, %s) = %v, want %v", tc.a, tc.b, n.list(got), want)
		}
		mb, err := dag.MergeBase(ctx, n.pm, n.ids[tc.a], n.ids[tc.b])
		if len(want) == 0 {
			if !errors.Is(err, dag.ErrNoCommonAncestor) || dag.CodeOf(err) != dag.CodeNoCommonAncestor {
				t.Errorf("MergeBase(%s, %s) error = %v, want no_common_ancestor", tc.a, tc.b, err)
			}
			continue
		}
		if err != nil || n.names[mb] != want[0] {
			t.Errorf("MergeBase(%s, %s) = %s, %v; want %s (smallest id)", tc.a, tc.b, n.names[mb], err, want[0])
		}
	}
}

func TestCommonAncestors(t *testing.T) {
	n := newNamed(crissCross)
	got, err := dag.CommonAncestors(ctx, n.pm, n.ids["x"], n.ids["w"])
	if err != nil {
		t.Fatal(err)
	}
	if want := n.sortedNames("x", "c", "a", "b", "r"); !slices.Equal(n.list(got), want) {
		t.Errorf("CommonAncestors(x, w) = %v, want %v", n.list(got), want)
	}
	got, err = dag.CommonAncestors(ctx, n.pm, n.ids["z"], n.ids["r"])
	if err != nil || len(got) != 0 {
		t.Errorf("CommonAncestors(z, r) = %v, %v; want none", n.list(got), err)
	}
}

func TestTopoOrderTiesByID(t *testing.T) {
	n := newNamed(crissCross)
	got, err := dag.TopoOrder(ctx, n.pm, []dag.ID{n.ids["y"], n.ids["w"]})
	if err != nil {
		t.Fatal(err)
	}
	// Reference: repeatedly take the smallest id whose parents are listed.
	want := []string{}
	done := map[string]bool{}
	for len(want) < len(crissCross) {
		var ready []string
		for c, ps := range crissCross {
			if done[c] {
				continue
			}
			ok := true
			for _, p := range ps {
				ok = ok && done[p]
			}
			if ok {
				ready = append(ready, c)
			}
		}
		first := n.sortedNames(ready...)[0]
		done[first] = true
		want = append(want, first)
	}
	if !slices.Equal(n.list(got), want) {
		t.Errorf("TopoOrder = %v, want %v", n.list(got), want)
	}
	// The order of the heads given does not matter.
	again, err := dag.TopoOrder(ctx, n.pm, []dag.ID{n.ids["w"], n.ids["y"], n.ids["w"]})
	if err != nil || !slices.Equal(again, got) {
		t.Errorf("TopoOrder depends on the order of heads: %v", n.list(again))
	}
}

func TestFrontier(t *testing.T) {
	n := newNamed(crissCross)
	ids := []dag.ID{n.ids["a"], n.ids["x"], n.ids["d"], n.ids["r"], n.ids["x"], n.ids["z"]}
	got, err := dag.Frontier(ctx, n.pm, ids)
	if err != nil {
		t.Fatal(err)
	}
	if want := n.sortedNames("x", "d", "z"); !slices.Equal(n.list(got), want) {
		t.Errorf("Frontier = %v, want %v", n.list(got), want)
	}
}

func TestMissingParents(t *testing.T) {
	n := newNamed(crissCross)
	delete(n.pm, n.ids["a"])
	delete(n.pm, n.ids["z"])
	got, err := dag.MissingParents(ctx, n.pm, []dag.ID{n.ids["x"], n.ids["y"], n.ids["w"]})
	if err != nil {
		t.Fatal(err)
	}
	if want := n.sortedNames("a", "z"); !slices.Equal(n.list(got), want) {
		t.Errorf("MissingParents = %v, want %v", n.list(got), want)
	}
	// The other algorithms report a missing ancestor as ErrNotFound.
	if _, err := dag.TopoOrder(ctx, n.pm, []dag.ID{n.ids["x"]}); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("TopoOrder over a missing parent: err = %v, want ErrNotFound", err)
	}
	if _, err := dag.IsAncestor(ctx, n.pm, n.ids["r"], n.ids["x"]); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("IsAncestor over a missing parent: err = %v, want ErrNotFound", err)
	}
}

func TestTopoOrderCycle(t *testing.T) {
	a, b := dag.Sum([]byte("a")), dag.Sum([]byte("b"))
	pm := dag.ParentMap{a: {b}, b: {a}}
	if _, err := dag.TopoOrder(ctx, pm, []dag.ID{a}); !errors.Is(err, dag.ErrCycle) {
		t.Errorf("err = %v, want ErrCycle", err)
	}
}

func TestParentsError(t *testing.T) {
	boom := errors.New("boom")
	src := dag.ParentsFunc(func(context.Context, dag.ID) ([]dag.ID, error) { return nil, boom })
	id := dag.Sum(nil)
	if _, err := dag.MissingParents(ctx, src, []dag.ID{id}); !errors.Is(err, boom) {
		t.Errorf("MissingParents err = %v, want the source's error", err)
	}
	if _, err := dag.MergeBase(ctx, src, id, id); !errors.Is(err, boom) {
		t.Errorf("MergeBase err = %v, want the source's error", err)
	}
}

// chain is a ParentSource for a chain 0 ← 1 ← … ← n-1 that computes parents
// instead of storing them, so a million-long chain costs only the walk.
type chain int

func chainID(i int) dag.ID {
	var d [32]byte
	binary.BigEndian.PutUint64(d[24:], uint64(i)^0x5555) // ids do not sort by position
	d[0] = 1
	return dag.IDFromDigest(d)
}

func (c chain) Parents(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	d := id.Digest()
	i := int(binary.BigEndian.Uint64(d[24:]) ^ 0x5555)
	if d[0] != 1 || i < 0 || i >= int(c) {
		return nil, fmt.Errorf("chain: %w", dag.ErrNotFound)
	}
	if i == 0 {
		return nil, nil
	}
	return []dag.ID{chainID(i - 1)}, nil
}

// TestDeepChain runs every algorithm over a long chain with the goroutine
// stack limit cut to 1 MiB, so that any recursion per entry would crash the
// test. WITAN_LONG=1 uses the million-long chain of the issue.
func TestDeepChain(t *testing.T) {
	n := 100_000 // with 1 MiB of stack, recursion per entry would crash
	if os.Getenv("WITAN_LONG") != "" {
		n = 1_000_000
	}
	defer debug.SetMaxStack(debug.SetMaxStack(1 << 20))
	c := chain(n)
	tip, root := chainID(n-1), chainID(0)
	if ok, err := dag.IsAncestor(ctx, c, root, tip); err != nil || !ok {
		t.Fatalf("IsAncestor(root, tip) = %v, %v", ok, err)
	}
	mb, err := dag.MergeBase(ctx, c, tip, chainID(n/2))
	if err != nil || mb != chainID(n/2) {
		t.Fatalf("MergeBase = %v, %v", mb, err)
	}
	order, err := dag.TopoOrder(ctx, c, []dag.ID{tip})
	if err != nil || len(order) != n || order[0] != root || order[n-1] != tip {
		t.Fatalf("TopoOrder: len %d, err %v", len(order), err)
	}
	missing, err := dag.MissingParents(ctx, c, []dag.ID{tip})
	if err != nil || len(missing) != 0 {
		t.Fatalf("MissingParents = %v, %v", missing, err)
	}
}

// rankedChain ranks the chain by position, as a store's log would.
type rankedChain struct{ chain }

func (c rankedChain) Rank(ctx context.Context, id dag.ID) (uint64, error) {
	if _, err := c.Parents(ctx, id); err != nil {
		return 0, err
	}
	d := id.Digest()
	return binary.BigEndian.Uint64(d[24:]) ^ 0x5555, nil
}

// With a rank, ancestry and merge-base near the tip of a long chain read
// only the entries above the answer.
func TestDeepChainRanked(t *testing.T) {
	const n = 1_000_000
	reads := 0
	c := rankedChain{chain(n)}
	counted := dag.ParentsFunc(func(ctx context.Context, id dag.ID) ([]dag.ID, error) { reads++; return c.Parents(ctx, id) })
	r := rankedSrc{counted, c}
	tip, near := chainID(n-1), chainID(n-10)
	if mb, err := dag.MergeBase(ctx, r, tip, near); err != nil || mb != near {
		t.Fatalf("MergeBase = %v, %v", mb, err)
	}
	if ok, err := dag.IsAncestor(ctx, r, near, tip); err != nil || !ok {
		t.Fatalf("IsAncestor = %v, %v", ok, err)
	}
	if reads > 100 {
		t.Errorf("%d parent reads for answers 10 entries below the tip", reads)
	}
}

type rankedSrc struct {
	p dag.ParentSource
	r rankedChain
}

func (s rankedSrc) Parents(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	return s.p.Parents(ctx, id)
}
func (s rankedSrc) Rank(ctx context.Context, id dag.ID) (uint64, error) { return s.r.Rank(ctx, id) }

// The algorithms hand their ctx to the source with every lookup: over a
// store, a cancelled ctx stops the walk with its error.
func TestSourceHonoursCtx(t *testing.T) {
	s := dag.NewMemStore()
	defer s.Close()
	a := dagtest.NewEntry("s", 1, 0, nil)
	b := dagtest.NewEntry("s", 1, 1, []dag.ID{a.ID})
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{a, b}}); err != nil {
		t.Fatal(err)
	}
	if order, err := dag.TopoOrder(ctx, dag.Source(s), []dag.ID{b.ID}); err != nil || len(order) != 2 {
		t.Fatalf("TopoOrder = %v, %v", order, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := dag.TopoOrder(cancelled, dag.Source(s), []dag.ID{b.ID}); !errors.Is(err, context.Canceled) {
		t.Fatalf("TopoOrder with a cancelled ctx: %v, want context.Canceled", err)
	}
	if _, err := dag.IsAncestor(cancelled, dag.Source(s), a.ID, b.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("IsAncestor with a cancelled ctx: %v, want context.Canceled", err)
	}
}
