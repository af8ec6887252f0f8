package badgerstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/witan-dev/witan/dag/crashtest"
)

// A kill between Badger creating a memtable's file and sizing it leaves an
// empty .mem file; badger.Open refuses such a directory and OpenDB opens it
// with what was written before the kill.
func TestOpenDBAfterEmptyMemtableFile(t *testing.T) {
	dir := t.TempDir()
	bo := badger.DefaultOptions(dir).WithLogger(nil).WithSyncWrites(true)
	db, err := badger.Open(bo)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	empty := func() {
		if err := os.WriteFile(filepath.Join(dir, "00099.mem"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty()
	if db, err := badger.Open(bo); err == nil || !strings.Contains(err.Error(), "Create a new file") {
		if err == nil {
			db.Close()
		}
		t.Fatalf("badger.Open with an empty .mem: %v; the case OpenDB handles no longer arises", err)
	}
	os.Remove(filepath.Join(dir, "00099.mem"))
	empty()
	db, err = OpenDB(bo)
	if err != nil {
		t.Fatalf("OpenDB: %v", err)
	}
	defer db.Close()
	err = db.View(func(txn *badger.Txn) error {
		it, err := txn.Get([]byte("k"))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			if string(v) != "v" {
				t.Errorf("k = %q, want v", v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The disk dies (LazyFS kills itself) just before Badger's Open creates the
// table that the memtable it replays is flushed to, as a pulled disk or a
// dead filesystem leaves it. Badger's Open then fails, and its cleanup waits
// for the flush, which retries forever; OpenDB returns the error instead of
// waiting with it (a `witan up` hung silently there).
func TestOpenDBDiskDiesInFlush(t *testing.T) {
	if testing.Short() {
		t.Skip("LazyFS mount and a 10 s wait; runs without -short")
	}
	d := crashtest.Mount(t)
	// What a kill leaves: entries in the memtable's log and no table.
	src := t.TempDir()
	opts := func(dir string) badger.Options {
		return badger.DefaultOptions(dir).WithLogger(nil).WithSyncWrites(true).
			WithMemTableSize(8 << 20).WithValueLogFileSize(64 << 20)
	}
	db, err := badger.Open(opts(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(d.Root, "db")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if n := de.Name(); strings.HasSuffix(n, ".mem") || n == "MANIFEST" || n == "KEYREGISTRY" {
			b, err := os.ReadFile(filepath.Join(src, n))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.CrashBefore("create", `.*\.sst`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		db, err := OpenDB(opts(filepath.Join(d.Mnt, "db")))
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("OpenDB succeeded on a disk that died")
		}
		t.Logf("OpenDB: %v", err)
	case <-time.After(45 * time.Second):
		t.Fatal("OpenDB did not return in 45 s after the disk died under it")
	}
}
