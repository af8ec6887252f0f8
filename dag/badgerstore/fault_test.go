package badgerstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
)

// TestFsyncFailureFailsThePut writes to a store whose value log is on a
// failing device (scripts/faultdev.sh: the device fails its writes once
// its 6 MiB of backing are used; fsync then reports EIO) until a Put
// fails. Badger v4 only logs a failed value-log fsync and acknowledges the
// write; the store must not: every Put after the failure fails (ErrSync),
// and what it acknowledged fits on the device. On 9f8fa68 it acknowledged
// everything written (20 MiB here). The objects are longer than the
// longest value Badger keeps in its tree (1 MiB), so they go to the value
// log, which Badger syncs with each commit (SyncWrites).
//
// It runs only where WITAN_FAULT_DIR names such a device's mount point.
func TestFsyncFailureFailsThePut(t *testing.T) {
	dir := os.Getenv("WITAN_FAULT_DIR")
	if dir == "" {
		t.Skip("set WITAN_FAULT_DIR to a failing device (scripts/faultdev.sh)")
	}
	vlog, err := os.MkdirTemp(dir, "vlog")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(vlog)
	var lines []string
	s, err := badgerstore.Open(filepath.Join(t.TempDir(), "lsm"), badgerstore.Options{
		Logger: logFunc(func(l string) { lines = append(lines, l) }),
		Tune: func(o badger.Options) badger.Options {
			o.ValueDir = vlog
			o.ValueLogFileSize = 16 << 20
			return o
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const chunk = 2 << 20
	acked, total := 0, 20<<20
	var failed error
	for i := 0; acked < total; i++ {
		data := make([]byte, chunk)
		rand.Read(data) //nolint:errcheck // never fails
		_, err := s.Put(ctx, dag.Batch{Objects: []dag.Object{dag.NewObject(data)}})
		if err != nil {
			failed = err
			break
		}
		acked += chunk
	}
	t.Logf("acknowledged %d KiB before a Put failed: %v (Badger logged %d error lines)", acked>>10, failed, len(lines))
	if failed == nil {
		t.Fatalf("every Put of %d MiB was acknowledged on a device of 6 MiB", total>>20)
	}
	if acked > 8<<20 {
		t.Fatalf("acknowledged %d KiB on a device of 6 MiB", acked>>10)
	}
	// Nothing more is acknowledged.
	_, err = s.Put(ctx, dag.Batch{Objects: []dag.Object{dag.NewObject([]byte("after"))}})
	if err == nil {
		t.Fatal("a Put after the failure was acknowledged")
	}
	if errors.Is(failed, badgerstore.ErrSync) && !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("Put after the sync failure: %v, want ErrSync", err)
	}
}

// logFunc is a Badger logger that keeps error lines.
type logFunc func(string)

func (f logFunc) Errorf(format string, args ...any)   { f(fmt.Sprintf(format, args...)) }
func (f logFunc) Warningf(format string, args ...any) {}
func (f logFunc) Infof(format string, args ...any)    {}
func (f logFunc) Debugf(format string, args ...any)   {}
