package badgerstore_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
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

// The crash test re-executes the test binary as a child that ingests
// batches into a store on disk and prints one acknowledgement line per
// committed batch. The parent SIGKILLs the child at a random moment,
// reopens the store and checks that no acknowledged entry or object is lost
// and that the indexes and heads agree with the entries. Then it starts a
// new child that resumes after the last acknowledged batch (re-sending a
// batch that committed without its acknowledgement, as a peer would).
//
// WITAN_CRASH_KILLS sets the number of kills (default 12); WITAN_CRASH_SEED
// replays the kill timings of a logged run (the moments still depend on the
// machine's speed).

const (
	crashChildEnv = "WITAN_CRASH_CHILD"
	crashBatches  = 100_000 // more than any child gets through before its kill
	crashBatch    = 16
)

// crashDelivery returns batch b of the delivery sequence, and one object.
// Entries belong to two spaces; each has one or two earlier parents of its
// space. Every other window of two batches is delivered in reverse, so
// children arrive before their parents and wait as pending across batches.
// Deterministic in b.
func crashDelivery(b int) ([]dag.Entry, dag.Object) {
	var es []dag.Entry
	for q := b * crashBatch; q < (b+1)*crashBatch; q++ {
		w, off := q/(2*crashBatch), q%(2*crashBatch)
		n := q
		if w%2 == 1 {
			n = w*2*crashBatch + 2*crashBatch - 1 - off
		}
		es = append(es, crashEntry(n))
	}
	return es, dag.NewObject([]byte(`{"batch":` + strconv.Itoa(b) + `}`))
}

var crashEntries []dag.Entry

// crashEntry returns entry n, generating entries 0..n in order (parents
// refer to earlier entries by id).
func crashEntry(n int) dag.Entry {
	for len(crashEntries) <= n {
		m := len(crashEntries)
		r := rand.New(rand.NewPCG(uint64(m), 7))
		var parents []dag.ID
		if m >= 2 {
			choices := min(8, m/2) // m-2, m-4, … : same space, earlier
			k := min(1+r.IntN(2), choices)
			for len(parents) < k {
				id := crashEntries[m-2*(1+r.IntN(choices))].ID
				if !slices.Contains(parents, id) {
					parents = append(parents, id)
				}
			}
		}
		crashEntries = append(crashEntries, dagtest.NewEntry("crash-"+strconv.Itoa(m%2), 7, m, parents))
	}
	return crashEntries[n]
}

// crashAdmit refuses one entry of space crash-1, so that from there on
// that space's entries are quarantined (each descends from it) while
// crash-0 goes on applying: kills then also land in transactions that
// quarantine, promoted pending entries included.
func crashAdmit(e dag.Entry) error {
	if e.ID == crashEntry(crashRefused).ID {
		return dag.Errorf(dag.CodeNotAuthorized, "refused by the crash test")
	}
	return nil
}

const crashRefused = 2001

// TestCrashChild is the child's body; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCrash")
	}
	start, _ := strconv.Atoi(os.Getenv(crashChildEnv + "_START"))
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	ctx := context.Background()
	for b := start; b < crashBatches; b++ {
		es, obj := crashDelivery(b)
		if _, err := s.Put(ctx, dag.Batch{Entries: es, Objects: []dag.Object{obj}, Admit: crashAdmit}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		// Acknowledge only after Put returned: the batch is committed and
		// synced.
		os.Stdout.WriteString("ack " + strconv.Itoa(b) + "\n")
	}
	os.Exit(0)
}

func TestCrash(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	kills := crashtest.Count(t, "WITAN_CRASH_KILLS", 12)
	dir := t.TempDir()
	rng := crashtest.Rand(t, "WITAN_CRASH_SEED", 1)
	acked := -1 // highest batch acknowledged so far
	ctx := context.Background()
	for k := 0; k < kills; k++ {
		cmd, out := crashtest.Start(t, "TestCrashChild", crashChildEnv+"="+dir, crashChildEnv+"_START="+strconv.Itoa(acked+1))
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child %d did not start: %q", k, sc.Text())
		}
		// Kill at a random moment, 0 to 150 ms after the store opened.
		timer := time.AfterFunc(time.Duration(rng.IntN(150_000))*time.Microsecond, func() { crashtest.Kill(cmd) })
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "ack" {
				b, _ := strconv.Atoi(f[1])
				if b != acked+1 {
					t.Fatalf("child acknowledged batch %d after %d", b, acked)
				}
				acked = b
				continue
			}
			t.Fatalf("child %d: %s", k, sc.Text())
		}
		timer.Stop()
		if err := crashtest.WaitKilled(cmd); err != nil {
			t.Fatalf("child %d: %v", k, err)
		}

		s, err := badgerstore.Open(dir, badgerstore.Options{})
		if err != nil {
			t.Fatalf("reopen after kill %d: %v", k, err)
		}
		for b := 0; b <= acked; b++ {
			es, obj := crashDelivery(b)
			for _, e := range es {
				if st, err := s.Has(ctx, e.ID); err != nil || st == dag.Absent {
					t.Fatalf("kill %d: entry %s of acknowledged batch %d is %v (%v)", k, e.ID, b, st, err)
				}
				// Its bytes too (in the value log, packed, since format 3).
				if got, err := s.Get(ctx, e.ID); err == nil && !bytes.Equal(got.Data, e.Data) {
					t.Fatalf("kill %d: entry %s of acknowledged batch %d reads back as %q", k, e.ID, b, got.Data)
				}
			}
			if _, err := s.Object(ctx, obj.ID); err != nil {
				t.Fatalf("kill %d: object of acknowledged batch %d: %v", k, b, err)
			}
		}
		if (acked+1)*crashBatch > crashRefused+2*crashBatch {
			if st, err := s.Has(ctx, crashEntry(crashRefused).ID); err != nil || st != dag.Quarantined {
				t.Fatalf("kill %d: the refused entry is %v (%v), want quarantined", k, st, err)
			}
		}
		if err := storetest.Check(ctx, s); err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills, %d batches (%d entries) acknowledged", kills, acked+1, (acked+1)*crashBatch)
}

// The promotion crash test: a child ingests a chain of crashChainLen
// entries children first (batches of 500, each entry waiting for its
// parent), prints "root" and puts the root, which promotes the whole chain
// in some 17 transactions (2 MiB memtables), printing "txn k" after each
// commit but the last. The parent SIGKILLs it at a random moment after a
// random one of those lines (within the next transactions), reopens the store and checks it
// (storetest.Check: log, heads, children, pending), then starts a child
// that puts the root again, a duplicate, and checks that it finished the
// promotion: the whole chain applied in order, the tip the only head,
// nothing pending. Each round uses a space of its own in one store.

const (
	promoChildEnv = "WITAN_PROMO_CHILD"
	crashChainLen = 4000
)

var promoOptions = badgerstore.Options{MemTableSize: 2 << 20}

func crashChain(round int) []dag.Entry {
	es := make([]dag.Entry, crashChainLen)
	var parents []dag.ID
	for i := range es {
		es[i] = dagtest.NewEntry("round-"+strconv.Itoa(round), 11, i, parents)
		parents = []dag.ID{es[i].ID}
	}
	return es
}

// TestCrashPromotionChild is the child's body; it does nothing in a normal
// run.
func TestCrashPromotionChild(t *testing.T) {
	dir := os.Getenv(promoChildEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCrashPromotion")
	}
	round, _ := strconv.Atoi(os.Getenv(promoChildEnv + "_ROUND"))
	s, err := badgerstore.Open(dir, promoOptions)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	c := crashChain(round)
	if os.Getenv(promoChildEnv+"_RESUME") == "" {
		for end := len(c); end > 1; end -= 500 {
			b := slices.Clone(c[max(1, end-500):end])
			slices.Reverse(b)
			if _, err := s.Put(ctx, dag.Batch{Entries: b}); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
		}
	}
	fmt.Println("root")
	badgerstore.SetPromoteHook(s, func(k int) error {
		fmt.Println("txn", k)
		return nil
	})
	r, err := s.Put(ctx, dag.Batch{Entries: c[:1]})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ack", len(r.Applied))
	os.Exit(0)
}

func TestCrashPromotion(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" || os.Getenv(promoChildEnv) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("starts child processes that ingest 4000 entries each")
	}
	rounds := crashtest.Count(t, "WITAN_CRASH_KILLS", 3)
	rng := crashtest.Rand(t, "WITAN_CRASH_SEED", 2)
	dir := t.TempDir()
	ctx := context.Background()
	// child runs a child to its end, or kills it delay after its line
	// "txn k" when k > 0; it returns the child's "ack" count, or -1 when
	// killed before it.
	child := func(round int, resume bool, k int, delay time.Duration) int {
		env := []string{promoChildEnv + "=" + dir, promoChildEnv + "_ROUND=" + strconv.Itoa(round)}
		if resume {
			env = append(env, promoChildEnv+"_RESUME=1")
		}
		cmd, out := crashtest.Start(t, "TestCrashPromotionChild", env...)
		defer cmd.Wait()
		sc := bufio.NewScanner(out)
		acked := -1
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 2 && f[0] == "txn":
				if n, _ := strconv.Atoi(f[1]); n == k {
					time.AfterFunc(delay, func() { crashtest.Kill(cmd) })
				}
			case len(f) == 2 && f[0] == "ack":
				acked, _ = strconv.Atoi(f[1])
			case len(f) == 1 && f[0] == "root":
			default:
				cmd.Process.Kill()
				t.Fatalf("child: %s", sc.Text())
			}
		}
		return acked
	}
	cut := 0
	for round := range rounds {
		k, delay := 1+rng.IntN(12), time.Duration(rng.IntN(20_000))*time.Microsecond
		acked := child(round, false, k, delay)
		s, err := badgerstore.Open(dir, promoOptions)
		if err != nil {
			t.Fatal(err)
		}
		if err := storetest.Check(ctx, s); err != nil {
			t.Fatalf("round %d, after the kill at %v: %v", round, delay, err)
		}
		sp := "round-" + strconv.Itoa(round)
		log, _ := s.Log(ctx, sp, 0, 0)
		if acked >= 0 && len(log) != crashChainLen {
			t.Fatalf("round %d: the root's Put acknowledged, but %d of %d applied", round, len(log), crashChainLen)
		}
		if acked < 0 && len(log) > 0 && len(log) < crashChainLen {
			cut++
		}
		t.Logf("round %d: killed %v after transaction %d of the promotion; %d of %d applied at the reopen", round, delay, k, len(log), crashChainLen)
		s.Close()
		child(round, true, 0, 0)
		s, err = badgerstore.Open(dir, promoOptions)
		if err != nil {
			t.Fatal(err)
		}
		c := crashChain(round)
		log, _ = s.Log(ctx, sp, 0, 0)
		heads, _ := s.Heads(ctx, sp)
		pending, _ := s.Pending(ctx, sp)
		if len(log) != len(c) || log[len(log)-1] != c[len(c)-1].ID || len(heads) != 1 || heads[0] != c[len(c)-1].ID || len(pending) != 0 {
			t.Fatalf("round %d after the resume: %d applied, heads %v, %d pending", round, len(log), heads, len(pending))
		}
		for i, id := range log {
			if id != c[i].ID {
				t.Fatalf("round %d: log position %d holds %s, want chain entry %d", round, i+1, id, i)
			}
		}
		if err := storetest.Check(ctx, s); err != nil {
			t.Fatalf("round %d after the resume: %v", round, err)
		}
		s.Close()
	}
	t.Logf("%d of %d kills cut a promotion between its transactions", cut, rounds)
}
