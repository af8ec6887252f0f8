package dag_test

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// countingView is a PlanView over a map that counts lookups per id.
type countingView struct {
	held  map[dag.ID]dag.Entry
	reads map[dag.ID]int
}

func (v *countingView) Lookup(id dag.ID) (dag.Entry, dag.Status, error) {
	v.reads[id]++
	if e, ok := v.held[id]; ok {
		return e, dag.Applied, nil
	}
	return dag.Entry{}, dag.Absent, nil
}

func (v *countingView) Waiting(string, dag.ID) ([]dag.ID, error) { return nil, nil }

// TestPlanReadsParentOnce: a batch whose entries all name the same two
// parents from outside it, one applied and one absent, reads each parent
// from the backend once, whatever the number of entries (it was read four
// times per entry: quarantined? then applied? for readiness, then again
// for the batch's waiting index and for the entry's pending record). The plan is unchanged: every
// entry waits for the absent parent.
func TestPlanReadsParentOnce(t *testing.T) {
	applied := dagtest.NewEntry("s", 1, 0, nil)
	absent := dagtest.NewEntry("s", 1, 1, nil)
	parents := []dag.ID{applied.ID, absent.ID}
	slices.SortFunc(parents, dag.ID.Compare)
	var b dag.Batch
	for i := 0; i < 50; i++ {
		b.Entries = append(b.Entries, dagtest.NewEntry("s", 2, i, parents))
	}
	v := &countingView{held: map[dag.ID]dag.Entry{applied.ID: applied}, reads: map[dag.ID]int{}}
	p, err := dag.PlanBatch(b, v)
	if err != nil {
		t.Fatal(err)
	}
	if v.reads[applied.ID] != 1 || v.reads[absent.ID] != 1 {
		t.Fatalf("parents read %d and %d times, want once each", v.reads[applied.ID], v.reads[absent.ID])
	}
	if len(p.Apply) != 0 || len(p.Quarantine) != 0 || len(p.Pending) != len(b.Entries) {
		t.Fatalf("plan: %d applied, %d quarantined, %d pending; want all %d pending", len(p.Apply), len(p.Quarantine), len(p.Pending), len(b.Entries))
	}
	for _, w := range p.Pending {
		if !slices.Equal(w.WaitsFor, []dag.ID{absent.ID}) {
			t.Fatalf("%s waits for %v, want [%s]", w.ID, w.WaitsFor, absent.ID)
		}
	}
}
