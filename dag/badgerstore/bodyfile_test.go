package badgerstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
)

// bodyChain returns n entries of space, each the child of the one before.
func bodyChain(space string, salt uint32, n int) []dag.Entry {
	es := make([]dag.Entry, n)
	var parents []dag.ID
	for i := range es {
		es[i] = dagtest.NewEntry(space, salt, i, parents)
		parents = []dag.ID{es[i].ID}
	}
	return es
}

// putAll puts es in batches of k.
func putAll(t *testing.T, s *badgerstore.Store, es []dag.Entry, k int) {
	t.Helper()
	for i := 0; i < len(es); i += k {
		if _, err := s.Put(context.Background(), dag.Batch{Entries: es[i:min(i+k, len(es))]}); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll checks that every entry of es reads back whole, by Get, Parents
// and LogEntries.
func readAll(t *testing.T, s *badgerstore.Store, es []dag.Entry) {
	t.Helper()
	ctx := context.Background()
	for _, e := range es {
		got, err := s.Get(ctx, e.ID)
		if err != nil || !bytes.Equal(got.Data, e.Data) || !slices.Equal(got.Parents, e.Parents) || got.Space != e.Space {
			t.Fatalf("entry %s reads back as %q %v (%v)", e.ID, got.Data, got.Parents, err)
		}
		ps, err := s.Parents(ctx, e.ID)
		if err != nil || !slices.Equal(ps, e.Parents) {
			t.Fatalf("parents of %s: %v (%v)", e.ID, ps, err)
		}
	}
	log, err := s.LogEntries(ctx, es[0].Space, 0, 0)
	if err != nil || len(log) != len(es) {
		t.Fatalf("LogEntries: %d of %d (%v)", len(log), len(es), err)
	}
	for i, e := range log {
		if e.ID != es[i].ID || !bytes.Equal(e.Data, es[i].Data) {
			t.Fatalf("LogEntries: position %d holds %s, want %s", i+1, e.ID, es[i].ID)
		}
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func bodyFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "bodies", "*.dat"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func vlogBytes(dir string) int64 {
	var n int64
	m, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// On disk, entry bodies go to the body files, a new one from
// BodyFileSize, and read back whole after a reopen; Badger's value log
// receives none of them.
func TestBodyFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	o := badgerstore.Options{BodyFileSize: 16 << 10}
	s, err := badgerstore.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	es := bodyChain("b", 3, 1000)
	putAll(t, s, es, 100)
	readAll(t, s, es)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := bodyFiles(t, dir)
	var body int64
	for _, p := range files {
		fi, _ := os.Stat(p)
		body += fi.Size()
	}
	canonical := 0
	for _, e := range es {
		canonical += len(e.Data)
	}
	t.Logf("%d body files, %d bytes for %d canonical bytes; value log %d bytes", len(files), body, canonical, vlogBytes(dir))
	// Each batch of 100 goes to one file, so files hold at least 16 KiB.
	if len(files) < 3 || body > int64(canonical)*2 {
		t.Fatalf("%d body files of %d bytes in all", len(files), body)
	}
	// Badger's value log holds no body: it holds the log runs (32 bytes
	// an entry) and a few small values, where the bodies would add 116 kB.
	if v := vlogBytes(dir); v > int64(32*len(es))+8<<10 {
		t.Fatalf("value log holds %d bytes", v)
	}
	if s, err = badgerstore.Open(dir, o); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	readAll(t, s, es)
	more := bodyChain("c", 4, 300)
	putAll(t, s, more, 50)
	readAll(t, s, more)
	readAll(t, s, es)
}

// Open truncates what a crash left past the committed end of the current
// body file (a torn or uncommitted append) and removes a file that no
// commit named; later Puts append after the committed end and every
// entry reads back whole.
func TestBodyFileTornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := bodyChain("t", 5, 400)
	putAll(t, s, es[:200], 100)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := bodyFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("%d body files", len(files))
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	committed := fi.Size()
	f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{0xee}, 5000)) //nolint:errcheck // checked by the size below
	f.Close()
	stray := filepath.Join(dir, "bodies", "00000002.dat")
	if err := os.WriteFile(stray, []byte("uncommitted"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = badgerstore.Open(dir, badgerstore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, err := os.Stat(files[0]); err != nil || fi.Size() != committed {
		t.Fatalf("current body file after Open: %v bytes (%v), want %d", fi.Size(), err, committed)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("uncommitted body file after Open: %v", err)
	}
	putAll(t, s, es[200:], 100)
	readAll(t, s, es)
}

// A failed fdatasync of a body file fails the Put (ErrSync) and every
// Put after it, before Badger commits anything that names the bodies;
// what was acknowledged before reads back after a reopen, which cuts the
// failed bodies off and never appends to that file again. The failure is
// injected at the fdatasync call (SetBodySync): on a real failing device
// see TestBodyFsyncFailureDevice.
func TestBodyFsyncFailureFailsThePut(t *testing.T) {
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	es := bodyChain("f", 6, 300)
	putAll(t, s, es[:100], 50)
	cur := filepath.Join(dir, "bodies", "00000001.dat")
	before, err := os.Stat(cur)
	if err != nil {
		t.Fatal(err)
	}
	badgerstore.SetBodySync(s, func(*os.File) error { return errors.New("EIO (injected)") })
	if _, err := s.Put(ctx, dag.Batch{Entries: es[100:150]}); !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("Put with a failing fdatasync: %v, want ErrSync", err)
	}
	if st, err := s.Has(ctx, es[100].ID); err != nil || st != dag.Absent {
		t.Fatalf("entry of the failed Put is %v (%v)", st, err)
	}
	badgerstore.SetBodySync(s, nil)
	if _, err := s.Put(ctx, dag.Batch{Entries: es[100:150]}); !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("Put after the failure: %v, want ErrSync", err)
	}
	size := func() int64 {
		fi, err := os.Stat(cur)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if n := size(); n <= before.Size() {
		t.Fatalf("the failed Put's bodies are not in %s: %d bytes", cur, n)
	}
	s.Close()
	if s, err = badgerstore.Open(dir, badgerstore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The reopened store cut the bytes whose fdatasync failed (the cache
	// may hold what the disk does not) and appends to a new file.
	if n := size(); n != before.Size() {
		t.Fatalf("%s after the reopen: %d bytes, want the %d committed", cur, n, before.Size())
	}
	putAll(t, s, es[100:], 100)
	if n := size(); n != before.Size() {
		t.Fatalf("%s was appended to after the failed fdatasync: %d bytes, want %d", cur, n, before.Size())
	}
	if _, err := os.Stat(filepath.Join(dir, "bodies", "00000002.dat")); err != nil {
		t.Fatalf("no new body file after the reopen: %v", err)
	}
	readAll(t, s, es)
}

// TestBodyFsyncFailureDevice puts entries whose body files are on a
// failing device (scripts/faultdev.sh) until a Put fails: what was
// acknowledged fits on the device, and every Put after fails. It runs only
// where WITAN_FAULT_DIR names such a device's mount point.
func TestBodyFsyncFailureDevice(t *testing.T) {
	fault := os.Getenv("WITAN_FAULT_DIR")
	if fault == "" {
		t.Skip("set WITAN_FAULT_DIR to a failing device (scripts/faultdev.sh)")
	}
	bodies, err := os.MkdirTemp(fault, "bodies")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bodies)
	s, err := badgerstore.Open(filepath.Join(t.TempDir(), "lsm"), badgerstore.Options{BodyDir: bodies, BodyFileSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	pad := strings.Repeat("x", 4000)
	acked, total := 0, 20<<20
	var failed error
	for b := 0; acked < total && failed == nil; b++ {
		var batch []dag.Entry
		for i := range 64 {
			batch = append(batch, entry("d", fmt.Sprintf("%d %d %s", b, i, pad)))
		}
		if _, failed = s.Put(ctx, dag.Batch{Entries: batch}); failed == nil {
			acked += 64 * len(pad)
		}
	}
	t.Logf("acknowledged %d KiB before a Put failed: %v", acked>>10, failed)
	if failed == nil || acked > 8<<20 {
		t.Fatalf("acknowledged %d KiB on a device of 6 MiB (last error %v)", acked>>10, failed)
	}
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{entry("d", "after")}}); !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("Put after the failure: %v, want ErrSync", err)
	}
}

// Readers go on while GC moves bodies and deletes their files: every read
// sees each entry whole, in its old file or its new one.
func TestBodyGCConcurrentReads(t *testing.T) {
	s, honest := halfDeadStore(t, t.TempDir())
	defer s.Close()
	ctx := context.Background()
	stop := make(chan struct{})
	errs := make(chan error, 2)
	for r := range 2 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if r == 0 {
					log, err := s.LogEntries(ctx, "r", 0, 0)
					if err != nil || len(log) != len(honest) || !bytes.Equal(log[i%len(log)].Data, honest[i%len(log)].Data) {
						errs <- fmt.Errorf("LogEntries during GC: %d entries, %v", len(log), err)
						return
					}
				} else if e, err := s.Get(ctx, honest[i%len(honest)].ID); err != nil || !bytes.Equal(e.Data, honest[i%len(honest)].Data) {
					errs <- fmt.Errorf("Get during GC: %v", err)
					return
				}
			}
		}()
	}
	n, err := s.GC(ctx)
	close(stop)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err != nil || n == 0 {
		t.Fatalf("GC: %d files, %v", n, err)
	}
	t.Logf("GC deleted %d body files during the reads", n)
	readAll(t, s, honest)
}

// halfDeadStore opens a store in dir with body files of 8 KiB, puts 400
// honest entries and 400 orphans in batches of both, and drops the
// orphans: every body file is about half dead.
func halfDeadStore(t *testing.T, dir string) (*badgerstore.Store, []dag.Entry) {
	t.Helper()
	ctx := context.Background()
	s, err := badgerstore.Open(dir, badgerstore.Options{NoSync: true, BodyFileSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	honest := bodyChain("r", 7, 400)
	var orphans []dag.ID
	for b := range 8 {
		batch := slices.Clone(honest[50*b : 50*b+50])
		for i := range 50 {
			o := dagtest.NewEntry("r", 8, 50*b+i, []dag.ID{dag.Sum([]byte(fmt.Sprint("absent", b, i)))})
			batch = append(batch, o)
			orphans = append(orphans, o.ID)
		}
		if _, err := s.Put(ctx, dag.Batch{Entries: batch}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DropPending(ctx, "r", orphans); err != nil || n != len(orphans) {
		t.Fatalf("DropPending: %d, %v", n, err)
	}
	return s, honest
}

// Close during a GC waits for its current step and stops it; the store
// reopens whole, and a later GC finishes the work.
func TestCloseDuringBodyGC(t *testing.T) {
	dir := t.TempDir()
	s, honest := halfDeadStore(t, dir)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := s.GC(ctx)
		done <- err
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil && !errors.Is(err, dag.ErrClosed) {
		t.Fatalf("GC during Close: %v", err)
	}
	s, err := badgerstore.Open(dir, badgerstore.Options{NoSync: true, BodyFileSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	readAll(t, s, honest)
	if _, err := s.GC(ctx); err != nil {
		t.Fatal(err)
	}
	readAll(t, s, honest)
}
