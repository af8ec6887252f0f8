package sync_test

import (
	"context"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// With nothing known in common, the filter's entries come from the log's
// tail: the same entries, in the same order, as the walk from the heads
// (region) finds, on a DAG with branches and merges, for limits below,
// at and above its size.
func TestLogTailIsRegionWithNothingCommon(t *testing.T) {
	ctx := context.Background()
	r, space := build(t, 0)
	ids := extend(t, r, space, 200, 1)
	// Branches off old entries, a merge of some heads, a chain on top.
	a := synctest.NewAuthor(9)
	for k := 0; k < 40; k++ {
		submit(t, r, a, space, []dag.ID{ids[k*5]}, k)
	}
	submit(t, r, a, space, heads(t, r, space)[:3], 100)
	extend(t, r, space, 20, 2)
	hs := heads(t, r, space)
	if len(hs) < 2 {
		t.Fatalf("want a DAG with several heads, got %d", len(hs))
	}
	n := count(t, r, space)
	for _, limit := range []int{1, 7, n / 2, n - 1, n, n + 1, 4 * n} {
		want, err := ws.RegionIDs(ctx, r, hs, nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ws.LogTail(ctx, r, space, hs, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != min(limit, n) {
			t.Fatalf("limit %d: region found %d of %d entries", limit, len(want), n)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: log tail %d ids, region %d; first differing at %d", limit, len(got), len(want), firstDiff(got, want))
		}
	}
}

func submit(t *testing.T, r *synctest.Replica, a *synctest.Author, space string, parents []dag.ID, i int) {
	t.Helper()
	data, _ := a.Entry(space, parents, 5_000_000+i)
	if res, err := r.Submit(context.Background(), data); err != nil || res.Outcome != ws.Accepted {
		t.Fatalf("submit: %v %+v", err, res)
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
