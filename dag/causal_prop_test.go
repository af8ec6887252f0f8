package dag_test

import (
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
		front, err := dag.Frontier(pm, ids)
		if err != nil || !slices.Equal(front, heads) {
			t.Fatalf("Frontier = %v, %v; want heads %v", front, err, heads)
		}

		order, err := dag.TopoOrder(pm, rapid.Permutation(heads).Draw(t, "heads"))
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
		got, err := dag.MergeBase(pm, a, b)
		want, ok := dagtest.NaiveMergeBase(pm, a, b)
		switch {
		case !ok && !errors.Is(err, dag.ErrNoCommonAncestor):
			t.Fatalf("MergeBase = %v, %v; want no common ancestor", got, err)
		case ok && (err != nil || got != want):
			t.Fatalf("MergeBase = %v, %v; want %v", got, err, want)
		}

		isAnc, err := dag.IsAncestor(pm, a, b)
		if err != nil || isAnc != dagtest.NaiveAncestors(pm, b)[a] {
			t.Fatalf("IsAncestor(a, b) = %v, %v", isAnc, err)
		}

		common, err := dag.CommonAncestors(pm, a, b)
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
