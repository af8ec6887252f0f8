package storetest

// Conformance of the validation hook, Batch.Admit: refused entries and
// their descendants are quarantined durably, in the same transaction,
// whatever the order entries arrive in.

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

// judge is an Admit hook that refuses the entries in bad with code
// not_authorized and records the order it was called in.
type judge struct {
	bad    map[dag.ID]bool
	calls  []dag.ID
	seen   map[dag.ID]bool // admitted
	parent error           // first call whose parent was not admitted before
}

func newJudge(bad ...dag.Entry) *judge {
	j := &judge{bad: map[dag.ID]bool{}, seen: map[dag.ID]bool{}}
	for _, e := range bad {
		j.bad[e.ID] = true
	}
	return j
}

func (j *judge) admit(e dag.Entry) error {
	j.calls = append(j.calls, e.ID)
	for _, p := range e.Parents {
		if !j.seen[p] && j.parent == nil {
			j.parent = fmt.Errorf("Admit(%s) called before its parent %s was admitted", e.ID, p)
		}
	}
	if j.bad[e.ID] {
		return dag.Errorf(dag.CodeNotAuthorized, "refused %s", e.ID)
	}
	j.seen[e.ID] = true
	return nil
}

func putJudged(t *testing.T, s dag.Store, j *judge, es ...dag.Entry) dag.Result {
	t.Helper()
	r, err := s.Put(ctx, dag.Batch{Entries: es, Admit: j.admit})
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if j.parent != nil {
		t.Fatal(j.parent)
	}
	return r
}

func quarantineOf(t *testing.T, s dag.Store, space string) []dag.Rejection {
	t.Helper()
	q, err := s.Quarantine(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func rejIDs(rs []dag.Rejection) []dag.ID {
	out := make([]dag.ID, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func status(t *testing.T, s dag.Store, e dag.Entry, want dag.Status) {
	t.Helper()
	if st, err := s.Has(ctx, e.ID); err != nil || st != want {
		t.Errorf("Has(%s) = %v, %v; want %v", e.ID, st, err, want)
	}
}

// A refused entry is quarantined with its code, its descendants with
// unknown_parent; neither is applied, pending, missing or judged again.
func testAdmitQuarantine(t *testing.T, s dag.Store) {
	c := chain("s", 40, 5)
	j := newJudge(c[2])
	r := putJudged(t, s, j, c...)
	eq(t, "Applied", r.Applied, ids(c[0], c[1]))
	eq(t, "Pending", r.Pending, nil)
	eq(t, "Result.Quarantined", rejIDs(r.Quarantined), ids(c[2], c[3], c[4]))
	eq(t, "Admit calls", j.calls, ids(c[0], c[1], c[2]))
	q := quarantineOf(t, s, "s")
	want := []dag.Rejection{
		{ID: c[2].ID, Code: dag.CodeNotAuthorized, Detail: "refused " + c[2].ID.String()}, // the code is not repeated in the detail
		{ID: c[3].ID, Code: dag.CodeUnknownParent, Detail: "parent quarantined: " + c[2].ID.String()},
		{ID: c[4].ID, Code: dag.CodeUnknownParent, Detail: "parent quarantined: " + c[3].ID.String()},
	}
	slices.SortFunc(want, func(a, b dag.Rejection) int { return a.ID.Compare(b.ID) })
	eq(t, "Quarantine", q, want)
	for _, e := range c[2:] {
		status(t, s, e, dag.Quarantined)
		if _, err := s.Get(ctx, e.ID); !errors.Is(err, dag.ErrNotFound) {
			t.Errorf("Get(quarantined %s): err = %v, want ErrNotFound", e.ID, err)
		}
	}
	heads, _ := s.Heads(ctx, "s")
	eq(t, "Heads", heads, ids(c[1]))

	// Again, and a late child of a quarantined entry: not judged.
	late := dagtest.NewEntry("s", 40, 10, []dag.ID{c[4].ID})
	j.calls = nil
	r = putJudged(t, s, j, c[2], late)
	eq(t, "Duplicate", r.Duplicate, ids(c[2]))
	eq(t, "Result.Quarantined", rejIDs(r.Quarantined), ids(late))
	eq(t, "Admit calls", j.calls, nil)
	other := c[3]
	other.Data = []byte(`{"other":true}`)
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{other}}); !errors.Is(err, dag.ErrConflict) {
		t.Errorf("another entry under a quarantined id: err = %v, want ErrConflict", err)
	}
	if q := quarantineOf(t, s, "elsewhere"); len(q) != 0 {
		t.Errorf("Quarantine of an unknown space = %v", q)
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

// Pending entries are judged when they are promoted, parents first, and
// refused ones take their waiting descendants (held earlier) with them.
func testAdmitPromoted(t *testing.T, s dag.Store) {
	c := chain("s", 41, 5)
	side := dagtest.NewEntry("s", 41, 20, []dag.ID{c[3].ID})
	j := newJudge(c[3])
	r := putJudged(t, s, j, side, c[4], c[2], c[1])
	eq(t, "Pending", r.Pending, ids(side, c[4], c[2], c[1]))
	eq(t, "Admit calls", j.calls, nil)
	m, _ := s.Missing(ctx, "s")
	eq(t, "Missing", m, sorted(c[0].ID, c[3].ID))
	putJudged(t, s, j, c[0])
	eq(t, "Admit calls", j.calls, ids(c[0], c[1], c[2]))
	r = putJudged(t, s, j, c[3])
	eq(t, "Applied", r.Applied, nil)
	if got := rejIDs(r.Quarantined); len(got) != 3 || got[0] != c[3].ID {
		t.Errorf("Result.Quarantined = %v, want %s first (it was judged)", got, c[3].ID)
	}
	eq(t, "Quarantine", rejIDs(quarantineOf(t, s, "s")), sorted(c[3].ID, c[4].ID, side.ID))
	for _, e := range []dag.Entry{c[3], c[4], side} {
		status(t, s, e, dag.Quarantined)
	}
	p, _ := s.Pending(ctx, "s")
	eq(t, "Pending", p, nil)
	m, _ = s.Missing(ctx, "s")
	eq(t, "Missing", m, nil)
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

// An entry waiting on a missing parent and on a quarantined one is
// quarantined at once: it can never be applied.
func testAdmitWaitingOnRefused(t *testing.T, s dag.Store) {
	a := dagtest.NewEntry("s", 42, 0, nil)
	bad := dagtest.NewEntry("s", 42, 1, nil)
	missing := dagtest.NewEntry("s", 42, 2, nil)
	child := dagtest.NewEntry("s", 42, 3, []dag.ID{missing.ID, bad.ID})
	j := newJudge(bad)
	putJudged(t, s, j, a, child)
	m, _ := s.Missing(ctx, "s")
	eq(t, "Missing", m, sorted(missing.ID, bad.ID))
	r := putJudged(t, s, j, bad)
	eq(t, "Result.Quarantined", rejIDs(r.Quarantined), ids(bad, child))
	m, _ = s.Missing(ctx, "s")
	eq(t, "Missing", m, nil)
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}

// An Admit error without a code fails the whole Put: nothing is written,
// pending entries stay pending.
func testAdmitFailure(t *testing.T, s dag.Store) {
	c := chain("s", 43, 3)
	put(t, s, c[1], c[2])
	boom := errors.New("disk on fire")
	_, err := s.Put(ctx, dag.Batch{Entries: c[:1], Objects: []dag.Object{dag.NewObject([]byte("o"))},
		Admit: func(e dag.Entry) error {
			if e.ID == c[2].ID {
				return boom
			}
			return nil
		}})
	if !errors.Is(err, boom) {
		t.Fatalf("Put with a failing Admit: err = %v, want it wrapped", err)
	}
	status(t, s, c[0], dag.Absent)
	status(t, s, c[1], dag.Pending)
	status(t, s, c[2], dag.Pending)
	if _, err := s.Object(ctx, dag.Sum([]byte("o"))); !errors.Is(err, dag.ErrNotFound) {
		t.Errorf("a failed Put wrote its object: %v", err)
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
	r := put(t, s, c[0])
	eq(t, "Applied", r.Applied, ids(c...))
}

// propAdmitAnyOrder: whatever the arrival order, batching and duplication,
// a deterministic Admit gives the same applied set, quarantine (ids and
// codes) and heads as putting the DAG in causal order, and Admit sees every
// entry at most once, after its parents.
func propAdmitAnyOrder(t *rapid.T, s dag.Store, space string) {
	d := dagtest.DAGs(dagtest.DAGOptions{Space: space, MaxEntries: 20}).Draw(t, "dag")
	salt := rapid.Byte().Draw(t, "salt")
	bad := func(id dag.ID) bool { return (id.Digest()[0]^salt)%5 == 0 }
	newHook := func() (func(dag.Entry) error, *error) {
		seen := map[dag.ID]bool{}
		var fault error
		return func(e dag.Entry) error {
			if seen[e.ID] && fault == nil {
				fault = fmt.Errorf("Admit(%s) twice", e.ID)
			}
			seen[e.ID] = true
			for _, p := range e.Parents {
				if !seen[p] && fault == nil {
					fault = fmt.Errorf("Admit(%s) before its parent %s", e.ID, p)
				}
			}
			if bad(e.ID) {
				return dag.Errorf(dag.CodeNotAuthorized, "bad")
			}
			return nil
		}, &fault
	}
	hook, fault := newHook()
	arrivals := dagtest.Arrivals(d).Draw(t, "arrivals")
	for _, b := range dagtest.Batches(arrivals).Draw(t, "batches") {
		if _, err := s.Put(ctx, dag.Batch{Entries: b, Admit: hook}); err != nil {
			t.Fatal(err)
		}
		if *fault != nil {
			t.Fatal(*fault)
		}
		if err := CheckSpace(ctx, s, space); err != nil {
			t.Fatal(err)
		}
	}
	ref := dagtest.NewReference()
	refHook, _ := newHook()
	if _, err := ref.Put(dag.Batch{Entries: d.Entries, Admit: refHook}); err != nil {
		t.Fatal(err)
	}
	type view struct {
		log, heads, pending, missing []dag.ID
		quar                         []string
	}
	var got, want view
	got.log, _ = s.Log(ctx, space, 0, 0)
	slices.SortFunc(got.log, dag.ID.Compare)
	got.heads, _ = s.Heads(ctx, space)
	got.pending, _ = s.Pending(ctx, space)
	got.missing, _ = s.Missing(ctx, space)
	q, _ := s.Quarantine(ctx, space)
	got.quar = rejections(q)
	want.log = ref.Log(space)
	slices.SortFunc(want.log, dag.ID.Compare)
	want.heads, want.pending, want.missing = ref.Heads(space), ref.Pending(space), ref.Missing(space)
	want.quar = rejections(ref.Quarantine(space))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after arrival in any order:\n%v\nin causal order:\n%v", got, want)
	}
	if len(got.pending)+len(got.missing) != 0 {
		t.Fatalf("pending %v, missing %v after every entry arrived", got.pending, got.missing)
	}
	for _, e := range d.Entries {
		st, _ := s.Has(ctx, e.ID)
		wantSt := dag.Applied
		if bad(e.ID) {
			wantSt = dag.Quarantined
		}
		for _, p := range e.Parents {
			if ref.Has(p) == dag.Quarantined {
				wantSt = dag.Quarantined
			}
		}
		if st != wantSt {
			t.Fatalf("Has(%s) = %v, want %v", e.ID, st, wantSt)
		}
	}
}

// Admit may read committed objects: a validator needs the objects an
// entry names (a change, a group object).
func testAdmitReadsObjects(t *testing.T, s dag.Store) {
	o := dag.NewObject([]byte("named"))
	if _, err := s.Put(ctx, dag.Batch{Objects: []dag.Object{o}}); err != nil {
		t.Fatal(err)
	}
	e := dagtest.NewEntry("s", 44, 0, nil)
	_, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{e}, Admit: func(dag.Entry) error {
		_, err := s.Object(ctx, o.ID)
		return err
	}})
	if err != nil {
		t.Fatalf("Admit reading a committed object: %v", err)
	}
	status(t, s, e, dag.Applied)
}

// An entry Admit holds back (ErrHold) stays pending with what waits on
// it, is not listed missing, and is judged again when put again.
func testAdmitHold(t *testing.T, s dag.Store) {
	c := chain("s", 45, 4)
	ready := false
	hook := func(e dag.Entry) error {
		if e.ID == c[1].ID && !ready {
			return fmt.Errorf("%w: object not here", dag.ErrHold)
		}
		return nil
	}
	r, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{c[2], c[0], c[1]}, Admit: hook})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Applied", r.Applied, ids(c[0]))
	eq(t, "Pending", r.Pending, ids(c[2], c[1]))
	status(t, s, c[1], dag.Pending)
	m, _ := s.Missing(ctx, "s")
	eq(t, "Missing", m, nil)
	// Put again while still held back, and with a child: nothing moves.
	r, err = s.Put(ctx, dag.Batch{Entries: []dag.Entry{c[1], c[3]}, Admit: hook})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Applied", r.Applied, nil)
	eq(t, "Pending", r.Pending, ids(c[1], c[3]))
	ready = true
	r, err = s.Put(ctx, dag.Batch{Entries: []dag.Entry{c[1]}, Admit: hook})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Applied", r.Applied, ids(c[1], c[2], c[3]))
	eq(t, "Duplicate", r.Duplicate, nil)
	p, _ := s.Pending(ctx, "s")
	eq(t, "Pending", p, nil)
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}
