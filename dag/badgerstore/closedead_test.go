package badgerstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/crashtest"
)

// The disk dies (LazyFS kills itself) under an open store, just before
// Close flushes the memtable to a table. Badger's Close retries the flush
// every second for ever; Store.Close returns an error instead (a stopped
// node hung there), and what Put acknowledged before is on the disk.
func TestCloseDiskDied(t *testing.T) {
	if testing.Short() {
		t.Skip("LazyFS mount and a 10 s wait; runs without -short")
	}
	d := crashtest.Mount(t)
	dir := filepath.Join(d.Mnt, "store")
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	es := chainEntries(500)
	if _, err := s.Put(ctx, dag.Batch{Entries: es}); err != nil {
		t.Fatal(err)
	}
	if err := d.CrashBefore("create", `\.sst$`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "flush") {
			t.Fatalf("Close on a disk that died before the flush's table: %v, want the flush's failure", err)
		}
		t.Logf("Close returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(45 * time.Second):
		t.Fatal("Close did not return in 45 s on a disk that died")
	}
	if err := d.PowerCut(); err != nil {
		t.Fatal(err)
	}
	// The abandoned close still holds the directory's lock in this
	// process, and retries its flush every second: a copy of what reached
	// the disk opens as a new process would open it. The disk stays
	// unmounted, so that the retries cannot write into the directory as
	// it is copied (remounted, one made and removed a table mid-copy).
	cp := filepath.Join(t.TempDir(), "store")
	if err := os.CopyFS(cp, os.DirFS(filepath.Join(d.Root, "store"))); err != nil {
		t.Fatal(err)
	}
	s2, err := badgerstore.Open(cp, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, e := range es {
		if st, err := s2.Has(ctx, e.ID); err != nil || st == dag.Absent {
			t.Fatalf("an acknowledged entry is missing after the disk died: %v %v", st, err)
		}
	}
}
