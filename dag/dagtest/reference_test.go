package dagtest_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// The model worked by hand on a chain a ← b ← c delivered backwards, then a
// second root d that Admit refuses and its child e.
func TestReferenceByHand(t *testing.T) {
	a := dagtest.NewEntry("s", 1, 0, nil)
	b := dagtest.NewEntry("s", 1, 1, []dag.ID{a.ID})
	c := dagtest.NewEntry("s", 1, 2, []dag.ID{b.ID})
	d := dagtest.NewEntry("s", 1, 3, nil)
	e := dagtest.NewEntry("s", 1, 4, []dag.ID{d.ID})
	r := dagtest.NewReference()

	// c waits for b, which is missing.
	res, err := r.Put(dag.Batch{Entries: []dag.Entry{c, c}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Pending, []dag.ID{c.ID}) || !slices.Equal(res.Duplicate, []dag.ID{c.ID}) {
		t.Fatalf("first put: %+v", res)
	}
	if got := r.Missing("s"); !slices.Equal(got, []dag.ID{b.ID}) {
		t.Fatalf("Missing = %v, want b", got)
	}
	// b waits for a: a is missing, b no longer is.
	if _, err := r.Put(dag.Batch{Entries: []dag.Entry{b}}); err != nil {
		t.Fatal(err)
	}
	if got := r.Missing("s"); !slices.Equal(got, []dag.ID{a.ID}) {
		t.Fatalf("Missing = %v, want a", got)
	}
	// a lands and promotes b and c: the log is a, b, c; c is the head.
	res, err = r.Put(dag.Batch{Entries: []dag.Entry{a}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []dag.ID{a.ID, b.ID, c.ID}; !slices.Equal(res.Applied, want) || !slices.Equal(r.Log("s"), want) {
		t.Fatalf("Applied = %v, log %v; want a, b, c", res.Applied, r.Log("s"))
	}
	if got := r.Heads("s"); !slices.Equal(got, []dag.ID{c.ID}) {
		t.Fatalf("Heads = %v, want c", got)
	}
	if got := r.Children(a.ID); !slices.Equal(got, []dag.ID{b.ID}) {
		t.Fatalf("Children(a) = %v, want b", got)
	}
	// e arrives before d; Admit refuses d, so e is quarantined after it.
	refuse := func(x dag.Entry) error {
		if x.ID == d.ID {
			return dag.Errorf(dag.CodeNotAuthorized, "no")
		}
		return nil
	}
	if _, err := r.Put(dag.Batch{Entries: []dag.Entry{e, d}, Admit: refuse}); err != nil {
		t.Fatal(err)
	}
	q := r.Quarantine("s")
	if len(q) != 2 || r.Has(d.ID) != dag.Quarantined || r.Has(e.ID) != dag.Quarantined {
		t.Fatalf("Quarantine = %+v", q)
	}
	for _, rej := range q {
		want := dag.CodeUnknownParent
		if rej.ID == d.ID {
			want = dag.CodeNotAuthorized
		}
		if rej.Code != want {
			t.Errorf("%s quarantined with %s, want %s", rej.ID, rej.Code, want)
		}
	}
	if len(r.Pending("s"))+len(r.Missing("s")) != 0 {
		t.Fatalf("pending %v, missing %v", r.Pending("s"), r.Missing("s"))
	}
	// A failing Admit changes nothing.
	f := dagtest.NewEntry("s", 1, 5, []dag.ID{c.ID})
	if _, err := r.Put(dag.Batch{Entries: []dag.Entry{f}, Admit: func(dag.Entry) error { return errors.New("disk") }}); err == nil {
		t.Fatal("Put with a failing Admit succeeded")
	}
	if r.Has(f.ID) != dag.Absent {
		t.Fatalf("a failed Put left %s", fmt.Sprint(r.Has(f.ID)))
	}
}
