package dag_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

// The causal algorithms agree with dagtest's brute-force references on
// random DAGs.
func TestCausalProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := dagtest.DAGs(dagtest.DAGOptions{MaxEntries: 24}).Draw(t, "dag")
		pm := d.ParentMap()
		ids := d.IDs()

		heads := dagtest.NaiveHeads(pm)
		front, err := dag.Frontier(ctx, pm, ids)
		if err != nil || !slices.Equal(front, heads) {
			t.Fatalf("Frontier = %v, %v; want heads %v", front, err, heads)
		}

		order, err := dag.TopoOrder(ctx, pm, rapid.Permutation(heads).Draw(t, "heads"))
		if err != nil {
			t.Fatal(err)
		}
		if !dagtest.IsLinearExtension(pm, order) {
			t.Fatalf("TopoOrder is not a linear extension: %v", order)
		}
		if want := dagtest.NaiveTopoOrder(pm); !slices.Equal(order, want) {
			t.Fatalf("TopoOrder = %v, want %v", order, want)
		}

		a := rapid.SampledFrom(ids).Draw(t, "a")
		b := rapid.SampledFrom(ids).Draw(t, "b")
		got, err := dag.MergeBase(ctx, pm, a, b)
		want, ok := dagtest.NaiveMergeBase(pm, a, b)
		switch {
		case !ok && !errors.Is(err, dag.ErrNoCommonAncestor):
			t.Fatalf("MergeBase = %v, %v; want no common ancestor", got, err)
		case ok && (err != nil || got != want):
			t.Fatalf("MergeBase = %v, %v; want %v", got, err, want)
		}

		isAnc, err := dag.IsAncestor(ctx, pm, a, b)
		if err != nil || isAnc != dagtest.NaiveAncestors(pm, b)[a] {
			t.Fatalf("IsAncestor(a, b) = %v, %v", isAnc, err)
		}

		common, err := dag.CommonAncestors(ctx, pm, a, b)
		if err != nil {
			t.Fatal(err)
		}
		ancA, ancB := dagtest.NaiveAncestors(pm, a), dagtest.NaiveAncestors(pm, b)
		var wantCommon []dag.ID
		for _, id := range ids {
			if ancA[id] && ancB[id] {
				wantCommon = append(wantCommon, id)
			}
		}
		slices.SortFunc(wantCommon, dag.ID.Compare)
		if !slices.Equal(common, wantCommon) {
			t.Fatalf("CommonAncestors = %v, want %v", common, wantCommon)
		}
	})
}

// rankedMap is a ParentMap ranked by a linear extension.
type rankedMap struct {
	dag.ParentMap
	rank map[dag.ID]uint64
}

func (r rankedMap) Rank(ctx context.Context, id dag.ID) (uint64, error) {
	v, ok := r.rank[id]
	if !ok {
		return 0, dag.ErrNotFound
	}
	return v, nil
}

// With a rank, IsAncestor and MergeBases take the early-stopping paths;
// they must agree with the references whatever linear extension ranks.
func TestRankedProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := dagtest.DAGs(dagtest.DAGOptions{MaxEntries: 24}).Draw(t, "dag")
		pm := d.ParentMap()
		order := d.IDs()
		if rapid.Bool().Draw(t, "topo order as rank") {
			order = dagtest.NaiveTopoOrder(pm)
		}
		r := rankedMap{pm, map[dag.ID]uint64{}}
		for i, id := range order {
			r.rank[id] = uint64(i + 1)
		}
		ids := d.IDs()
		for range 4 {
			a := rapid.SampledFrom(ids).Draw(t, "a")
			b := rapid.SampledFrom(ids).Draw(t, "b")
			fast, err := dag.MergeBases(ctx, r, a, b)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := dag.MergeBases(ctx, pm, a, b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fast, slow) {
				t.Fatalf("MergeBases ranked = %v, unranked = %v", fast, slow)
			}
			want, ok := dagtest.NaiveMergeBase(pm, a, b)
			if got, err := dag.MergeBase(ctx, r, a, b); ok != (err == nil) || ok && got != want {
				t.Fatalf("MergeBase ranked = %v, %v; want %v", got, err, want)
			}
			isAnc, err := dag.IsAncestor(ctx, r, a, b)
			if err != nil || isAnc != dagtest.NaiveAncestors(pm, b)[a] {
				t.Fatalf("IsAncestor ranked = %v, %v", isAnc, err)
			}
		}
	})
}
