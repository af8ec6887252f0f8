package dag_test

import (
	"context"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// ReadLog over a store without LogEntries (the memory store): Log, then
// Get of each, from after and up to limit; a chain a ← b ← c is applied
// in that order, so its log is a, b, c.
func TestReadLog(t *testing.T) {
	ctx := context.Background()
	st := dag.NewMemStore()
	a := dagtest.NewEntry("s", 1, 0, nil)
	b := dagtest.NewEntry("s", 1, 1, []dag.ID{a.ID})
	c := dagtest.NewEntry("s", 1, 2, []dag.ID{b.ID})
	if _, err := st.Put(ctx, dag.Batch{Entries: []dag.Entry{a, b, c}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after uint64
		limit int
		want  []dag.ID
	}{
		{0, 0, []dag.ID{a.ID, b.ID, c.ID}},
		{1, 1, []dag.ID{b.ID}},
		{2, 0, []dag.ID{c.ID}},
		{3, 0, nil},
	} {
		es, err := dag.ReadLog(ctx, st, "s", tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != len(tc.want) {
			t.Fatalf("after %d limit %d: %d entries, want %d", tc.after, tc.limit, len(es), len(tc.want))
		}
		for i, e := range es {
			if e.ID != tc.want[i] || string(e.Data) == "" {
				t.Errorf("after %d limit %d: entry %d is %s, want %s", tc.after, tc.limit, i, e.ID, tc.want[i])
			}
		}
	}
}
