package badgerstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
)

func TestConformanceInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) dag.Store {
		// 4 MiB memtables: the long-promotion tests span several
		// transactions even with -short's shorter chains.
		s, err := badgerstore.Open("", badgerstore.Options{InMemory: true, MemTableSize: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// The suite again with transactions of a few entries and plans of five
// promotions: every promotion of more than two or three entries is split,
// and planned in rounds, in any DAG, any arrival order and with Admit (the
// rapid properties), so the split must never show.
func TestConformanceSmallTransactions(t *testing.T) {
	storetest.Run(t, func(t *testing.T) dag.Store {
		s, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		badgerstore.SetLimits(s, 24, 6000, 24, 6000)
		badgerstore.SetRound(s, 5)
		return s
	})
}

func TestConformanceOnDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("on-disk conformance is slow; the in-memory run covers the logic")
	}
	storetest.Run(t, func(t *testing.T) dag.Store {
		s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Reopening a store finds every entry, index, head, pending entry and log
// position as it was, and later puts continue the log.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openDisk(t, dir)
	var es []dag.Entry
	var parents []dag.ID
	for i := 0; i < 5; i++ {
		e := dagtest.NewEntry("s", 1, i, parents)
		es = append(es, e)
		parents = []dag.ID{e.ID}
	}
	other := dagtest.NewEntry("t", 1, 0, nil)
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{es[0], es[1], es[3], other}}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir)
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Missing(ctx, "s"); len(m) != 1 || m[0] != es[2].ID {
		t.Fatalf("Missing after reopen = %v", m)
	}
	r, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{es[2], es[4]}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Applied) != 3 {
		t.Fatalf("Applied = %v, want the missing entry and the two it unblocks", r.Applied)
	}
	for i, e := range es {
		if pos, err := s.Position(ctx, e.ID); err != nil || pos != uint64(i+1) {
			t.Errorf("Position(%d) = %d, %v", i, pos, err)
		}
	}
	if pos, _ := s.Position(ctx, other.ID); pos != 1 {
		t.Errorf("Position in the other space = %d, want 1", pos)
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Bodies are numbered by a counter kept in the store (format 6): the
	// bodies written after the reopen must not reuse the numbers of those
	// written before it.
	for i, e := range append(es, other) {
		got, err := s.Get(ctx, e.ID)
		if err != nil || !bytes.Equal(got.Data, e.Data) || !slices.Equal(got.Parents, e.Parents) {
			t.Errorf("entry %d reads back as %q %v, %v", i, got.Data, got.Parents, err)
		}
	}
}

// A batch too big for one Badger transaction fails whole, as documented,
// and the store stays usable: what the store wrote of it before Badger
// refused the transaction left the applied index with it, so the same
// entries put again are stored, not taken for duplicates.
func TestBatchTooBig(t *testing.T) {
	ctx := context.Background()
	s, err := badgerstore.Open("", badgerstore.Options{InMemory: true, MemTableSize: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var es []dag.Entry
	for i := 0; i < 2000; i++ {
		es = append(es, dagtest.NewEntry("s", 2, i, nil))
	}
	_, err = s.Put(ctx, dag.Batch{Entries: es})
	if !errors.Is(err, badger.ErrTxnTooBig) {
		t.Fatalf("err = %v, want badger.ErrTxnTooBig", err)
	}
	if st, _ := s.Has(ctx, es[0].ID); st != dag.Absent {
		t.Fatalf("a failed batch wrote an entry: %v", st)
	}
	if n := len(badgerstore.AppliedRecords(s)); n != 0 {
		t.Fatalf("%d entries in the applied index after the failed batch", n)
	}
	r, err := s.Put(ctx, dag.Batch{Entries: es[:10]})
	if err != nil {
		t.Fatalf("a small batch after the failure: %v", err)
	}
	eq(t, "Applied", r.Applied, ids(es[:10]))
	for _, e := range es[:10] {
		if got, err := s.Get(ctx, e.ID); err != nil || !bytes.Equal(got.Data, e.Data) {
			t.Fatalf("Get of an entry put after the failure: %v", err)
		}
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// The quarantine survives a reopen: a refused entry stays refused (a Put
// of it again is a duplicate, not judged), and a child that arrives after
// the reopen is quarantined through it.
func TestReopenQuarantine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openDisk(t, dir)
	a := dagtest.NewEntry("s", 3, 0, nil)
	bad := dagtest.NewEntry("s", 3, 1, []dag.ID{a.ID})
	refuse := func(e dag.Entry) error {
		if e.ID == bad.ID {
			return dag.Errorf(dag.CodeNotAuthorized, "no")
		}
		return nil
	}
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{a, bad}, Admit: refuse}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir)
	q, err := s.Quarantine(ctx, "s")
	if err != nil || len(q) != 1 || q[0] != (dag.Rejection{ID: bad.ID, Code: dag.CodeNotAuthorized, Detail: "no"}) {
		t.Fatalf("Quarantine after reopen = %v, %v", q, err)
	}
	child := dagtest.NewEntry("s", 3, 2, []dag.ID{bad.ID})
	r, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{bad, child}, Admit: func(dag.Entry) error {
		t.Error("Admit called for an entry the store already judged")
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Duplicate) != 1 || len(r.Quarantined) != 1 || r.Quarantined[0].ID != child.ID {
		t.Fatalf("Put after reopen = %+v", r)
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// A store written in another key layout is refused, not misread.
func TestFormat(t *testing.T) {
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, badgerstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e := dag.Entry{ID: dag.Sum([]byte("x")), Space: "s", Data: []byte("x")}
	if _, err := s.Put(context.Background(), dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		t.Fatal(err)
	}
	// Format 1 had no format key.
	if err := s.DB().Update(func(txn *badger.Txn) error { return txn.Delete([]byte("mfmt")) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := badgerstore.Open(dir, badgerstore.Options{}); !errors.Is(err, badgerstore.ErrFormat) {
		t.Fatalf("Open of a format-1 store: %v, want ErrFormat", err)
	}
}

// A parent just before its child in the log has no children index key
// (format 11): Children finds that child from the log. A format-10 store,
// which has a key for every edge, is read as it is (each child once) and
// marked 11 on opening.
func TestImplicitChildAndFormat10(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openDisk(t, dir)
	// Log positions 1 to 5: r; a and b on r; c on a and b; d on c. The
	// edges r→a, b→c and c→d join neighbours in the log; r→b and a→c
	// do not.
	r := dagtest.NewEntry("s", 1, 0, nil)
	a := dagtest.NewEntry("s", 1, 1, []dag.ID{r.ID})
	b := dagtest.NewEntry("s", 1, 2, []dag.ID{r.ID})
	c := dagtest.NewEntry("s", 1, 3, []dag.ID{a.ID, b.ID})
	d := dagtest.NewEntry("s", 1, 4, []dag.ID{c.ID})
	for _, e := range []dag.Entry{r, a, b, c, d} {
		if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
			t.Fatal(err)
		}
	}
	if log, _ := s.Log(ctx, "s", 0, 0); !slices.Equal(log, []dag.ID{r.ID, a.ID, b.ID, c.ID, d.ID}) {
		t.Fatalf("log %v, want r a b c d", log)
	}
	sorted := func(ids ...dag.ID) []dag.ID { return slices.SortedFunc(slices.Values(ids), dag.ID.Compare) }
	want := map[string][]dag.ID{"r": sorted(a.ID, b.ID), "a": {c.ID}, "b": {c.ID}, "c": {d.ID}, "d": {}}
	byName := map[string]dag.ID{"r": r.ID, "a": a.ID, "b": b.ID, "c": c.ID, "d": d.ID}
	check := func(when string) {
		t.Helper()
		for name, id := range byName {
			got, err := s.Children(ctx, id)
			if err != nil || !slices.Equal(got, want[name]) {
				t.Fatalf("%s: Children(%s) = %v, %v; want %v", when, name, got, err, want[name])
			}
		}
	}
	check("format 11")
	if n := keysUnder(s, 'c'); n != 2 {
		t.Fatalf("%d children index keys, want 2 (r→b, a→c)", n)
	}
	// What format 10 wrote: a key for every edge.
	err := s.DB().Update(func(txn *badger.Txn) error {
		for _, e := range [][2]dag.ID{{r.ID, a.ID}, {b.ID, c.ID}, {c.ID, d.ID}} {
			k, err := badgerstore.ChildKey(s, e[0], e[1])
			if err != nil {
				return err
			}
			if err := txn.Set(k, nil); err != nil {
				return err
			}
		}
		return txn.Set([]byte("mfmt"), []byte{0, 0, 0, 10})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(s, 'c'); n != 5 {
		t.Fatalf("%d children index keys, want 5", n)
	}
	s = reopen(t, s, dir)
	check("format 10")
	if f := formatKey(s); !bytes.Equal(f, []byte{0, 0, 0, badgerstore.Format}) {
		t.Fatalf("format key %x after opening a format-10 store, want %d", f, badgerstore.Format)
	}
}

// Large objects go to Badger's value log on disk; an in-memory store has
// none and refuses them with a short error, writing nothing.
func TestLargeObject(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("x"), 3<<20)
	o := dag.Object{ID: dag.Sum(data), Data: data}
	disk, err := badgerstore.Open(t.TempDir(), badgerstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if _, err := disk.Put(ctx, dag.Batch{Objects: []dag.Object{o}}); err != nil {
		t.Fatalf("on disk: %v", err)
	}
	if got, err := disk.Object(ctx, o.ID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("on disk: read back %d bytes, %v", len(got), err)
	}
	mem, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	_, err = mem.Put(ctx, dag.Batch{Objects: []dag.Object{o}})
	if !errors.Is(err, badgerstore.ErrValueTooLarge) || len(err.Error()) > 300 {
		t.Fatalf("in memory: %.300v", err)
	}
	if _, err := mem.Object(ctx, o.ID); !errors.Is(err, dag.ErrNotFound) {
		t.Fatalf("in memory: refused object is held: %v", err)
	}
}

// openDisk opens a synced store on disk in dir; the test closes it.
func openDisk(t *testing.T, dir string) *badgerstore.Store {
	t.Helper()
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keysUnder counts the keys of s's Badger under the one-byte prefix p.
func keysUnder(s *badgerstore.Store, p byte) int {
	n := 0
	s.DB().View(func(txn *badger.Txn) error { //nolint:errcheck // counts only
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{p}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n
}

// formatKey returns the store format s's Badger records, nil if none.
func formatKey(s *badgerstore.Store) []byte {
	var f []byte
	s.DB().View(func(txn *badger.Txn) error { //nolint:errcheck // nil says it
		item, err := txn.Get([]byte("mfmt"))
		if err == nil {
			f, err = item.ValueCopy(nil)
		}
		return err
	})
	return f
}

// reopen closes s and opens the store in dir again, closed when the test
// ends.
func reopen(t *testing.T, s *badgerstore.Store, dir string) *badgerstore.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDisk(t, dir)
	t.Cleanup(func() { s.Close() })
	return s
}

// A crash between Badger's creating a memtable file and writing to it
// leaves an empty .mem file, which Badger alone refuses to open
// (dgraph-io/badger#2207); the store opens it and keeps what it held.
func TestOpenEmptyMemFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openDisk(t, dir)
	e := dagtest.NewEntry("s", 12, 0, nil)
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00099.mem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openDisk(t, dir)
	defer s.Close()
	if st, err := s.Has(ctx, e.ID); err != nil || st != dag.Applied {
		t.Fatalf("Has = %v, %v", st, err)
	}
}

// Stores of formats 2 (entry data unpacked, before the value log), 3
// (the children index keyed by ids), 4 (an entry's body in its status
// record), 5 (the body keyed by the entry's id), 6 (log runs without
// body numbers), 7 (bodies in Badger's value log), 8 (records in Badger's
// value log, which was not synced with each commit) and 9 (a commit log
// beside Badger's, whose commits Badger alone may lack) are refused too,
// with what to do about it.
func TestFormat2To9(t *testing.T) {
	for _, f := range []byte{2, 3, 4, 5, 6, 7, 8, 9} {
		dir := t.TempDir()
		s, err := badgerstore.Open(dir, badgerstore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DB().Update(func(txn *badger.Txn) error { return txn.Set([]byte("mfmt"), []byte{0, 0, 0, f}) }); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err = badgerstore.Open(dir, badgerstore.Options{})
		if !errors.Is(err, badgerstore.ErrFormat) || !strings.Contains(err.Error(), "sync the store again") {
			t.Fatalf("Open of a format-%d store: %v, want ErrFormat with advice", f, err)
		}
	}
}

// A transaction's map of log positions is kept, emptied, for the next
// one; the next transaction finds its parents' positions all the same
// (read from the store, not from the map), so every edge it indexes
// points at the right parent.
func TestPositionsKeptForTheNextTransaction(t *testing.T) {
	ctx := context.Background()
	s, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if kept, _, _ := badgerstore.KeptPositions(s); kept {
		t.Fatal("a fresh store keeps a map of positions")
	}
	const n = 300
	first := []dag.Entry{dagtest.NewEntry("s", 1, 0, nil)}
	for i := 1; i < n; i++ {
		first = append(first, dagtest.NewEntry("s", 1, i, []dag.ID{first[i-1].ID}))
	}
	if _, err := s.Put(ctx, dag.Batch{Entries: first}); err != nil {
		t.Fatal(err)
	}
	kept, held, room := badgerstore.KeptPositions(s)
	if !kept || held != 0 || room < n {
		t.Fatalf("after a batch of %d: kept %v, %d entries, room %d; want an empty map with room for %d", n, kept, held, room, n)
	}
	// Each entry of the second batch follows the one before it and also
	// names an entry of the first batch, far from it in the log: an edge
	// with a key, whose parent's position the map no longer holds.
	second := make([]dag.Entry, n)
	prev := first[n-1].ID
	for i := range second {
		second[i] = dagtest.NewEntry("s", 2, i, []dag.ID{prev, first[i].ID})
		prev = second[i].ID
	}
	if _, err := s.Put(ctx, dag.Batch{Entries: second}); err != nil {
		t.Fatal(err)
	}
	for i := range n - 1 {
		got, err := s.Children(ctx, first[i].ID)
		want := slices.SortedFunc(slices.Values([]dag.ID{first[i+1].ID, second[i].ID}), dag.ID.Compare)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Children(first[%d]) = %v, %v; want %v", i, got, err, want)
		}
	}
	if kept, held, _ := badgerstore.KeptPositions(s); !kept || held != 0 {
		t.Fatalf("after the second batch: kept %v with %d entries, want an empty map", kept, held)
	}
}
