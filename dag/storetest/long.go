package storetest

// Conformance of long promotions: a pending chain longer than a backend
// can write in one transaction, completed by one Put.

import (
	"slices"
	"strconv"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// LongChain is the length of the chains the long-promotion tests put
// children first: 10 000, enough to exceed one Badger transaction with the
// default memtable (about 3 500 promotions of these entries); 3000 with
// -short (a backend's test then makes its transactions smaller to be
// tested all the same: badgerstore uses 4 MiB memtables).
func longChainLen() int {
	if testing.Short() {
		return 3000
	}
	return 10_000
}

// longChain returns n entries of space, each the parent of the next, with
// about 300 bytes of data each.
func longChain(space string, n int) []dag.Entry {
	pad := make([]byte, 300)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	out := make([]dag.Entry, n)
	for i := range out {
		d := strconv.AppendInt([]byte(space+"/"), int64(i), 10)
		d = append(append(d, '/'), pad...)
		out[i] = dag.Entry{ID: dag.Sum(d), Space: space, Data: d}
		if i > 0 {
			out[i].Parents = []dag.ID{out[i-1].ID}
		}
	}
	return out
}

func entry(space, name string, parents ...dag.ID) dag.Entry {
	d := []byte(space + "/" + name)
	return dag.Entry{ID: dag.Sum(d), Space: space, Parents: parents, Data: d}
}

// putChildrenFirst puts es in batches of 1000, the last batch first and
// each batch in reverse order, so that every entry waits for its parent.
func putChildrenFirst(t *testing.T, s dag.Store, es []dag.Entry) {
	t.Helper()
	for end := len(es); end > 0; end -= 1000 {
		b := slices.Clone(es[max(0, end-1000):end])
		slices.Reverse(b)
		r := put(t, s, b...)
		if len(r.Applied) != 0 {
			t.Fatalf("children first: %d entries applied before their parents arrived", len(r.Applied))
		}
	}
}

// testLongPromotion: a long chain (10 000) put children first waits as
// pending; the batch that brings its root also brings entries behind its
// tip (one of them also waiting for a parent that never comes), and a
// branch off the root. One Put applies everything, parents first, in the
// order of the log.
func testLongPromotion(t *testing.T, s dag.Store) {
	const sp = "long"
	c := longChain(sp, longChainLen())
	putChildrenFirst(t, s, c[1:len(c)-1])
	if p, _ := s.Pending(ctx, sp); len(p) != len(c)-2 {
		t.Fatalf("%d pending, want %d", len(p), len(c)-2)
	}
	fork := entry(sp, "fork", c[0].ID)
	tip := c[len(c)-1]
	merge := entry(sp, "merge", tip.ID, fork.ID)
	absent := dag.Sum([]byte("never sent"))
	stuck := entry(sp, "stuck", c[len(c)-2].ID, absent)
	r := put(t, s, merge, stuck, c[0], fork, tip)
	if len(r.Applied) != len(c)+2 || len(r.Pending) != 1 || r.Pending[0] != stuck.ID || len(r.Duplicate) != 0 {
		t.Fatalf("Put of the root: %d applied, pending %v, duplicate %v; want %d applied and %s pending",
			len(r.Applied), r.Pending, r.Duplicate, len(c)+2, stuck.ID)
	}
	log, err := s.Log(ctx, sp, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Result.Applied (the log order)", r.Applied, log)
	heads, _ := s.Heads(ctx, sp)
	eq(t, "Heads", heads, ids(merge))
	pending, _ := s.Pending(ctx, sp)
	eq(t, "Pending", pending, ids(stuck))
	missing, _ := s.Missing(ctx, sp)
	eq(t, "Missing", missing, []dag.ID{absent})
	order, err := dag.SpaceOrder(ctx, s, sp)
	if err != nil {
		t.Fatal(err)
	}
	pm := dag.ParentMap{fork.ID: fork.Parents, merge.ID: merge.Parents}
	for _, e := range c {
		pm[e.ID] = e.Parents
	}
	want, err := dag.TopoOrder(ctx, pm, ids(merge))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "SpaceOrder", order, want)
	for _, i := range []int{0, 1, len(c) / 2, len(c) - 1} {
		if st, err := s.Has(ctx, c[i].ID); err != nil || st != dag.Applied {
			t.Errorf("Has(chain[%d]) = %v, %v", i, st, err)
		}
		if ch, _ := s.Children(ctx, c[i].ID); i < len(c)-1 && (len(ch) == 0 || !slices.Contains(ch, c[i+1].ID)) {
			t.Errorf("Children(chain[%d]) = %v", i, ch)
		}
	}
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
	// The store goes on as usual.
	after := entry(sp, "after", merge.ID)
	if r := put(t, s, after); len(r.Applied) != 1 {
		t.Errorf("Put after the promotion: %+v", r)
	}
	if p, _ := s.Position(ctx, after.ID); p != uint64(len(c)+3) {
		t.Errorf("Position(after) = %d, want %d", p, len(c)+3)
	}
}

// testLongQuarantine: Admit refuses an entry in the middle of a long
// pending chain; the Put that brings the root applies the chain up to it
// and quarantines it and everything after it.
func testLongQuarantine(t *testing.T, s dag.Store) {
	const sp = "longq"
	c := longChain(sp, longChainLen())
	half := len(c) / 2
	j := newJudge(c[half])
	putChildrenFirst(t, s, c[1:])
	r := putJudged(t, s, j, c[0])
	eq(t, "Applied", r.Applied, ids(c[:half]...))
	if len(r.Quarantined) != len(c)-half {
		t.Fatalf("%d quarantined, want %d", len(r.Quarantined), len(c)-half)
	}
	if len(j.calls) != half+1 {
		t.Errorf("Admit called %d times, want %d (the applied entries and the refused one)", len(j.calls), half+1)
	}
	q := quarantineOf(t, s, sp)
	eq(t, "Quarantine", rejIDs(q), sorted(ids(c[half:]...)...))
	for _, rej := range q {
		want := dag.CodeUnknownParent
		if rej.ID == c[half].ID {
			want = dag.CodeNotAuthorized
		}
		if rej.Code != want {
			t.Fatalf("quarantined %s with %s, want %s", rej.ID, rej.Code, want)
		}
	}
	heads, _ := s.Heads(ctx, sp)
	eq(t, "Heads", heads, ids(c[half-1]))
	pending, _ := s.Pending(ctx, sp)
	eq(t, "Pending", pending, nil)
	if err := Check(ctx, s); err != nil {
		t.Error(err)
	}
}
