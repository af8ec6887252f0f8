package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

// Run runs the conformance suite against the stores newStore returns. Each
// subtest asks for a fresh, empty store; Run closes it.
func Run(t *testing.T, newStore func(t *testing.T) dag.Store) {
	open := func(t *testing.T) dag.Store {
		s := newStore(t)
		t.Cleanup(func() { s.Close() })
		return s
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s dag.Store)
	}{
		{"Empty", testEmpty},
		{"InOrder", testInOrder},
		{"OutOfOrder", testOutOfOrder},
		{"TransitivePromotion", testTransitivePromotion},
		{"Duplicates", testDuplicates},
		{"Conflict", testConflict},
		{"Invalid", testInvalid},
		{"Objects", testObjects},
		{"CrossSpaceParent", testCrossSpace},
		{"Isolation", testIsolation},
		{"Log", testLog},
		{"Concurrent", testConcurrent},
		{"AdmitQuarantine", testAdmitQuarantine},
		{"AdmitPromoted", testAdmitPromoted},
		{"AdmitWaitingOnRefused", testAdmitWaitingOnRefused},
		{"AdmitFailure", testAdmitFailure},
		{"AdmitReadsObjects", testAdmitReadsObjects},
		{"AdmitHold", testAdmitHold},
		{"LongPromotion", testLongPromotion},
		{"LongQuarantine", testLongQuarantine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
	t.Run("Closed", func(t *testing.T) {
		s := newStore(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(context.Background(), dag.Sum(nil)); !errors.Is(err, dag.ErrClosed) {
			t.Errorf("Get after Close: err = %v, want ErrClosed", err)
		}
		if _, err := s.Put(context.Background(), dag.Batch{}); !errors.Is(err, dag.ErrClosed) {
			t.Errorf("Put after Close: err = %v, want ErrClosed", err)
		}
	})
	t.Run("AnyOrder", func(t *testing.T) {
		// One store for every case, a fresh space per case: opening a
		// store per case would dominate the run for disk backends.
		s, n := open(t), 0
		rapid.Check(t, func(rt *rapid.T) {
			n++
			propAnyOrder(rt, s, fmt.Sprintf("any-%d", n))
		})
	})
	t.Run("Reference", func(t *testing.T) {
		// A fresh store per case, so that a failing case replays alike
		// while rapid shrinks it (ids depend on the space's name). With
		// -short the cases share one store, a space each, as above: a
		// disk backend opens in 0.1 s.
		var shared dag.Store
		if testing.Short() {
			shared = open(t)
		}
		n := 0
		rapid.Check(t, func(rt *rapid.T) {
			if shared != nil {
				n++
				propReference(rt, shared, fmt.Sprintf("ref-%d", n))
				return
			}
			s := newStore(t)
			defer s.Close()
			propReference(rt, s, "ref")
		})
	})
	t.Run("AdmitAnyOrder", func(t *testing.T) {
		s, n := open(t), 0
		rapid.Check(t, func(rt *rapid.T) {
			n++
			propAdmitAnyOrder(rt, s, fmt.Sprintf("admit-%d", n))
		})
	})
}

var ctx = context.Background()

// chain returns n entries of space, each the parent of the next.
func chain(space string, salt uint32, n int) []dag.Entry {
	var out []dag.Entry
	var parents []dag.ID
	for i := 0; i < n; i++ {
		e := dagtest.NewEntry(space, salt, i, parents)
		out = append(out, e)
		parents = []dag.ID{e.ID}
	}
	return out
}

func ids(es ...dag.Entry) []dag.ID {
	out := make([]dag.ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func sorted(ids ...dag.ID) []dag.ID {
	out := slices.Clone(ids)
	slices.SortFunc(out, dag.ID.Compare)
	if out == nil {
		out = []dag.ID{}
	}
	return out
}

func put(t *testing.T, s dag.Store, es ...dag.Entry) dag.Result {
	t.Helper()
	r, err := s.Put(ctx, dag.Batch{Entries: es})
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return r
}

func eq[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func testEmpty(t *testing.T, s dag.Store) {
	id := dag.Sum([]byte("nothing"))
	if _, err := s.Get(ctx, id); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("Get: err = %v, want ErrNotFound", err)
	}
	if st, err := s.Has(ctx, id); err != nil || st != dag.Absent {
		t.Errorf("Has = %v, %v; want absent", st, err)
	}
	if _, err := s.Object(ctx, id); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("Object: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Parents(ctx, id); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("Parents: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Position(ctx, id); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("Position: err = %v, want ErrNotFound", err)
	}
	for name, f := range map[string]func() ([]dag.ID, error){
		"Heads":    func() ([]dag.ID, error) { return s.Heads(ctx, "s") },
		"Children": func() ([]dag.ID, error) { return s.Children(ctx, id) },
		"Log":      func() ([]dag.ID, error) { return s.Log(ctx, "s", 0, 0) },
		"Pending":  func() ([]dag.ID, error) { return s.Pending(ctx, "s") },
		"Missing":  func() ([]dag.ID, error) { return s.Missing(ctx, "s") },
	} {
		if got, err := f(); err != nil || len(got) != 0 {
			t.Errorf("%s on an empty store = %v, %v", name, got, err)
		}
	}
	if sp, err := s.Spaces(ctx); err != nil || len(sp) != 0 {
		t.Errorf("Spaces = %v, %v", sp, err)
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testInOrder(t *testing.T, s dag.Store) {
	c := chain("s", 1, 4)
	fork := dagtest.NewEntry("s", 1, 10, []dag.ID{c[1].ID})
	merge := dagtest.NewEntry("s", 1, 11, []dag.ID{c[3].ID, fork.ID})
	r := put(t, s, c[0], c[1], c[2], c[3], fork)
	eq(t, "Applied", r.Applied, ids(c[0], c[1], c[2], c[3], fork))
	eq(t, "Pending", r.Pending, nil)
	eq(t, "Duplicate", r.Duplicate, nil)
	heads, _ := s.Heads(ctx, "s")
	eq(t, "Heads before merge", heads, sorted(c[3].ID, fork.ID))
	ch, _ := s.Children(ctx, c[1].ID)
	eq(t, "Children", ch, sorted(c[2].ID, fork.ID))
	put(t, s, merge)
	heads, _ = s.Heads(ctx, "s")
	eq(t, "Heads after merge", heads, []dag.ID{merge.ID})
	for i, e := range []dag.Entry{c[0], c[1], c[2], c[3], fork, merge} {
		got, err := s.Get(ctx, e.ID)
		if err != nil || !got.Equal(e) {
			t.Errorf("Get(%d) = %+v, %v", i, got, err)
		}
		if pos, err := s.Position(ctx, e.ID); err != nil || pos != uint64(i+1) {
			t.Errorf("Position(%d) = %d, %v; want %d", i, pos, err, i+1)
		}
		if st, _ := s.Has(ctx, e.ID); st != dag.Applied {
			t.Errorf("Has(%d) = %v", i, st)
		}
		ps, err := s.Parents(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "Parents", ps, e.Parents)
	}
	order, err := dag.SpaceOrder(ctx, s, "s")
	if err != nil {
		t.Fatal(err)
	}
	pm := dag.ParentMap{}
	for _, e := range []dag.Entry{c[0], c[1], c[2], c[3], fork, merge} {
		pm[e.ID] = e.Parents
	}
	eq(t, "SpaceOrder", order, dagtest.NaiveTopoOrder(pm))
	mb, err := dag.MergeBase(ctx, dag.Source(s), c[3].ID, fork.ID)
	if err != nil || mb != c[1].ID {
		t.Errorf("MergeBase = %v, %v; want %v", mb, err, c[1].ID)
	}
	sp, _ := s.Spaces(ctx)
	eq(t, "Spaces", sp, []string{"s"})
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testOutOfOrder(t *testing.T, s dag.Store) {
	c := chain("s", 2, 3)
	r := put(t, s, c[2])
	eq(t, "Pending", r.Pending, ids(c[2]))
	eq(t, "Applied", r.Applied, nil)
	if st, _ := s.Has(ctx, c[2].ID); st != dag.Pending {
		t.Errorf("Has(pending) = %v", st)
	}
	if _, err := s.Get(ctx, c[2].ID); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("Get(pending): err = %v, want ErrNotFound", err)
	}
	p, _ := s.Pending(ctx, "s")
	eq(t, "Pending()", p, ids(c[2]))
	m, _ := s.Missing(ctx, "s")
	eq(t, "Missing", m, ids(c[1]))
	heads, _ := s.Heads(ctx, "s")
	eq(t, "Heads with only a pending entry", heads, nil)

	r = put(t, s, c[1]) // still waits for c[0]
	eq(t, "Pending", r.Pending, ids(c[1]))
	m, _ = s.Missing(ctx, "s")
	eq(t, "Missing", m, ids(c[0]))

	r = put(t, s, c[0])
	eq(t, "Applied", r.Applied, ids(c[0], c[1], c[2]))
	p, _ = s.Pending(ctx, "s")
	eq(t, "Pending() after promotion", p, nil)
	m, _ = s.Missing(ctx, "s")
	eq(t, "Missing after promotion", m, nil)
	heads, _ = s.Heads(ctx, "s")
	eq(t, "Heads", heads, ids(c[2]))
	for i, e := range c {
		if pos, _ := s.Position(ctx, e.ID); pos != uint64(i+1) {
			t.Errorf("Position(%d) = %d", i, pos)
		}
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testTransitivePromotion(t *testing.T, s dag.Store) {
	c := chain("s", 3, 6)
	// A merge waiting for two branches, and the chain in reverse.
	side := dagtest.NewEntry("s", 3, 20, []dag.ID{c[0].ID})
	merge := dagtest.NewEntry("s", 3, 21, []dag.ID{c[5].ID, side.ID})
	put(t, s, merge)
	for i := len(c) - 1; i >= 1; i-- {
		put(t, s, c[i])
	}
	put(t, s, side)
	m, _ := s.Missing(ctx, "s")
	eq(t, "Missing", m, ids(c[0]))
	r := put(t, s, c[0])
	if len(r.Applied) != 8 || r.Applied[0] != c[0].ID || r.Applied[7] != merge.ID {
		t.Errorf("Applied = %v, want all 8 entries from the root to the merge", r.Applied)
	}
	heads, _ := s.Heads(ctx, "s")
	eq(t, "Heads", heads, ids(merge))
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testDuplicates(t *testing.T, s dag.Store) {
	c := chain("s", 4, 3)
	r := put(t, s, c[0], c[0], c[2])
	eq(t, "Duplicate", r.Duplicate, ids(c[0]))
	r = put(t, s, c[0], c[2], c[1])
	eq(t, "Duplicate", r.Duplicate, ids(c[0], c[2]))
	eq(t, "Applied", r.Applied, ids(c[1], c[2]))
	log, _ := s.Log(ctx, "s", 0, 0)
	eq(t, "Log", log, ids(c...))
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testConflict(t *testing.T, s dag.Store) {
	c := chain("s", 5, 2)
	put(t, s, c[0])
	other := c[0]
	other.Data = []byte(`{"other":true}`)
	_, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{c[1], other}})
	if !errors.Is(err, dag.ErrConflict) {
		t.Fatalf("Put of a different entry under a held id: err = %v, want ErrConflict", err)
	}
	if st, _ := s.Has(ctx, c[1].ID); st != dag.Absent {
		t.Errorf("a failed batch wrote an entry: Has = %v", st)
	}
	moved := c[1]
	moved.Space = "elsewhere"
	_, err = s.Put(ctx, dag.Batch{Entries: []dag.Entry{c[1], moved}})
	if !errors.Is(err, dag.ErrConflict) {
		t.Errorf("an id repeated in a batch with another space: err = %v, want ErrConflict", err)
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testInvalid(t *testing.T, s dag.Store) {
	good := dagtest.NewEntry("s", 6, 0, nil)
	p := dagtest.NewEntry("s", 6, 1, nil).ID
	bad := []dag.Entry{
		{Space: "s"},
		{ID: dag.Sum([]byte("x")), Space: ""},
		{ID: dag.Sum([]byte("x")), Space: "s", Parents: []dag.ID{{}}},
		{ID: dag.Sum([]byte("x")), Space: "s", Parents: []dag.ID{p, p}},
		{ID: dag.Sum([]byte("x")), Space: "s", Parents: []dag.ID{dag.Sum([]byte("x"))}},
	}
	for i, b := range bad {
		_, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{good, b}})
		if !errors.Is(err, dag.ErrInvalidEntry) {
			t.Errorf("bad entry %d: err = %v, want ErrInvalidEntry", i, err)
		}
	}
	_, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{good}, Objects: []dag.Object{{ID: dag.Sum([]byte("a")), Data: []byte("b")}}})
	if !errors.Is(err, dag.ErrObjectMismatch) {
		t.Errorf("object with a wrong id: err = %v, want ErrObjectMismatch", err)
	}
	if st, _ := s.Has(ctx, good.ID); st != dag.Absent {
		t.Errorf("a failed batch wrote its valid entry: Has = %v", st)
	}
}

func testObjects(t *testing.T, s dag.Store) {
	o1, o2 := dag.NewObject([]byte(`{"rule":"text"}`)), dag.NewObject([]byte{})
	e := dagtest.NewEntry("s", 7, 0, nil)
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{e}, Objects: []dag.Object{o1, o2, o1}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []dag.Object{o1, o2} {
		got, err := s.Object(ctx, o.ID)
		if err != nil || string(got) != string(o.Data) {
			t.Errorf("Object(%s) = %q, %v", o.ID, got, err)
		}
	}
	// Objects alone, without entries.
	o3 := dag.NewObject([]byte("alone"))
	if _, err := s.Put(ctx, dag.Batch{Objects: []dag.Object{o3}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Object(ctx, o3.ID); err != nil || string(got) != "alone" {
		t.Errorf("Object(o3) = %q, %v", got, err)
	}
}

func testCrossSpace(t *testing.T, s dag.Store) {
	a := dagtest.NewEntry("a", 8, 0, nil)
	b := dagtest.NewEntry("b", 8, 1, []dag.ID{a.ID})
	r := put(t, s, a, b)
	eq(t, "Applied", r.Applied, ids(a))
	eq(t, "Pending", r.Pending, ids(b))
	m, _ := s.Missing(ctx, "b")
	eq(t, "Missing(b)", m, ids(a))
	sp, _ := s.Spaces(ctx)
	eq(t, "Spaces", sp, []string{"a", "b"})
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

func testIsolation(t *testing.T, s dag.Store) {
	root := dagtest.NewEntry("s", 9, 0, nil)
	e := dagtest.NewEntry("s", 9, 1, []dag.ID{root.ID})
	in := dag.Entry{ID: e.ID, Space: e.Space, Parents: slices.Clone(e.Parents), Data: slices.Clone(e.Data)}
	put(t, s, root, in)
	in.Data[0], in.Parents[0] = 'X', dag.Sum(nil)
	got, err := s.Get(ctx, e.ID)
	if err != nil || !got.Equal(e) {
		t.Fatalf("the store kept the caller's slices: %+v, %v", got, err)
	}
	got.Data[0], got.Parents[0] = 'Y', dag.Sum(nil)
	again, _ := s.Get(ctx, e.ID)
	if !again.Equal(e) {
		t.Errorf("Get returned the store's own slices")
	}
}

// logReader is a store that reads a run of its log in one go (as
// dag.ReadLog asks it to): what it returns must be what Log and Get give.
type logReader interface {
	LogEntries(ctx context.Context, space string, after uint64, limit int) ([]dag.Entry, error)
}

func testLog(t *testing.T, s dag.Store) {
	c := chain("s", 10, 7)
	// In several batches, interleaved with another space, so that a
	// backend that stores the log per batch is read across batches.
	put(t, s, c[:3]...)
	put(t, s, chain("other", 10, 3)...)
	put(t, s, c[3:4]...)
	put(t, s, c[4:]...)
	for after := range len(c) + 2 {
		for limit := range len(c) + 2 {
			got, err := s.Log(ctx, "s", uint64(after), limit)
			if err != nil {
				t.Fatalf("Log(%d, %d): %v", after, limit, err)
			}
			want := c[min(after, len(c)):]
			if limit > 0 && len(want) > limit {
				want = want[:limit]
			}
			eq(t, fmt.Sprintf("Log(%d, %d)", after, limit), got, ids(want...))
			if lr, ok := s.(logReader); ok {
				ens, err := lr.LogEntries(ctx, "s", uint64(after), limit)
				if err != nil {
					t.Fatalf("LogEntries(%d, %d): %v", after, limit, err)
				}
				if len(ens) != len(want) {
					t.Fatalf("LogEntries(%d, %d): %d entries, want %d", after, limit, len(ens), len(want))
				}
				for i := range ens {
					if !ens[i].Equal(want[i]) {
						t.Fatalf("LogEntries(%d, %d)[%d] = %+v, want %+v", after, limit, i, ens[i], want[i])
					}
				}
			}
		}
	}
	// LogEntries gives copies: writing to one, or appending to its
	// slices, changes neither the store nor the entries beside it.
	if lr, ok := s.(logReader); ok {
		ens, _ := lr.LogEntries(ctx, "s", 0, 0)
		ens[0].Data[0], ens[0].Parents = 'Y', append(ens[0].Parents, dag.Sum(nil))
		_ = append(ens[1].Data, 'Z')
		_ = append(ens[1].Parents, dag.Sum(nil))
		again, _ := lr.LogEntries(ctx, "s", 0, 0)
		for i := range again {
			if !again[i].Equal(c[i]) {
				t.Fatalf("after writing to LogEntries' answer, entry %d is %+v, want %+v", i, again[i], c[i])
			}
		}
		if !ens[2].Equal(c[2]) {
			t.Fatalf("appending to one entry of LogEntries' answer changed the next: %+v", ens[2])
		}
	}
	all, _ := s.Log(ctx, "s", 0, 0)
	eq(t, "Log(0, all)", all, ids(c...))
	page, _ := s.Log(ctx, "s", 2, 3)
	eq(t, "Log(2, 3)", page, ids(c[2:5]...))
	tail, _ := s.Log(ctx, "s", 5, 10)
	eq(t, "Log(5, 10)", tail, ids(c[5:]...))
	none, _ := s.Log(ctx, "s", 7, 0)
	eq(t, "Log(7)", none, nil)
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

// propAnyOrder: for any DAG inserted in any order, with duplicates and in
// any batches, the store ends with every entry applied, the heads are the
// maximal elements, the log is a linear extension, and the deterministic
// order equals the reference: the same state as insertion in causal order.
func propAnyOrder(t *rapid.T, s dag.Store, space string) {
	d := dagtest.DAGs(dagtest.DAGOptions{Space: space, MaxEntries: 20}).Draw(t, "dag")
	arrivals := dagtest.Arrivals(d).Draw(t, "arrivals")
	applied := 0
	for _, b := range dagtest.Batches(arrivals).Draw(t, "batches") {
		r, err := s.Put(ctx, dag.Batch{Entries: b})
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckSpace(ctx, s, space); err != nil {
			t.Fatal(err)
		}
		// Result.Applied lists what the Put applied in the order of the
		// log positions it took.
		tail, err := s.Log(ctx, space, uint64(applied), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tail, r.Applied) && len(tail)+len(r.Applied) > 0 {
			t.Fatalf("Result.Applied = %v, the log gained %v", r.Applied, tail)
		}
		applied += len(tail)
	}
	pm := d.ParentMap()
	heads, err := s.Heads(ctx, d.Space)
	if err != nil {
		t.Fatal(err)
	}
	if want := dagtest.NaiveHeads(pm); !slices.Equal(heads, want) {
		t.Fatalf("Heads = %v, want %v", heads, want)
	}
	log, err := s.Log(ctx, d.Space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !dagtest.IsLinearExtension(pm, log) {
		t.Fatalf("the log is not a linear extension of the DAG")
	}
	order, err := dag.SpaceOrder(ctx, s, d.Space)
	if err != nil {
		t.Fatal(err)
	}
	if want := dagtest.NaiveTopoOrder(pm); !slices.Equal(order, want) {
		t.Fatalf("SpaceOrder = %v, want %v", order, want)
	}
	if p, _ := s.Pending(ctx, d.Space); len(p) != 0 {
		t.Fatalf("entries left pending: %v", p)
	}
	// The same state as inserting the entries in causal order into the
	// naive model (log positions aside: they record arrival).
	ref := dagtest.NewReference()
	if _, err := ref.Put(dag.Batch{Entries: d.Entries}); err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Entries {
		got, err := s.Get(ctx, e.ID)
		if err != nil || !got.Equal(e) {
			t.Fatalf("Get(%s) = %+v, %v", e.ID, got, err)
		}
		ch, err := s.Children(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref.Children(e.ID); !sameIDs(ch, want) {
			t.Fatalf("Children(%s) = %v, causal-order insertion gives %v", e.ID, ch, want)
		}
	}
	if !sameIDs(heads, ref.Heads(d.Space)) {
		t.Fatalf("heads differ from causal-order insertion")
	}
	if m, _ := s.Missing(ctx, d.Space); len(m) != 0 {
		t.Fatalf("Missing = %v after every entry arrived", m)
	}
	// The causal algorithms over the store agree with the references.
	ids := d.IDs()
	a := rapid.SampledFrom(ids).Draw(t, "a")
	b := rapid.SampledFrom(ids).Draw(t, "b")
	mb, err := dag.MergeBase(ctx, dag.Source(s), a, b)
	want, ok := dagtest.NaiveMergeBase(pm, a, b)
	if ok != (err == nil) || (ok && mb != want) {
		t.Fatalf("MergeBase over the store = %v, %v; want %v (exists: %v)", mb, err, want, ok)
	}
	isAnc, err := dag.IsAncestor(ctx, dag.Source(s), a, b)
	if err != nil || isAnc != dagtest.NaiveAncestors(pm, b)[a] {
		t.Fatalf("IsAncestor over the store = %v, %v", isAnc, err)
	}
}

// Check verifies that the indexes of s are consistent with its entries, in
// every space: the log holds positions 1..n without gaps; every applied
// entry's parents are applied in its space at earlier positions; Children
// is exactly the inverse of Parents; Heads are exactly the applied entries
// with no applied children; pending entries are neither applied nor
// missing, and Missing lists only ids not held in the space; the
// quarantine is sorted, coded, and disjoint from the applied, pending and
// missing entries. It reads everything, so keep stores small.
func Check(ctx context.Context, s dag.Store) error {
	spaces, err := s.Spaces(ctx)
	if err != nil {
		return err
	}
	for _, sp := range spaces {
		if err := CheckSpace(ctx, s, sp); err != nil {
			return fmt.Errorf("space %q: %w", sp, err)
		}
	}
	return nil
}

// CheckSpace is Check for one space.
func CheckSpace(ctx context.Context, s dag.Store, space string) error {
	log, err := s.Log(ctx, space, 0, 0)
	if err != nil {
		return err
	}
	pos := make(map[dag.ID]uint64, len(log))
	hasChild := make(map[dag.ID]bool)
	children := make(map[dag.ID][]dag.ID)
	for i, id := range log {
		if _, dup := pos[id]; dup {
			return fmt.Errorf("%s twice in the log", id)
		}
		pos[id] = uint64(i + 1)
		p, err := s.Position(ctx, id)
		if err != nil || p != uint64(i+1) {
			return fmt.Errorf("Position(%s) = %d, %v; the log has it at %d", id, p, err, i+1)
		}
		e, err := s.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("logged entry %s: %w", id, err)
		}
		if e.Space != space {
			return fmt.Errorf("entry %s of space %q is in the log of %q", id, e.Space, space)
		}
		ps, err := s.Parents(ctx, id)
		if err != nil || !slices.Equal(ps, e.Parents) {
			return fmt.Errorf("Parents(%s) = %v, %v; the entry lists %v", id, ps, err, e.Parents)
		}
		for _, p := range e.Parents {
			pp, ok := pos[p]
			if !ok || pp >= pos[id] {
				return fmt.Errorf("entry %s at %d has parent %s not applied before it", id, pos[id], p)
			}
			hasChild[p] = true
			children[p] = append(children[p], id)
		}
		if st, err := s.Has(ctx, id); err != nil || st != dag.Applied {
			return fmt.Errorf("Has(%s) = %v, %v; want applied", id, st, err)
		}
	}
	for _, id := range log {
		ch, err := s.Children(ctx, id)
		if err != nil {
			return err
		}
		if want := sorted(children[id]...); !slices.Equal(ch, want) {
			return fmt.Errorf("Children(%s) = %v, want %v (sorted)", id, ch, want)
		}
	}
	heads, err := s.Heads(ctx, space)
	if err != nil {
		return err
	}
	var want []dag.ID
	for _, id := range log {
		if !hasChild[id] {
			want = append(want, id)
		}
	}
	if !slices.Equal(sorted(heads...), sorted(want...)) || !slices.IsSortedFunc(heads, dag.ID.Compare) {
		return fmt.Errorf("heads = %v, want %v (sorted)", heads, sorted(want...))
	}
	pending, err := s.Pending(ctx, space)
	if err != nil {
		return err
	}
	for _, id := range pending {
		if st, err := s.Has(ctx, id); err != nil || st != dag.Pending {
			return fmt.Errorf("Has(pending %s) = %v, %v", id, st, err)
		}
		if _, ok := pos[id]; ok {
			return fmt.Errorf("%s both pending and applied", id)
		}
		// A pending entry's record is not readable through Get, so its
		// parents are judged through Missing below.
	}
	m, err := s.Missing(ctx, space)
	if err != nil {
		return err
	}
	for _, id := range m {
		if st, err := s.Has(ctx, id); err != nil {
			return err
		} else if st != dag.Absent {
			if e, err := s.Get(ctx, id); err == nil && e.Space == space {
				return fmt.Errorf("missing list holds %s, which is applied in the space", id)
			}
			if slices.Contains(pending, id) {
				return fmt.Errorf("missing list holds %s, which is pending in the space", id)
			}
		}
	}
	// (A pending entry may wait for no parent: Batch.Admit held it back.
	// So pending entries with nothing missing are not an inconsistency.)
	q, err := s.Quarantine(ctx, space)
	if err != nil {
		return err
	}
	for i, r := range q {
		if i > 0 && q[i-1].ID.Compare(r.ID) >= 0 {
			return fmt.Errorf("quarantine not sorted by id at %s", r.ID)
		}
		if r.Code == "" {
			return fmt.Errorf("quarantined %s has no code", r.ID)
		}
		if st, err := s.Has(ctx, r.ID); err != nil || st != dag.Quarantined {
			return fmt.Errorf("Has(quarantined %s) = %v, %v", r.ID, st, err)
		}
		if _, ok := pos[r.ID]; ok || slices.Contains(pending, r.ID) || slices.Contains(m, r.ID) {
			return fmt.Errorf("quarantined %s is also applied, pending or missing", r.ID)
		}
	}
	return nil
}

// testConcurrent puts chains of several spaces from several goroutines,
// each in small batches, while others read; run it with -race.
func testConcurrent(t *testing.T, s dag.Store) {
	const writers, n = 4, 40
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(2)
		space := fmt.Sprintf("c%d", w)
		c := chain(space, uint32(w), n)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i += 4 {
				// Deliver each group of four in reverse: promotions too.
				b := []dag.Entry{c[i+3], c[i+2], c[i+1], c[i]}
				if _, err := s.Put(ctx, dag.Batch{Entries: b}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if _, err := s.Heads(ctx, space); err != nil {
					t.Error(err)
				}
				if _, err := s.Has(ctx, c[i].ID); err != nil {
					t.Error(err)
				}
				if _, err := s.Log(ctx, space, 0, 5); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for w := 0; w < writers; w++ {
		space := fmt.Sprintf("c%d", w)
		c := chain(space, uint32(w), n)
		heads, _ := s.Heads(ctx, space)
		eq(t, "Heads of "+space, heads, ids(c[n-1]))
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}
