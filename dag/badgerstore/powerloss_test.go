package badgerstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/crashtest"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
)

// The power-loss tests run the store on a LazyFS disk (crashtest.Disk),
// which drops whatever was written and never fsynced when the power is
// cut. A child process ingests batches of plBatch chained entries (and one
// object each) into a store under the disk's mount point and prints "ack
// b" once Put returned for batch b. The parent cuts the power at a moment
// drawn from a seeded generator, kills the child, opens the disk's backing
// directory (what reached the disk) and checks that every acknowledged
// entry reads back whole (its id recomputed from the bytes read, its
// parents as put), that every acknowledged object is there, and that the
// indexes agree (storetest.Check). Then it mounts the disk again and
// starts a new child that goes on after the last acknowledged batch, so
// that the store grows across the cuts.
//
//   - TestPowerLossIngest: a small memtable (256 KiB) and level 0 of two
//     tables, so that memtable flushes and compactions run inside the cut
//     windows;
//   - TestPowerLossGC: half of each batch is orphans, dropped every fourth
//     batch, then GC (body files of 32 KiB, value-log files of 1 MiB);
//     every fourth object is too long for Badger's tree and goes to its
//     value log: the cut lands within milliseconds of a GC's start;
//   - TestPowerLossSyncFail: the child makes one body-file fdatasync fail
//     (returning EIO without syncing: the bytes stay in the cache only),
//     checks that the Put fails, closes the store and opens it again in the
//     same process, goes on ingesting, and the power is cut shortly after.
//
// WITAN_POWERLOSS_CUTS sets the cuts per test (defaults 12, 10 and 8;
// about four minutes in all; skipped with -short, so scripts/test.sh's
// full run, which CI runs, has them and its -quick and -race runs not);
// WITAN_POWERLOSS_SEED replays the cut timings of a logged run (the
// moments still depend on the machine's speed).

const (
	plChildEnv = "WITAN_POWERLOSS_CHILD" // the store's directory, in the child
	plModeEnv  = "WITAN_POWERLOSS_MODE"  // ingest, gc or syncfail
	plStartEnv = "WITAN_POWERLOSS_START" // the first batch the child puts
	plFailEnv  = "WITAN_POWERLOSS_FAIL"  // syncfail: batches put before the failing one
	plBatch    = 100
)

// plOptions are the store's options in each mode.
func plOptions(mode string) badgerstore.Options {
	switch mode {
	case "ingest", "pipeline":
		return badgerstore.Options{
			MemTableSize: 256 << 10,
			Tune: func(o badger.Options) badger.Options {
				o.NumLevelZeroTables = 2
				o.NumLevelZeroTablesStall = 4
				o.BaseTableSize = 128 << 10
				o.BaseLevelSize = 1 << 20
				return o
			},
		}
	case "gc":
		return badgerstore.Options{MemTableSize: 4 << 20, BodyFileSize: 32 << 10, ValueLogFileSize: 1 << 20}
	default:
		return badgerstore.Options{MemTableSize: 1 << 20}
	}
}

var plChain []dag.Entry

// plEntry returns entry n of the chain: entry n-1 is its parent.
func plEntry(n int) dag.Entry {
	for len(plChain) <= n {
		var ps []dag.ID
		if m := len(plChain); m > 0 {
			ps = []dag.ID{plChain[m-1].ID}
		}
		plChain = append(plChain, dagtest.NewEntry("pl", 31, len(plChain), ps))
	}
	return plChain[n]
}

// plDelivery returns batch b: plBatch chained entries and an object; in
// mode gc also plBatch orphans (each waits for a parent that never comes).
func plDelivery(mode string, b int) (chain, orphans []dag.Entry, obj dag.Object) {
	for i := b * plBatch; i < (b+1)*plBatch; i++ {
		chain = append(chain, plEntry(i))
		if mode == "gc" {
			orphans = append(orphans, dagtest.NewEntry("pl", 32, i, []dag.ID{dag.Sum([]byte("absent " + strconv.Itoa(i)))}))
		}
	}
	if mode == "gc" && b%4 == 0 {
		// Longer than the longest value the tree takes (600 KiB with 4
		// MiB memtables): Badger's value log holds it.
		pad := strings.Repeat("x", 700<<10)
		return chain, orphans, dag.NewObject([]byte(`{"pad":"` + pad + `","powerloss":` + strconv.Itoa(b) + `}`))
	}
	return chain, orphans, dag.NewObject([]byte(`{"powerloss":` + strconv.Itoa(b) + `}`))
}

// TestPowerLossChild is the child's body; it does nothing in a normal run.
func TestPowerLossChild(t *testing.T) {
	dir := os.Getenv(plChildEnv)
	if dir == "" {
		t.Skip("runs only as the child of the power-loss tests")
	}
	mode := os.Getenv(plModeEnv)
	start, _ := strconv.Atoi(os.Getenv(plStartEnv))
	failAt := -1
	if v := os.Getenv(plFailEnv); v != "" {
		n, _ := strconv.Atoi(v)
		failAt = start + n
	}
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(2)
	}
	quietStderr()
	o := plOptions(mode)
	s, err := badgerstore.Open(dir, o)
	if err != nil {
		fail(err)
	}
	fmt.Println("ready")
	ctx := context.Background()
	if mode == "pipeline" || mode == "pipefail" {
		plPipelined(s, dir, o, start, failAt, fail)
		return
	}
	for b := start; ; b++ {
		chain, orphans, obj := plDelivery(mode, b)
		batch := dag.Batch{Entries: append(chain, orphans...), Objects: []dag.Object{obj}}
		if b == failAt {
			// The body file's fdatasync fails and syncs nothing (a
			// device that lost the write): the Put must fail, and the
			// store must not build on those bytes, in this process or
			// after a reopen in it.
			badgerstore.SetBodySync(s, func(*os.File) error { return syscall.EIO })
			if _, err := s.Put(ctx, batch); !errors.Is(err, badgerstore.ErrSync) {
				fail(fmt.Errorf("Put with a failing fdatasync: %v, want ErrSync", err))
			}
			fmt.Println("failed", b)
			s.Close() //nolint:errcheck // the store failed; Close reports it
			if s, err = badgerstore.Open(dir, o); err != nil {
				fail(fmt.Errorf("reopen after the failed fdatasync: %w", err))
			}
			fmt.Println("reopened")
		}
		if _, err := s.Put(ctx, batch); err != nil {
			fail(err)
		}
		// Acknowledged only once Put returned.
		os.Stdout.WriteString("ack " + strconv.Itoa(b) + "\n")
		if mode != "gc" || b%4 != 3 {
			continue
		}
		p, err := s.Pending(ctx, "pl")
		if err == nil {
			_, err = s.DropPending(ctx, "pl", p)
		}
		if err != nil {
			fail(err)
		}
		os.Stdout.WriteString("gc\n")
		if _, err := s.GC(ctx); err != nil {
			fail(err)
		}
		os.Stdout.WriteString("gcdone\n")
	}
}

// plPipelined is the child of modes pipeline and pipefail: each batch is
// planned and written with PutAsync while the one before it is made
// durable, and acknowledged once its wait returned. It prints "planned b"
// once batch b is planned on top of b-1's running commit (the pipeline's
// window, where the parent cuts in mode pipeline). In mode pipefail the
// fdatasync of batch failAt fails: it and the batch planned on top of it
// must fail with ErrSync, and the store is reopened and goes on from
// failAt.
func plPipelined(s *badgerstore.Store, dir string, o badgerstore.Options, start, failAt int, fail func(error)) {
	ctx := context.Background()
	var wait func() (dag.Result, error)
	b := start
	for {
		if b == failAt {
			badgerstore.SetBodySync(s, func(*os.File) error { return syscall.EIO })
		}
		chain, _, obj := plDelivery("ingest", b)
		next := s.PutAsync(ctx, dag.Batch{Entries: chain, Objects: []dag.Object{obj}})
		os.Stdout.WriteString("planned " + strconv.Itoa(b) + "\n")
		if wait != nil {
			_, err := wait()
			switch {
			case b-1 == failAt:
				// The failed batch, and the one planned on top of it.
				if _, err2 := next(); !errors.Is(err, badgerstore.ErrSync) || !errors.Is(err2, badgerstore.ErrSync) {
					fail(fmt.Errorf("pipelined Puts with a failing fdatasync: %v and %v, want ErrSync", err, err2))
				}
				fmt.Println("failed", failAt)
				s.Close() //nolint:errcheck // the store failed; Close reports it
				var oerr error
				if s, oerr = badgerstore.Open(dir, o); oerr != nil {
					fail(fmt.Errorf("reopen after the failed fdatasync: %w", oerr))
				}
				fmt.Println("reopened")
				wait, b, failAt = nil, failAt, -1
				continue
			case err != nil:
				fail(err)
			}
			// Acknowledged only once its commit returned.
			os.Stdout.WriteString("ack " + strconv.Itoa(b-1) + "\n")
		}
		wait = next
		b++
	}
}

// plRun is one power-loss test: cuts rounds of a child in mode.
type plRun struct {
	t     *testing.T
	mode  string
	rng   *rand.Rand
	disk  *crashtest.Disk
	acked int // the highest batch acknowledged
	// what the cuts hit, for the log
	inGC, afterFail int
}

func runPowerLoss(t *testing.T, mode string, defCuts int, stream uint64) {
	if os.Getenv(plChildEnv) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("power-loss test: minutes of LazyFS mounts and cuts; runs without -short")
	}
	cuts := crashtest.Count(t, "WITAN_POWERLOSS_CUTS", defCuts)
	r := &plRun{t: t, mode: mode, rng: crashtest.Rand(t, "WITAN_POWERLOSS_SEED", stream), disk: crashtest.Mount(t), acked: -1}
	t0 := time.Now()
	for k := 0; k < cuts; k++ {
		if k > 0 {
			if err := r.disk.Remount(); err != nil {
				t.Fatal(err)
			}
		}
		r.round(k)
		r.check(k)
	}
	// Memtables flushed to tables and compacted: the tables the store
	// holds at the end (Badger numbers them as it creates them).
	tables, _ := filepath.Glob(filepath.Join(r.disk.Root, "*.sst"))
	newest := 0
	for _, p := range tables {
		n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".sst"))
		newest = max(newest, n)
	}
	t.Logf("%s: %d power cuts in %v (%d in a GC, %d after a failed fdatasync), %d batches (%d chained entries) acknowledged; %d tables created, %d left",
		mode, cuts, time.Since(t0).Round(time.Millisecond), r.inGC, r.afterFail, r.acked+1, (r.acked+1)*plBatch, newest, len(tables))
}

// round starts a child on the disk and cuts the power under it.
func (r *plRun) round(k int) {
	t := r.t
	env := []string{plChildEnv + "=" + r.disk.Mnt, plModeEnv + "=" + r.mode, plStartEnv + "=" + strconv.Itoa(r.acked+1)}
	if r.mode == "syncfail" || r.mode == "pipefail" {
		env = append(env, plFailEnv+"="+strconv.Itoa(r.rng.IntN(20)))
	}
	cmd, out := crashtest.Start(t, "TestPowerLossChild", env...)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The cut happens once; a second caller waits for it to end (the
	// timer's goroutine may be cutting when the child's output ends).
	var cut, gcing atomic.Bool
	var once sync.Once
	cutOnce := func() {
		once.Do(func() {
			cut.Store(true)
			if gcing.Load() {
				r.inGC++ // as far as the child's last line tells
			}
			if err := r.disk.PowerCut(); err != nil {
				t.Error(err)
			}
			crashtest.Kill(cmd)
		})
	}
	var timer *time.Timer
	cutIn := func(d time.Duration) {
		if timer == nil {
			timer = time.AfterFunc(d, cutOnce)
		}
	}
	// ingest: a moment of the first 0.8 s; gc: 0 to 6 ms after the
	// start of the first or second GC; syncfail: 0 to 80 ms after the
	// failed fdatasync.
	var delay time.Duration
	nthGC := 1 + r.rng.IntN(2)
	nthPlanned := 2 + r.rng.IntN(60)
	switch r.mode {
	case "pipeline":
		delay = time.Duration(r.rng.IntN(3_000)) * time.Microsecond
	case "ingest":
		delay = time.Duration(r.rng.IntN(800_000)) * time.Microsecond
	case "gc":
		delay = time.Duration(r.rng.IntN(6_000)) * time.Microsecond
	default:
		delay = time.Duration(r.rng.IntN(80_000)) * time.Microsecond
	}
	// A child that no cut stops (it failed, or a mode's moment never
	// came) is cut after 20 s.
	guard := time.AfterFunc(20*time.Second, cutOnce)
	defer guard.Stop()
	gcs, planned, failed := 0, 0, false
	var problem string
	for line := range lines {
		f := strings.Fields(line)
		cutAlready := cut.Load()
		switch {
		case line == "ready":
			if r.mode == "ingest" {
				cutIn(delay)
			}
		case len(f) == 2 && f[0] == "ack":
			b, _ := strconv.Atoi(f[1])
			if b != r.acked+1 {
				problem = fmt.Sprintf("child acknowledged batch %d after %d", b, r.acked)
			}
			r.acked = b
		case len(f) == 2 && f[0] == "planned":
			// pipeline: 0 to 3 ms after a batch was planned on top of the
			// commit running before it.
			if planned++; r.mode == "pipeline" && planned == nthPlanned {
				cutIn(delay)
			}
		case line == "gc":
			gcs++
			gcing.Store(true)
			if gcs == nthGC {
				cutIn(delay)
			}
		case line == "gcdone":
			gcing.Store(false)
		case len(f) == 2 && f[0] == "failed":
			failed = true
			cutIn(delay)
		case line == "reopened":
		case cutAlready:
			// The disk is gone: the child's writes fail.
		case lazyFSGone(line):
			// LazyFS itself went away under the child (its FUSE
			// connection aborted) before any cut of ours. Its death
			// drops what was never synced exactly as the cut does, so
			// the round counts as a cut, and the check that follows
			// holds every acknowledged batch to it all the same.
			t.Logf("child %d: LazyFS went away before the cut, taken as one: %s", k, line)
			cutOnce()
		default:
			if problem == "" {
				problem = fmt.Sprintf("child %d: %s", k, line)
			}
			cutOnce()
		}
	}
	cutOnce()
	if timer != nil {
		timer.Stop()
	}
	cmd.Wait() //nolint:errcheck // killed, or it exited on the cut disk's errors
	if problem != "" {
		t.Fatal(problem)
	}
	if failed {
		r.afterFail++
	}
}

// check opens what reached the disk and checks every acknowledged batch.
func (r *plRun) check(k int) {
	t := r.t
	ctx := context.Background()
	s, err := badgerstore.Open(r.disk.Root, plOptions(r.mode))
	if err != nil {
		t.Fatalf("cut %d: reopen: %v", k, err)
	}
	defer s.Close()
	// Every acknowledged entry, read from the log in one scan (the chain
	// is applied in order, log position i+1 holding entry i), and those
	// of the last batches also one by one.
	n := (r.acked + 1) * plBatch
	log, err := s.LogEntries(ctx, "pl", 0, n)
	lost, objs, from := n-len(log), 0, max(0, n-3*plBatch)
	var first error
	switch {
	case err != nil:
		// Count what Get still reads.
		first = fmt.Errorf("reading the log: %w", err)
		lost, from = 0, 0
	case lost > 0:
		first = fmt.Errorf("the log holds %d entries", len(log))
	}
	for i, e := range log {
		want := plEntry(i)
		if e.ID != want.ID || dag.Sum(e.Data) != want.ID || !slices.Equal(e.Parents, want.Parents) {
			lost++
			if first == nil {
				first = fmt.Errorf("log position %d holds %s, which reads back as %s with parents %v; want entry %d, %s", i+1, e.ID, dag.Sum(e.Data), e.Parents, i, want.ID)
			}
		}
	}
	for i := from; i < n; i++ {
		want := plEntry(i)
		got, err := s.Get(ctx, want.ID)
		if err == nil && (dag.Sum(got.Data) != want.ID || !slices.Equal(got.Parents, want.Parents)) {
			err = fmt.Errorf("reads back as %s with parents %v", dag.Sum(got.Data), got.Parents)
		}
		if err != nil {
			lost++
			if first == nil {
				first = fmt.Errorf("entry %d (%s) of acknowledged batch %d: %w", i, want.ID, i/plBatch, err)
			}
		}
	}
	for b := 0; b <= r.acked; b++ {
		_, _, obj := plDelivery(r.mode, b)
		if got, err := s.Object(ctx, obj.ID); err != nil || dag.Sum(got) != obj.ID {
			objs++
			if first == nil {
				first = fmt.Errorf("object of acknowledged batch %d: %v", b, err)
			}
		}
	}
	if lost > 0 || objs > 0 || first != nil {
		t.Fatalf("cut %d (%s): %d of %d acknowledged entries and %d of %d objects lost or damaged; first: %v",
			k, r.mode, min(lost, n), n, objs, r.acked+1, first)
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatalf("cut %d (%s), %d acknowledged entries read back: %v", k, r.mode, (r.acked+1)*plBatch, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("cut %d: close: %v", k, err)
	}
}

// TestPowerLossIngest cuts the power during ingest with memtable flushes
// and level-0 compactions in the windows.
func TestPowerLossIngest(t *testing.T) { runPowerLoss(t, "ingest", 12, 11) }

// TestPowerLossGC cuts the power during body-file and value-log GC.
func TestPowerLossGC(t *testing.T) { runPowerLoss(t, "gc", 10, 12) }

// TestPowerLossPipeline cuts the power inside the pipelined commit's
// window: 0 to 3 ms after a batch was planned (PutAsync) on top of the
// batch whose fdatasync and commit were running, with the small
// memtables of TestPowerLossIngest.
func TestPowerLossPipeline(t *testing.T) { runPowerLoss(t, "pipeline", 8, 14) }

// TestPowerLossPipelineSyncFail makes a body-file fdatasync fail under a
// pipelined ingest: the batch and the one planned on top of it fail, the
// store is reopened in the same process and goes on; the power is cut
// shortly after.
func TestPowerLossPipelineSyncFail(t *testing.T) { runPowerLoss(t, "pipefail", 5, 15) }

// TestPowerLossSyncFail cuts the power shortly after a failed fdatasync
// of a body file, which the child followed by a reopen in the same
// process.
func TestPowerLossSyncFail(t *testing.T) { runPowerLoss(t, "syncfail", 8, 13) }

// lazyFSGone tells whether a child's error line is the FUSE connection
// failing (ECONNABORTED or ENOTCONN): LazyFS is no longer serving the
// mount.
func lazyFSGone(line string) bool {
	return strings.Contains(line, "software caused connection abort") ||
		strings.Contains(line, "transport endpoint is not connected")
}
