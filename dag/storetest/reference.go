package storetest

import (
	"fmt"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
	"pgregory.net/rapid"
)

// propReference: the store and dagtest.Reference, the naive model, given
// the same Puts, report the same thing after every one of them: each Put's
// applied, quarantined (with codes) and pending entries, and every entry's
// status, the heads, children, pending, missing and quarantine of each
// space, and a log that is the model's as a set and a linear extension of
// the DAG. The entries are two random DAGs in two spaces and one entry of
// the second space whose parent lives in the first (it waits forever);
// Admit, when there is one, refuses some entries and holds some back until
// a later Put. Every entry arrives at least once, in any order and
// batching, some of them again.
func propReference(t *rapid.T, s dag.Store, prefix string) {
	spaceA, spaceB := prefix+"/a", prefix+"/b"
	da := dagtest.DAGs(dagtest.DAGOptions{Space: spaceA, MaxEntries: 12}).Draw(t, "a")
	db := dagtest.DAGs(dagtest.DAGOptions{Space: spaceB, MaxEntries: 12}).Draw(t, "b")
	stranger := dagtest.NewEntry(spaceB, 7, 99, []dag.ID{da.Entries[0].ID})
	all := dagtest.DAG{Entries: slices.Concat(da.Entries, db.Entries, []dag.Entry{stranger})}
	batches := dagtest.Batches(dagtest.Arrivals(all).Draw(t, "arrivals")).Draw(t, "batches")

	var admit func(dag.Entry) error
	puts := 0
	if rapid.Bool().Draw(t, "admit") {
		salt := rapid.Byte().Draw(t, "salt")
		release := rapid.IntRange(0, len(batches)).Draw(t, "release")
		admit = func(e dag.Entry) error {
			switch d := e.ID.Digest()[0] ^ salt; {
			case d%7 == 0:
				return dag.Errorf(dag.CodeNotAuthorized, "refused")
			case d%5 == 0 && puts < release:
				return fmt.Errorf("%w: until put %d", dag.ErrHold, release)
			}
			return nil
		}
	}
	ref := dagtest.NewReference()
	for _, b := range batches {
		got, err := s.Put(ctx, dag.Batch{Entries: b, Admit: admit})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Put(dag.Batch{Entries: b, Admit: admit})
		if err != nil {
			t.Fatal(err)
		}
		puts++
		compareResult(t, got, want)
		for _, e := range all.Entries {
			st, err := s.Has(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := ref.Has(e.ID); st != want {
				t.Fatalf("after put %d: Has(%s) = %v, the model says %v", puts, e.ID, st, want)
			}
			ch, err := s.Children(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := ref.Children(e.ID); !sameIDs(ch, want) {
				t.Fatalf("after put %d: Children(%s) = %v, the model says %v", puts, e.ID, ch, want)
			}
		}
		for _, sp := range []string{spaceA, spaceB} {
			compareSpace(t, s, ref, sp, all.ParentMap())
			if err := CheckSpace(ctx, s, sp); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func compareResult(t *rapid.T, got, want dag.Result) {
	if !sameSet(got.Applied, want.Applied) {
		t.Fatalf("Result.Applied = %v, the model applied %v", got.Applied, want.Applied)
	}
	if !sameSet(got.Pending, want.Pending) {
		t.Fatalf("Result.Pending = %v, the model says %v", got.Pending, want.Pending)
	}
	if g, w := rejections(got.Quarantined), rejections(want.Quarantined); !sameSet(g, w) {
		t.Fatalf("Result.Quarantined = %v, the model says %v", g, w)
	}
	// The model lists a pending entry put again and not judged then (its
	// parents were not all applied before the Put), or repeated in the
	// batch, as a duplicate; a store may instead list such an entry only
	// where the Put left it (applied, pending or quarantined). Nothing
	// else differs.
	for _, id := range got.Duplicate {
		if !slices.Contains(want.Duplicate, id) {
			t.Fatalf("Result.Duplicate lists %s, the model does not", id)
		}
	}
	for _, id := range want.Duplicate {
		if !slices.Contains(got.Duplicate, id) && !slices.Contains(got.Applied, id) && !slices.Contains(got.Pending, id) &&
			!slices.ContainsFunc(got.Quarantined, func(r dag.Rejection) bool { return r.ID == id }) {
			t.Fatalf("Result.Duplicate = %v misses %s, which the model lists", got.Duplicate, id)
		}
	}
}

func compareSpace(t *rapid.T, s dag.Store, ref *dagtest.Reference, space string, pm dag.ParentMap) {
	heads, err := s.Heads(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if want := ref.Heads(space); !sameIDs(heads, want) {
		t.Fatalf("Heads(%s) = %v, the model says %v", space, heads, want)
	}
	log, err := s.Log(ctx, space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := ref.Log(space); !sameSet(log, want) {
		t.Fatalf("Log(%s) = %v, the model applied %v", space, log, want)
	}
	sub := dag.ParentMap{}
	for _, id := range log {
		sub[id] = pm[id]
	}
	if !dagtest.IsLinearExtension(sub, log) {
		t.Fatalf("Log(%s) is not a linear extension of the DAG", space)
	}
	pending, err := s.Pending(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if want := ref.Pending(space); !sameIDs(pending, want) {
		t.Fatalf("Pending(%s) = %v, the model says %v", space, pending, want)
	}
	missing, err := s.Missing(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if want := ref.Missing(space); !sameIDs(missing, want) {
		t.Fatalf("Missing(%s) = %v, the model says %v", space, missing, want)
	}
	q, err := s.Quarantine(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := rejections(q), rejections(ref.Quarantine(space)); !slices.Equal(g, w) {
		t.Fatalf("Quarantine(%s) = %v, the model says %v", space, g, w)
	}
}

// rejections lists rejections as "id code": the detail may name a
// different quarantined parent when there are several.
func rejections(rs []dag.Rejection) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID.String() + " " + string(r.Code)
	}
	return out
}

// sameIDs reports whether a and b hold the same ids in the same order,
// nil and empty alike.
func sameIDs(a, b []dag.ID) bool { return len(a)+len(b) == 0 || slices.Equal(a, b) }

// sameSet reports whether a and b hold the same elements, repeats aside.
func sameSet[T comparable](a, b []T) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
