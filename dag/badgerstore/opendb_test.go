package badgerstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
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
