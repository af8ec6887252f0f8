package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/automerge/automerge-go"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	wnode "github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// The product path: what a user's node does when it joins a session that
// another node holds. Two real nodes (package replica/node), each over a
// Badger store on disk (fsync on every commit, the default), run sync
// over libp2p on loopback; the fresh node pulls a 30k session of ballots
// and admits each envelope through the replica and its House (signature,
// causal past, roster, poll). Automerge syncs the same number of changes
// in the same run, so that the ratio is taken under the same load.
//
//	WITAN_PRODUCT_BALLOTS  ballots in the session (default 100000)
//	WITAN_PRODUCT_MEMBERS  roster size; one MR per this many ballots (default 10000)
//	WITAN_PRODUCT_CPUPROFILE  a file for a CPU profile of the witan pull alone
//	WITAN_PRODUCT_TRACE  a file for an execution trace (runtime/trace) of the witan pull alone

func envOr(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// ballotSession is a session of ballots: its create, a roster of members,
// MRs on the root branch under a majority rule, and on each MR one
// approving ballot from every member; each envelope is the child of the one
// before. A group body lists every member, and an envelope is at most
// dag.MaxEnvelopeSize, so 100k ballots come as 10 MRs of 10k voters.
type ballotSession struct {
	space   string
	items   []sync.Item
	ballots int
	bytes   int
}

func makeBallotSession(ballots, members int) ballotSession {
	b := ht.New(ht.Options{Simulation: true, Label: "product bench"})
	members = min(members, ballots)
	var txs []ht.Tx
	last := b.Create.ID
	add := func(tx ht.Tx) { txs = append(txs, tx); last = tx.ID }
	add(b.Create)
	add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, members), ht.Members(0, 1), last))
	s := ballotSession{space: b.Session.String()}
	for mr := 0; s.ballots < ballots; mr++ {
		open, id := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
			Members: ht.Members(0, members), Rule: ht.Majority(house.MinRootNotice), Summary: fmt.Sprintf("bench MR %d", mr)}, last)
		add(open)
		for m := 0; m < members && s.ballots < ballots; m++ {
			add(b.Ballot(ht.Member(m), id, "approve", dag.ID{}, last))
			s.ballots++
		}
	}
	for _, tx := range txs {
		it := sync.Item{Data: tx.Bytes}
		for _, a := range tx.Attach {
			it.Objects = append(it.Objects, dag.Object{ID: dag.Sum(a), Data: a})
		}
		s.items = append(s.items, it)
		s.bytes += len(tx.Bytes)
	}
	return s
}

func openNode(b *testing.B) *wnode.Node {
	key, err := dag.GenerateSigner(nil)
	if err != nil {
		b.Fatal(err)
	}
	// WITAN_BENCH_DEFLATE=1 deflates the batches on loopback too, as the
	// nodes did before they stopped there, to compare in one binary.
	n, err := wnode.Open(context.Background(), wnode.Options{Dir: b.TempDir(), NodeKey: key,
		Sync: &sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, DeflateLoopback: os.Getenv("WITAN_BENCH_DEFLATE") != ""}})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkProductFreshSync: a fresh node (Badger on disk) pulls a session
// of WITAN_PRODUCT_BALLOTS ballots from another node over libp2p on
// loopback, verifying and admitting every envelope; then, in the same
// iteration, a fresh Automerge document syncs as many changes from another
// (SyncState, in process). It reports both times, their ratio, and the
// process's CPU time for each.
func BenchmarkProductFreshSync(b *testing.B) {
	ctx := context.Background()
	nb, nm := envOr("WITAN_PRODUCT_BALLOTS", 100_000), envOr("WITAN_PRODUCT_MEMBERS", 10_000)
	gen := time.Now()
	s := makeBallotSession(nb, nm)
	src := openNode(b)
	defer src.Close()
	for i := 0; i < len(s.items); i += 1000 {
		res, err := src.Ingest(ctx, s.space, s.items[i:min(i+1000, len(s.items))])
		if err != nil || res.Count(sync.Accepted) != min(1000, len(s.items)-i) {
			b.Fatal(err, res.Count(sync.Accepted))
		}
	}
	want, err := src.Heads(ctx, s.space)
	if err != nil {
		b.Fatal(err)
	}
	am := automergeDoc(b, len(s.items))
	b.Logf("session: %d envelopes (%d ballots, %d members), %.0f B/envelope; source and Automerge document made in %v",
		len(s.items), s.ballots, nm, float64(s.bytes)/float64(len(s.items)), time.Since(gen).Round(time.Millisecond))
	var witanS, amS, witanCPU, amCPU, commits, witanAlloc float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dst := openNode(b)
		settle()
		stopProfile := startProfile(b, os.Getenv("WITAN_PRODUCT_CPUPROFILE"))
		stopTrace := startTrace(b, os.Getenv("WITAN_PRODUCT_TRACE"))
		stopAllocs := startAllocs(b, os.Getenv("WITAN_PRODUCT_ALLOCS"))
		alloc0 := allocated()
		start, cpu0 := time.Now(), cpuSeconds()
		b.StartTimer()
		if _, err := dst.Connect(ctx, src.Sync().Addrs()[0], []string{s.space}); err != nil {
			b.Fatal(err)
		}
		// The connection itself starts a pull too: done is when the heads
		// are the source's (a chain: its head admitted is every envelope
		// admitted).
		for deadline := time.Now().Add(10 * time.Minute); ; {
			got, _ := dst.Heads(ctx, s.space)
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("no convergence: %d heads", len(got))
			}
			time.Sleep(2 * time.Millisecond)
		}
		b.StopTimer()
		witanS += time.Since(start).Seconds()
		witanCPU += cpuSeconds() - cpu0
		witanAlloc += float64(allocated() - alloc0) // both nodes
		stopAllocs()
		stopTrace()
		stopProfile()
		if st, ok := dst.Store().(interface{ Stats() badgerstore.Stats }); ok {
			commits += float64(st.Stats().Commits)
		}
		dst.Close()

		doc := automerge.New()
		settle()
		start, cpu0 = time.Now(), cpuSeconds()
		b.StartTimer()
		automergeSync(b, am, doc)
		b.StopTimer()
		amS += time.Since(start).Seconds()
		amCPU += cpuSeconds() - cpu0
		if len(doc.Heads()) != 1 || doc.Heads()[0] != am.Heads()[0] {
			b.Fatal("automerge did not converge")
		}
	}
	n := float64(b.N)
	b.ReportMetric(witanS/n, "witan-s")
	b.ReportMetric(amS/n, "automerge-s")
	b.ReportMetric(witanS/amS, "witan/automerge")
	b.ReportMetric(witanCPU/n, "witan-cpu-s")
	b.ReportMetric(amCPU/n, "automerge-cpu-s")
	b.ReportMetric(witanCPU/amCPU, "witan/automerge-cpu")
	b.ReportMetric(float64(len(s.items))*n/witanS, "witan-env/s")
	b.ReportMetric(commits/n, "witan-commits")
	b.ReportMetric(witanAlloc/n/float64(len(s.items)), "witan-alloc-B/env")
}

// settle collects the garbage and waits for the finalizers it queued, so
// that neither side's timed part pays for the other's leftovers: the
// automerge-go objects made before (each result of a Commit is freed by a
// finalizer calling into C) were otherwise finalized during the witan pull,
// 0.14 of its 3.5 CPU-s in a profile. Finalizers run one after another on
// one goroutine, so once a sentinel queued last has run, those before it
// have (up to a second is waited). A result freed can leave others
// unreachable only at the next collection: after one round, the witan
// pull's profile still held 0.04–0.06 CPU-s of automerge-go's
// AMresultFree (two runs, 2026-12-07); after four, none.
func settle() {
	for range 4 {
		runtime.GC()
		done := make(chan struct{})
		runtime.SetFinalizer(new([16]byte), func(*[16]byte) { close(done) })
		runtime.GC()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	runtime.GC()
}

// startProfile starts a CPU profile into file, if named, and returns its stop.
func startProfile(b *testing.B, file string) (stop func()) {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// startAllocs writes the allocation profile to file+".base", if file is
// named, and returns what writes it to file: `go tool pprof
// -sample_index=alloc_space -diff_base file.base file` shows what was
// allocated in between.
func startAllocs(b *testing.B, file string) (stop func()) {
	if file == "" {
		return func() {}
	}
	write := func(name string) {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		runtime.GC() // the profile is as of the last collection
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	write(file + ".base")
	return func() { write(file) }
}

// startTrace starts an execution trace into file, if one is named, and
// returns what stops it.
func startTrace(b *testing.B, file string) (stop func()) {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		b.Fatal(err)
	}
	return func() { trace.Stop(); f.Close() }
}
