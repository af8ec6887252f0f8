package badgerstore_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/crashtest"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
)

// The body-file crash test: a child ingests batches of 40 honest entries
// (a chain) and 40 orphans (each waiting for a parent that never comes)
// into a store with body files of 32 KiB, and after every fourth batch
// drops the pending orphans and runs GC, which moves the honest bodies out
// of the files half dead and deletes them. It prints "ack b" after each
// committed batch, "dropped" before each GC and "gc n" after it. The parent
// SIGKILLs it at a random moment, during ingest or within the next
// milliseconds of a GC, reopens the store and reads every acknowledged
// honest entry back (bytes compared), checks the indexes, and starts a new
// child after the last acknowledged batch.

const (
	bgcChildEnv = "WITAN_BGC_CHILD"
	bgcBatch    = 40
)

var bgcOptions = badgerstore.Options{BodyFileSize: 32 << 10}

var bgcHonest []dag.Entry

// bgcEntry returns honest entry n, the child of entry n-1.
func bgcEntry(n int) dag.Entry {
	for len(bgcHonest) <= n {
		var ps []dag.ID
		if m := len(bgcHonest); m > 0 {
			ps = []dag.ID{bgcHonest[m-1].ID}
		}
		bgcHonest = append(bgcHonest, dagtest.NewEntry("g", 21, len(bgcHonest), ps))
	}
	return bgcHonest[n]
}

// bgcDelivery returns batch b: honest entries then orphans.
func bgcDelivery(b int) (honest, orphans []dag.Entry) {
	for i := b * bgcBatch; i < (b+1)*bgcBatch; i++ {
		honest = append(honest, bgcEntry(i))
		orphans = append(orphans, dagtest.NewEntry("g", 22, i, []dag.ID{dag.Sum([]byte("absent " + strconv.Itoa(i)))}))
	}
	return honest, orphans
}

// TestCrashBodyGCChild is the child's body; it does nothing in a normal
// run.
func TestCrashBodyGCChild(t *testing.T) {
	dir := os.Getenv(bgcChildEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCrashBodyGC")
	}
	start, _ := strconv.Atoi(os.Getenv(bgcChildEnv + "_START"))
	s, err := badgerstore.Open(dir, bgcOptions)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	ctx := context.Background()
	for b := start; ; b++ {
		honest, orphans := bgcDelivery(b)
		if _, err := s.Put(ctx, dag.Batch{Entries: append(honest, orphans...)}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		os.Stdout.WriteString("ack " + strconv.Itoa(b) + "\n")
		if b%4 != 3 {
			continue
		}
		p, err := s.Pending(ctx, "g")
		if err == nil {
			_, err = s.DropPending(ctx, "g", p)
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		os.Stdout.WriteString("dropped\n")
		n, err := s.GC(ctx)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		os.Stdout.WriteString("gc " + strconv.Itoa(n) + "\n")
	}
}

func TestCrashBodyGC(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" || os.Getenv(promoChildEnv) != "" || os.Getenv(bgcChildEnv) != "" {
		t.Skip("in the child")
	}
	kills := crashtest.Count(t, "WITAN_CRASH_KILLS", 12)
	rng := crashtest.Rand(t, "WITAN_CRASH_SEED", 3)
	dir := t.TempDir()
	ctx := context.Background()
	acked, inGC, collected := -1, 0, 0
	for k := 0; k < kills; k++ {
		cmd, out := crashtest.Start(t, "TestCrashBodyGCChild", bgcChildEnv+"="+dir, bgcChildEnv+"_START="+strconv.Itoa(acked+1))
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child %d did not start: %q", k, sc.Text())
		}
		// Half the kills land within 0 to 30 ms after a "dropped" (the
		// first or second one), during the GC that follows; the others
		// at a random moment of the first 300 ms.
		gcKill := k%2 == 1
		nth := 1 + rng.IntN(2)
		delay := time.Duration(rng.IntN(30_000)) * time.Microsecond
		var timer *time.Timer
		if !gcKill {
			timer = time.AfterFunc(time.Duration(rng.IntN(300_000))*time.Microsecond, func() { crashtest.Kill(cmd) })
		}
		dropped, gcing := 0, false
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 2 && f[0] == "ack":
				b, _ := strconv.Atoi(f[1])
				if b != acked+1 {
					t.Fatalf("child acknowledged batch %d after %d", b, acked)
				}
				acked = b
			case len(f) == 1 && f[0] == "dropped":
				dropped++
				gcing = true
				if gcKill && dropped == nth {
					timer = time.AfterFunc(delay, func() { crashtest.Kill(cmd) })
				}
			case len(f) == 2 && f[0] == "gc":
				gcing = false
				n, _ := strconv.Atoi(f[1])
				collected += n
			default:
				t.Fatalf("child %d: %s", k, sc.Text())
			}
		}
		if timer != nil {
			timer.Stop()
		}
		if err := crashtest.WaitKilled(cmd); err != nil {
			t.Fatalf("child %d: %v", k, err)
		}
		if gcing {
			inGC++
		}
		s, err := badgerstore.Open(dir, bgcOptions)
		if err != nil {
			t.Fatalf("reopen after kill %d: %v", k, err)
		}
		var honest []dag.Entry
		for b := 0; b <= acked; b++ {
			h, _ := bgcDelivery(b)
			honest = append(honest, h...)
		}
		for _, e := range honest {
			got, err := s.Get(ctx, e.ID)
			if err != nil || !bytes.Equal(got.Data, e.Data) {
				t.Fatalf("kill %d: acknowledged entry %s reads back as %q (%v)", k, e.ID, got.Data, err)
			}
		}
		if len(honest) > 0 {
			log, err := s.LogEntries(ctx, "g", 0, len(honest))
			if err != nil || len(log) != len(honest) {
				t.Fatalf("kill %d: LogEntries: %d of %d (%v)", k, len(log), len(honest), err)
			}
			for i, e := range log {
				if e.ID != honest[i].ID || !bytes.Equal(e.Data, honest[i].Data) {
					t.Fatalf("kill %d: log position %d holds %s, want %s", k, i+1, e.ID, honest[i].ID)
				}
			}
		}
		if err := storetest.Check(ctx, s); err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "bodies", "*.dat"))
	t.Logf("%d kills (%d during a GC), %d batches acknowledged, GC deleted %d body files; %d left", kills, inGC, acked+1, collected, len(files))
	if collected == 0 {
		t.Fatal("no GC deleted a body file: the test did not exercise it")
	}
}
