package dag_test

import (
	"context"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// Entries may arrive before their parents: they wait as pending, and are
// applied, in causal order, when the parents land.
func ExampleStore() {
	ctx := context.Background()
	var s dag.Store = dag.NewMemStore() // or badgerstore.Open(dir, badgerstore.Options{})
	defer s.Close()

	entry := func(data string, parents ...dag.ID) dag.Entry {
		return dag.Entry{ID: dag.Sum([]byte(data)), Space: "demo", Parents: parents, Data: []byte(data)}
	}
	root := entry(`{"n":0}`)
	a := entry(`{"n":1}`, root.ID)
	b := entry(`{"n":2}`, root.ID)
	merge := entry(`{"n":3}`, a.ID, b.ID)

	r, _ := s.Put(ctx, dag.Batch{Entries: []dag.Entry{merge, a}})
	missing, _ := s.Missing(ctx, "demo")
	fmt.Println("applied:", len(r.Applied), "pending:", len(r.Pending), "missing:", len(missing))

	r, _ = s.Put(ctx, dag.Batch{Entries: []dag.Entry{b, root}})
	heads, _ := s.Heads(ctx, "demo")
	fmt.Println("applied:", len(r.Applied), "heads are the merge:", len(heads) == 1 && heads[0] == merge.ID)

	mb, _ := dag.MergeBase(ctx, dag.Source(s), a.ID, b.ID)
	pos, _ := s.Position(ctx, merge.ID)
	fmt.Println("merge-base is the root:", mb == root.ID, "merge at log position", pos)
	// Output:
	// applied: 0 pending: 2 missing: 2
	// applied: 4 heads are the merge: true
	// merge-base is the root: true merge at log position 4
}

func ExampleDetailOf() {
	inner := dag.Errorf(dag.CodeBallotInvalid, "%s is not in the electorate", "m1")
	err := &dag.ProtocolError{Code: dag.CodeBallotInvalid, Detail: inner.Error(), Err: inner}
	fmt.Println(err)
	fmt.Println(dag.DetailOf(err))
	// Output:
	// ballot_invalid: ballot_invalid: m1 is not in the electorate
	// m1 is not in the electorate
}
