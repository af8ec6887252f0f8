package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/storetest"
)

func entry(space, data string, parents ...dag.ID) dag.Entry {
	return dag.Entry{ID: dag.Sum([]byte(data)), Space: space, Parents: parents, Data: []byte(data)}
}

// DropRefused keeps nothing of a refused entry or of its attachments that
// KeepObject leaves out; DropPending removes an orphan as if it had never
// come. Both stores behave alike.
func TestNothingKeptOfRefusedOrDropped(t *testing.T) {
	ctx := context.Background()
	bs, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	type store interface {
		dag.Store
		DropPending(context.Context, string, []dag.ID) (int, error)
	}
	for name, s := range map[string]store{"badger": bs, "mem": dag.NewMemStore()} {
		t.Run(name, func(t *testing.T) {
			root := entry("s", name+"root")
			bad := entry("s", name+"bad", root.ID)
			badChild := entry("s", name+"badchild", bad.ID) // arrives first, waits for bad
			junk := dag.NewObject([]byte(name + "junk"))
			keep := dag.NewObject([]byte(name + "keep"))
			if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{root, badChild}}); err != nil {
				t.Fatal(err)
			}
			res, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{bad}, Objects: []dag.Object{junk, keep}, DropRefused: true,
				Admit:      func(e dag.Entry) error { return dag.Errorf(dag.CodeNotAuthorized, "no") },
				KeepObject: func(id dag.ID) bool { return id == keep.ID }})
			if err != nil || len(res.Quarantined) != 2 {
				t.Fatalf("put: %+v %v, want the entry and its waiting child refused", res, err)
			}
			for _, id := range []dag.ID{bad.ID, badChild.ID} {
				if st, err := s.Has(ctx, id); err != nil || st != dag.Absent {
					t.Fatalf("refused %s held as %s %v", id, st, err)
				}
			}
			if q, _ := s.Quarantine(ctx, "s"); len(q) != 0 {
				t.Fatalf("quarantine stored: %v", q)
			}
			if _, err := s.Object(ctx, junk.ID); !errors.Is(err, dag.ErrNotFound) {
				t.Fatalf("an object KeepObject left out was written (%v)", err)
			}
			if _, err := s.Object(ctx, keep.ID); err != nil {
				t.Fatalf("an object KeepObject kept is missing: %v", err)
			}
			orphan := entry("s", name+"orphan", dag.Sum([]byte("nobody has this")))
			if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{orphan}}); err != nil {
				t.Fatal(err)
			}
			if n, err := s.DropPending(ctx, "s", []dag.ID{orphan.ID, root.ID}); err != nil || n != 1 {
				t.Fatalf("DropPending: %d %v, want 1 (root is applied, not pending)", n, err)
			}
			if st, _ := s.Has(ctx, orphan.ID); st != dag.Absent {
				t.Fatalf("dropped orphan held as %s", st)
			}
			if p, _ := s.Pending(ctx, "s"); len(p) != 0 {
				t.Fatalf("pending after drop: %v", p)
			}
			if m, _ := s.Missing(ctx, "s"); len(m) != 0 {
				t.Fatalf("missing after drop: %v", m)
			}
			if st, _ := s.Has(ctx, root.ID); st != dag.Applied {
				t.Fatalf("root %s", st)
			}
		})
	}
}

// A flood of orphans that the pending bound drops leaves their bodies as
// dead bytes of the body files (and a tombstone each); GC deletes the
// files wholly dead and the one shared with honest entries (more than
// half dead: it moves the honest bodies to the current file first), drops
// the tombstones and the runs left empty, and the store keeps every
// honest entry.
func TestGCReclaimsDroppedOrphans(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := badgerstore.Options{NoSync: true, ValueLogFileSize: 1 << 20, BodyFileSize: 1 << 20}
	s, err := badgerstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	pad := strings.Repeat("x", 500)
	var honest []dag.Entry
	putHonest := func(n int) {
		t.Helper()
		var batch []dag.Entry
		for range n {
			var ps []dag.ID
			if len(honest) > 0 {
				ps = []dag.ID{honest[len(honest)-1].ID}
			}
			e := entry("s", fmt.Sprintf("honest %d %s", len(honest), pad), ps...)
			honest = append(honest, e)
			batch = append(batch, e)
		}
		if _, err := s.Put(ctx, dag.Batch{Entries: batch}); err != nil {
			t.Fatal(err)
		}
	}
	putHonest(100)
	// 8000 orphans of ≈ 540 bytes (4.3 MB, four value-log files and more),
	// each waiting for a parent that never comes; then dropped.
	var orphans []dag.ID
	for b := range 8 {
		var batch []dag.Entry
		for i := range 1000 {
			e := entry("s", fmt.Sprintf("orphan %d %d %s", b, i, pad), dag.Sum([]byte(fmt.Sprint("absent", b, i))))
			batch = append(batch, e)
			orphans = append(orphans, e.ID)
		}
		if _, err := s.Put(ctx, dag.Batch{Entries: batch}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DropPending(ctx, "s", orphans); err != nil || n != len(orphans) {
		t.Fatalf("DropPending: %d, %v", n, err)
	}
	putHonest(100)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := dirBytes(dir)
	if s, err = badgerstore.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	n, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := dirBytes(dir) // closed, as before: no preallocated files
	if s, err = badgerstore.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "bodies", "*.dat"))
	t.Logf("GC rewrote %d files: %d → %d bytes, %d body files left", n, before, after, len(files))
	// The orphans filled four body files: three wholly theirs, and the
	// first, which the first 100 honest entries share. GC collects all
	// four; the one left is the current file, where the last honest
	// entries and the moved ones went.
	if n < 4 || before-after < 4<<20 || len(files) > 2 {
		t.Fatalf("GC rewrote %d files, %d → %d bytes, %d body files left: want the orphans' 4 files collected and 4 MiB reclaimed", n, before, after, len(files))
	}
	// No tombstone is left, and no run of dropped bodies only.
	tombs, runs := 0, 0
	s.DB().View(func(txn *badger.Txn) error { //nolint:errcheck // counts only
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			switch it.Item().Key()[0] {
			case 'D':
				tombs++
			case 'd':
				runs++
			}
		}
		return nil
	})
	if tombs != 0 || runs > 2 {
		t.Fatalf("after GC: %d tombstones, %d body runs (want 0, and the 2 honest batches')", tombs, runs)
	}
	for _, e := range honest {
		got, err := s.Get(ctx, e.ID)
		if err != nil || string(got.Data) != string(e.Data) {
			t.Fatalf("honest entry %s after GC: %v", e.ID, err)
		}
	}
	for _, id := range orphans[:10] {
		if st, err := s.Has(ctx, id); err != nil || st != dag.Absent {
			t.Fatalf("dropped orphan %s: %v, %v", id, st, err)
		}
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// dirBytes returns the bytes of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
