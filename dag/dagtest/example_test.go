package dagtest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

// Draw a random DAG (Example draws outside a property; in a rapid.Check,
// call Draw), then check a property of your own against the references:
// here, that the deterministic topological order is a linear extension
// and equals the brute-force one.
func Example() {
	d := dagtest.DAGs(dagtest.DAGOptions{MaxEntries: 16, SingleRoot: true}).Example(1)
	pm := d.ParentMap()
	order, err := dag.TopoOrder(context.Background(), pm, dagtest.NaiveHeads(pm))
	fmt.Println(err, dagtest.IsLinearExtension(pm, order), slices.Equal(order, dagtest.NaiveTopoOrder(pm)))

	roots := 0
	for _, e := range d.Entries {
		if len(e.Parents) == 0 {
			roots++
		}
	}
	fmt.Println("roots:", roots)
	// Output:
	// <nil> true true
	// roots: 1
}

func TestDAGsShape(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := dagtest.DAGOptions{Space: "x", MaxEntries: 10, MaxParents: 2, SingleRoot: rapid.Bool().Draw(t, "single")}
		d := dagtest.DAGs(o).Draw(t, "dag")
		if len(d.Entries) < 1 || len(d.Entries) > 10 {
			t.Fatalf("%d entries", len(d.Entries))
		}
		pm := d.ParentMap()
		if !dagtest.IsLinearExtension(pm, d.IDs()) {
			t.Fatal("generation order is not topological")
		}
		roots := 0
		for _, e := range d.Entries {
			if err := e.Check(); err != nil || e.Space != "x" || dag.Sum(e.Data) != e.ID || len(e.Parents) > 2 {
				t.Fatalf("bad entry %+v: %v", e, err)
			}
			if len(e.Parents) == 0 {
				roots++
			}
		}
		if o.SingleRoot && roots != 1 {
			t.Fatalf("%d roots with SingleRoot", roots)
		}
		arr := dagtest.Arrivals(d).Draw(t, "arrivals")
		set := map[dag.ID]bool{}
		for _, e := range arr {
			set[e.ID] = true
		}
		if len(set) != len(d.Entries) {
			t.Fatal("arrivals miss an entry")
		}
		n := 0
		for _, b := range dagtest.Batches(arr).Draw(t, "batches") {
			if len(b) == 0 {
				t.Fatal("empty batch")
			}
			n += len(b)
		}
		if n != len(arr) {
			t.Fatal("batches lose entries")
		}
	})
}
