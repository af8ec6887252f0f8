package badgerstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
)

// seen is what a store answers about an entry through its public reads.
type seen struct {
	Status   dag.Status
	Pos      uint64
	Parents  []dag.ID
	Children []dag.ID
	Data     []byte
}

func look(t *rapid.T, s *badgerstore.Store, id dag.ID) seen {
	ctx := context.Background()
	st, err := s.Has(ctx, id)
	if err != nil {
		t.Fatalf("Has(%s): %v", id, err)
	}
	out := seen{Status: st}
	if st != dag.Applied {
		if _, err := s.Position(ctx, id); !errors.Is(err, dag.ErrNotFound) {
			t.Fatalf("Position of %v entry %s: %v, want ErrNotFound", st, id, err)
		}
		return out
	}
	if out.Pos, err = s.Position(ctx, id); err != nil {
		t.Fatalf("Position(%s): %v", id, err)
	}
	if out.Parents, err = s.Parents(ctx, id); err != nil {
		t.Fatalf("Parents(%s): %v", id, err)
	}
	if out.Children, err = s.Children(ctx, id); err != nil {
		t.Fatalf("Children(%s): %v", id, err)
	}
	e, err := s.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	out.Data = e.Data
	return out
}

// The applied entries' status records are in memory only (format 12):
// Open rebuilds them from the log runs. Whatever a store on disk was
// given (two DAGs arriving in any order, so that entries wait and are
// promoted, some in further transactions; an Admit that refuses some),
// after it is closed and opened again it holds the same records (space,
// position, body number and run) and answers every read about every
// entry as it did.
func TestAppliedIndexRebuiltOnOpen(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		dir := filepath.Join(root, fmt.Sprint(n))
		s, err := badgerstore.Open(dir, badgerstore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { s.Close() }()
		if rapid.Bool().Draw(t, "small transactions") {
			// Promotions in further transactions, two or three at a time.
			k := int64(rapid.IntRange(2, 3).Draw(t, "promotions per transaction"))
			badgerstore.SetLimits(s, k, 1<<20, 0, 0)
		}
		da := dagtest.DAGs(dagtest.DAGOptions{Space: "a", MaxEntries: 30}).Draw(t, "a")
		db := dagtest.DAGs(dagtest.DAGOptions{Space: "b", MaxEntries: 30}).Draw(t, "b")
		all := append(slices.Clone(da.Entries), db.Entries...)
		seq := dagtest.Arrivals(dagtest.DAG{Entries: all}).Draw(t, "arrival")
		admit := func(e dag.Entry) error {
			if e.ID.Digest()[0] < 20 {
				return dag.Errorf(dag.CodeSchema, "refused %s", e.ID)
			}
			return nil
		}
		for _, es := range dagtest.Batches(seq).Draw(t, "batches") {
			if _, err := s.Put(ctx, dag.Batch{Entries: es, Admit: admit}); err != nil {
				t.Fatal(err)
			}
		}
		want := badgerstore.AppliedRecords(s)
		applied := 0
		before := map[dag.ID]seen{}
		for _, e := range all {
			before[e.ID] = look(t, s, e.ID)
			if before[e.ID].Status == dag.Applied {
				applied++
			}
		}
		if len(want) != applied {
			t.Fatalf("%d records in the index, %d entries applied", len(want), applied)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s, err = badgerstore.Open(dir, badgerstore.Options{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		if got := badgerstore.AppliedRecords(s); !maps.Equal(got, want) {
			t.Fatalf("records after reopening:\n%v\nbefore:\n%v", got, want)
		}
		for _, e := range all {
			if got := look(t, s, e.ID); fmt.Sprint(got) != fmt.Sprint(before[e.ID]) {
				t.Fatalf("%s after reopening: %+v, before: %+v", e.ID, got, before[e.ID])
			}
		}
	})
}

// A reader sees an entry exactly when Badger shows its commit: not while
// its bodies are being synced (the index holds it by then), and already
// between Badger's commit returning and the store counting it as landed,
// when Heads, read from Badger, names it.
func TestAppliedEntryVisibleWithItsCommit(t *testing.T) {
	ctx := context.Background()
	s := openDisk(t, t.TempDir())
	defer s.Close()
	r := dagtest.NewEntry("s", 1, 0, nil)
	a := dagtest.NewEntry("s", 1, 1, []dag.ID{r.ID})
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{r}}); err != nil {
		t.Fatal(err)
	}
	var problems []string
	fail := func(f string, args ...any) { problems = append(problems, fmt.Sprintf(f, args...)) }
	badgerstore.SetBodySync(s, func(f *os.File) error {
		if st, err := s.Has(ctx, a.ID); err != nil || st != dag.Absent {
			fail("Has(a) while its bodies sync: %v, %v; want absent", st, err)
		}
		if _, err := s.Get(ctx, a.ID); !errors.Is(err, dag.ErrNotFound) {
			fail("Get(a) while its bodies sync: %v, want ErrNotFound", err)
		}
		if ch, err := s.Children(ctx, r.ID); err != nil || len(ch) != 0 {
			fail("Children(r) while a's bodies sync: %v, %v; want none", ch, err)
		}
		return f.Sync()
	})
	badgerstore.SetLandHook(s, func() {
		heads, err := s.Heads(ctx, "s")
		if err != nil || !slices.Equal(heads, []dag.ID{a.ID}) {
			fail("Heads once a's commit returned: %v, %v; want a", heads, err)
			return
		}
		if st, err := s.Has(ctx, a.ID); err != nil || st != dag.Applied {
			fail("Has(a) once its commit returned: %v, %v; want applied", st, err)
		}
		if e, err := s.Get(ctx, a.ID); err != nil || !bytes.Equal(e.Data, a.Data) {
			fail("Get(a) once its commit returned: %v", err)
		}
		if pos, err := s.Position(ctx, a.ID); err != nil || pos != 2 {
			fail("Position(a) once its commit returned: %d, %v; want 2", pos, err)
		}
		if ps, err := s.Parents(ctx, a.ID); err != nil || !slices.Equal(ps, []dag.ID{r.ID}) {
			fail("Parents(a) once its commit returned: %v, %v", ps, err)
		}
		if ch, err := s.Children(ctx, r.ID); err != nil || !slices.Equal(ch, []dag.ID{a.ID}) {
			fail("Children(r) once a's commit returned: %v, %v; want a", ch, err)
		}
	})
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{a}}); err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	badgerstore.SetLandHook(s, nil)
	badgerstore.SetBodySync(s, nil)
}

// A format-11 store, which kept each applied entry's status record in
// the tree (e id), is read as it is, marked 12 and loses those records on
// opening; so does a format-12 store that still holds some (their drop cut
// off).
func TestFormat11(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openDisk(t, dir)
	r := dagtest.NewEntry("s", 1, 0, nil)
	a := dagtest.NewEntry("s", 1, 1, []dag.ID{r.ID})
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{r, a}}); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(s, 'e'); n != 0 {
		t.Fatalf("%d status records in a format-12 store", n)
	}
	for _, f := range []byte{11, 12} {
		// What format 11 wrote for r and a (space 1, positions 1 and 2,
		// bodies 1 and 2 of the run that starts at 1): the e keys.
		err := s.DB().Update(func(txn *badger.Txn) error {
			for i, id := range []dag.ID{r.ID, a.ID} {
				d := id.Digest()
				if err := txn.Set(append([]byte{'e'}, d[:]...), []byte{1, byte(i + 1), byte(i + 1), byte(i)}); err != nil {
					return err
				}
			}
			return txn.Set([]byte("mfmt"), []byte{0, 0, 0, f})
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := keysUnder(s, 'e'); n != 2 {
			t.Fatalf("%d status records written, want 2", n)
		}
		s = reopen(t, s, dir)
		if n := keysUnder(s, 'e'); n != 0 {
			t.Fatalf("format %d: %d status records after opening, want none", f, n)
		}
		if got := formatKey(s); !bytes.Equal(got, []byte{0, 0, 0, badgerstore.Format}) {
			t.Fatalf("format %d: format key %x after opening, want %d", f, got, badgerstore.Format)
		}
		for i, e := range []dag.Entry{r, a} {
			if pos, err := s.Position(ctx, e.ID); err != nil || pos != uint64(i+1) {
				t.Fatalf("format %d: Position = %d, %v; want %d", f, pos, err, i+1)
			}
			if got, err := s.Get(ctx, e.ID); err != nil || !bytes.Equal(got.Data, e.Data) {
				t.Fatalf("format %d: Get: %v", f, err)
			}
		}
	}
}
