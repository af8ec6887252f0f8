package badgerstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
)

// errStop is what the crash hook panics with: the machine stops between a
// commit's log record and its Badger commit.
var errStop = errors.New("the machine stopped")

// putStopped puts b with the crash hook set, and reports whether the hook
// stopped it.
func putStopped(t *testing.T, s *badgerstore.Store, b dag.Batch) (stopped bool) {
	t.Helper()
	badgerstore.SetCrashHook(s, func() { panic(errStop) })
	defer badgerstore.SetCrashHook(s, nil)
	defer func() {
		if r := recover(); r != nil {
			if r != errStop {
				panic(r)
			}
			stopped = true
		}
	}()
	if _, err := s.Put(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return false
}

// walChain returns n entries of a chain in space, after parent (zero for
// a root).
func walChain(space string, from, n int, parent dag.ID) []dag.Entry {
	es := make([]dag.Entry, n)
	for i := range es {
		var ps []dag.ID
		if parent != (dag.ID{}) {
			ps = []dag.ID{parent}
		}
		es[i] = dagtest.NewEntry(space, 7, from+i, ps)
		parent = es[i].ID
	}
	return es
}

// walOpen opens the store in dir.
func walOpen(t *testing.T, dir string, o badgerstore.Options) *badgerstore.Store {
	t.Helper()
	s, err := badgerstore.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// walPut puts es in s.
func walPut(t *testing.T, s *badgerstore.Store, es []dag.Entry) {
	t.Helper()
	if _, err := s.Put(context.Background(), dag.Batch{Entries: es}); err != nil {
		t.Fatal(err)
	}
}

// walCheck checks s's indexes against its entries (storetest.Check).
func walCheck(t *testing.T, s *badgerstore.Store) {
	t.Helper()
	if err := storetest.Check(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies the files of dir (and its subdirectories) to a new
// directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// TestCommitLogReplaysLostCommit: a commit whose log record is durable but
// whose Badger commit never happened (the machine stopped between the two)
// is in the store after Open, with everything it wrote: its entries in the
// log after the earlier ones, its object, its pending entry, the heads.
// Without the log (a copy of the directory without commits.wal) it is not:
// the replay, not Badger, brings it back.
func TestCommitLogReplaysLostCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := walOpen(t, dir, badgerstore.Options{})
	a := walChain("wal", 0, 100, dag.ID{})
	walPut(t, s, a)
	b := walChain("wal", 100, 100, a[len(a)-1].ID)
	obj := dag.NewObject([]byte("an object of the lost commit, long enough for Badger's value log: " + string(make([]byte, 200))))
	orphan := dagtest.NewEntry("wal", 7, 1000, []dag.ID{dag.Sum([]byte("a parent nobody has"))})
	if !putStopped(t, s, dag.Batch{Entries: append(slices.Clone(b), orphan), Objects: []dag.Object{obj}}) {
		t.Fatal("the crash hook did not stop the Put")
	}
	if n := badgerstore.WALSize(s); n <= 0 {
		t.Fatalf("commit log holds %d bytes after the stopped commit", n)
	}
	if err := badgerstore.CloseKeepLog(s); err != nil {
		t.Fatal(err)
	}

	// Badger alone lost it.
	bare := copyDir(t, dir)
	if err := os.Remove(filepath.Join(bare, "commits.wal")); err != nil {
		t.Fatal(err)
	}
	s = walOpen(t, bare, badgerstore.Options{})
	if st, err := s.Has(ctx, b[0].ID); err != nil || st != dag.Absent {
		t.Fatalf("without the commit log, the lost commit's first entry is %v (%v): the test does not lose it", st, err)
	}
	s.Close()

	s = walOpen(t, dir, badgerstore.Options{})
	if n := badgerstore.WALSize(s); n != 0 {
		t.Errorf("commit log holds %d bytes after Open: want it emptied once replayed", n)
	}
	log, err := s.Log(ctx, "wal", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(a), b...)
	if len(log) != len(want) {
		t.Fatalf("log holds %d entries after the replay, want %d", len(log), len(want))
	}
	for i, e := range want {
		if log[i] != e.ID {
			t.Fatalf("log[%d] = %s, want %s", i, log[i], e.ID)
		}
		if got, err := s.Get(ctx, e.ID); err != nil || string(got.Data) != string(e.Data) {
			t.Fatalf("entry %d reads back as %q (%v)", i, got.Data, err)
		}
	}
	if st, err := s.Has(ctx, orphan.ID); err != nil || st != dag.Pending {
		t.Fatalf("the lost commit's orphan is %v (%v), want pending", st, err)
	}
	if got, err := s.Object(ctx, obj.ID); err != nil || string(got) != string(obj.Data) {
		t.Fatalf("the lost commit's object: %q, %v", got, err)
	}
	heads, err := s.Heads(ctx, "wal")
	if err != nil || len(heads) != 1 || heads[0] != b[len(b)-1].ID {
		t.Fatalf("heads %v (%v), want the lost commit's last entry", heads, err)
	}
	walCheck(t, s)
	// The store goes on: a Put after the replay, a Close, an Open.
	c := walChain("wal", 200, 10, b[len(b)-1].ID)
	walPut(t, s, c)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = walOpen(t, dir, badgerstore.Options{})
	defer s.Close()
	if log, err := s.Log(ctx, "wal", 0, 0); err != nil || len(log) != 210 || log[209] != c[9].ID {
		t.Fatalf("log after the next Put and a restart: %d entries (%v)", len(log), err)
	}
	walCheck(t, s)
}

// TestCommitLogTornTail: the bytes of a record the machine stopped while
// writing (a length with too few bytes after it, or a record whose CRC
// fails) are cut off at Open; the whole records before them are replayed.
func TestCommitLogTornTail(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		torn []byte
	}{
		{"short", binary.AppendUvarint(nil, 5000)},
		{"crc", append(binary.AppendUvarint(nil, 3), 's', 1, 'k', 0, 0, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := walOpen(t, dir, badgerstore.Options{})
			a := walChain("torn", 0, 20, dag.ID{})
			walPut(t, s, a)
			b := walChain("torn", 20, 20, a[19].ID)
			if !putStopped(t, s, dag.Batch{Entries: b}) {
				t.Fatal("the crash hook did not stop the Put")
			}
			whole := badgerstore.WALSize(s)
			if err := badgerstore.CloseKeepLog(s); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "commits.wal")
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(tc.torn); err != nil {
				t.Fatal(err)
			}
			f.Close()
			s, err = badgerstore.Open(dir, badgerstore.Options{})
			if err != nil {
				t.Fatalf("open with a torn record after %d bytes: %v", whole, err)
			}
			defer s.Close()
			if st, err := s.Has(ctx, b[19].ID); err != nil || st != dag.Applied {
				t.Fatalf("the whole record's last entry is %v (%v)", st, err)
			}
			if fi, err := os.Stat(p); err != nil || fi.Size() != 0 {
				t.Fatalf("commit log after Open: %v, %v; want it empty", fi, err)
			}
			walCheck(t, s)
		})
	}
}

// TestCommitLogSyncFailure: once an fdatasync of the commit log fails, the
// Put fails with ErrSync and so does every later one (nothing more is
// acknowledged); reopened, the store is whole and takes writes again.
func TestCommitLogSyncFailure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := walOpen(t, dir, badgerstore.Options{})
	a := walChain("fail", 0, 10, dag.ID{})
	walPut(t, s, a)
	badgerstore.SetWALSync(s, func(*os.File) error { return errors.New("EIO (test)") })
	b := walChain("fail", 10, 10, a[9].ID)
	if _, err := s.Put(ctx, dag.Batch{Entries: b}); !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("Put with the log's fdatasync failing: %v, want ErrSync", err)
	}
	badgerstore.SetWALSync(s, nil)
	if _, err := s.Put(ctx, dag.Batch{Entries: walChain("other", 0, 1, dag.ID{})}); !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("Put after the failure: %v, want ErrSync", err)
	}
	// The failed Put's entries may be in Badger (it commits while the log
	// syncs), not acknowledged: a reopened store holds them or not, whole.
	s.Close()
	s = walOpen(t, dir, badgerstore.Options{})
	defer s.Close()
	if st, err := s.Has(ctx, a[9].ID); err != nil || st != dag.Applied {
		t.Fatalf("an acknowledged entry is %v (%v) after reopening", st, err)
	}
	walCheck(t, s)
	if _, err := s.Put(ctx, dag.Batch{Entries: walChain("other", 0, 1, dag.ID{})}); err != nil {
		t.Fatalf("Put after reopening: %v", err)
	}
}

// TestCommitLogCheckpoint: the log is emptied once it passes its limit
// (Badger's files made durable first), so it does not grow with the
// store; Close empties it too.
func TestCommitLogCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := walOpen(t, dir, badgerstore.Options{})
	const limit = 1 << 20
	badgerstore.SetWALLimit(s, limit)
	var parent dag.ID
	maxSize, emptied := int64(0), 0
	for i := 0; i < 60; i++ {
		es := walChain("ckpt", i*1000, 1000, parent)
		parent = es[len(es)-1].ID
		before := badgerstore.WALSize(s)
		walPut(t, s, es)
		n := badgerstore.WALSize(s)
		maxSize = max(maxSize, n)
		if n < before {
			emptied++
		}
	}
	if emptied < 5 {
		t.Fatalf("the commit log was emptied %d times in 60,000 entries", emptied)
	}
	if maxSize >= limit {
		t.Fatalf("commit log held %d bytes after a Put, limit %d", maxSize, limit)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "commits.wal")); err != nil || fi.Size() != 0 {
		t.Fatalf("commit log after Close: %v, %v; want it empty", fi, err)
	}
	s = walOpen(t, dir, badgerstore.Options{})
	defer s.Close()
	if log, err := s.Log(ctx, "ckpt", 0, 0); err != nil || len(log) != 60_000 {
		t.Fatalf("log after reopening: %d entries (%v)", len(log), err)
	}
}

// TestCommitLogDropsRecordWithoutBodies: a commit's bodies are synced while
// its log record is, so a machine that stops then may keep the record and
// lose bodies (the file cut short, or a page of it never written). The
// commit was not answered; Open drops that last record rather than replay
// a commit whose bodies are gone, and the store is whole without it.
func TestCommitLogDropsRecordWithoutBodies(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, path string, from int64)
	}{
		{"short", func(t *testing.T, path string, from int64) {
			if err := os.Truncate(path, from+10); err != nil {
				t.Fatal(err)
			}
		}},
		{"page", func(t *testing.T, path string, from int64) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(make([]byte, 64), from+200); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := walOpen(t, dir, badgerstore.Options{})
			a := walChain("lost", 0, 30, dag.ID{})
			walPut(t, s, a)
			body := filepath.Join(dir, "bodies", "00000001.dat")
			fi, err := os.Stat(body)
			if err != nil {
				t.Fatal(err)
			}
			b := walChain("lost", 30, 30, a[29].ID)
			if !putStopped(t, s, dag.Batch{Entries: b}) {
				t.Fatal("the crash hook did not stop the Put")
			}
			if err := badgerstore.CloseKeepLog(s); err != nil {
				t.Fatal(err)
			}
			tc.lose(t, body, fi.Size())
			s, err = badgerstore.Open(dir, badgerstore.Options{})
			if err != nil {
				t.Fatalf("open after the bodies of the last record were lost: %v", err)
			}
			defer s.Close()
			if st, err := s.Has(ctx, b[0].ID); err != nil || st != dag.Absent {
				t.Fatalf("the dropped commit's entry is %v (%v)", st, err)
			}
			log, err := s.Log(ctx, "lost", 0, 0)
			if err != nil || len(log) != 30 || log[29] != a[29].ID {
				t.Fatalf("log: %d entries (%v), want the 30 acknowledged", len(log), err)
			}
			for _, e := range a {
				if got, err := s.Get(ctx, e.ID); err != nil || string(got.Data) != string(e.Data) {
					t.Fatalf("acknowledged entry reads back as %q (%v)", got.Data, err)
				}
			}
			walCheck(t, s)
			// The next commit writes where the dropped one had.
			walPut(t, s, b)
			walCheck(t, s)
		})
	}
}

// TestCommitLogReplayedWithoutIt: a log left by a crash is replayed even
// by an Open that keeps none (NoSync), so that a later Open with the log
// does not replay old records over newer commits.
func TestCommitLogReplayedWithoutIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := walOpen(t, dir, badgerstore.Options{})
	a := walChain("nosync", 0, 20, dag.ID{})
	if !putStopped(t, s, dag.Batch{Entries: a}) {
		t.Fatal("the crash hook did not stop the Put")
	}
	if err := badgerstore.CloseKeepLog(s); err != nil {
		t.Fatal(err)
	}
	s = walOpen(t, dir, badgerstore.Options{NoSync: true})
	if st, err := s.Has(ctx, a[19].ID); err != nil || st != dag.Applied {
		t.Fatalf("the stopped commit's entry is %v (%v) in a NoSync store", st, err)
	}
	// Newer commits change what the stopped one wrote (the heads, the
	// space's next position).
	b := walChain("nosync", 20, 20, a[19].ID)
	walPut(t, s, b)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = walOpen(t, dir, badgerstore.Options{})
	defer s.Close()
	heads, err := s.Heads(ctx, "nosync")
	if err != nil || len(heads) != 1 || heads[0] != b[19].ID {
		t.Fatalf("heads %v (%v), want the newest entry", heads, err)
	}
	if log, err := s.Log(ctx, "nosync", 0, 0); err != nil || len(log) != 40 {
		t.Fatalf("log: %d entries (%v)", len(log), err)
	}
	walCheck(t, s)
}

// TestCommitLogBadgerAhead: Badger commits while the log's record is
// synced, so a machine that stops then may keep Badger's commit and lose
// the record. Open then must not write the log's older records over the
// newer state: it replays only the records numbered after the commit
// Badger holds. Here the log keeps the records of two commits and loses
// that of a third, which Badger holds; replaying the two (as a log without
// numbers would) puts back the heads and positions of the second.
func TestCommitLogBadgerAhead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := walOpen(t, dir, badgerstore.Options{})
	a := walChain("ahead", 0, 10, dag.ID{})
	b := walChain("ahead", 10, 10, a[9].ID)
	c := walChain("ahead", 20, 10, b[9].ID)
	for _, es := range [][]dag.Entry{a, b} {
		walPut(t, s, es)
	}
	keep := badgerstore.WALSize(s)
	walPut(t, s, c)
	if err := badgerstore.CloseKeepLog(s); err != nil {
		t.Fatal(err)
	}
	// The third record never reached the disk; Badger's commit did.
	if err := os.Truncate(filepath.Join(dir, "commits.wal"), keep); err != nil {
		t.Fatal(err)
	}
	s = walOpen(t, dir, badgerstore.Options{})
	defer s.Close()
	heads, err := s.Heads(ctx, "ahead")
	if err != nil || len(heads) != 1 || heads[0] != c[9].ID {
		t.Fatalf("heads %v (%v), want the third commit's last entry", heads, err)
	}
	walCheck(t, s)
	d := walChain("ahead", 30, 10, c[9].ID)
	walPut(t, s, d)
	if log, err := s.Log(ctx, "ahead", 0, 0); err != nil || len(log) != 40 || log[39] != d[9].ID {
		t.Fatalf("log after the next Put: %d entries (%v)", len(log), err)
	}
	walCheck(t, s)
}
