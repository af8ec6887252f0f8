package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/automerge/automerge-go"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

func sizes() []int {
	s := []int{10_000, 100_000}
	if os.Getenv("WITAN_BENCH_1M") != "" {
		s = append(s, 1_000_000)
	}
	return s
}

// chain is a space of signed envelopes, each the child of the one before:
// the tallest DAG there is for its size.
type chain struct {
	space   string
	entries []dag.Entry
	bytes   int
}

var (
	chainOnce gosync.Once
	theChain  chain
)

func getChain(n int) chain {
	chainOnce.Do(func() {
		max := sizes()[len(sizes())-1]
		a := synctest.NewAuthor(1)
		space, root, rootID := a.Session("bench")
		c := chain{space: space, entries: []dag.Entry{{ID: rootID, Space: space, Data: root}}, bytes: len(root)}
		prev := rootID
		for i := 1; i < max; i++ {
			data, id := a.Entry(space, []dag.ID{prev}, i)
			c.entries = append(c.entries, dag.Entry{ID: id, Space: space, Parents: []dag.ID{prev}, Data: data})
			c.bytes += len(data)
			prev = id
		}
		theChain = c
	})
	c := theChain
	c.entries = c.entries[:n]
	c.bytes = 0
	for _, e := range c.entries {
		c.bytes += len(e.Data)
	}
	return c
}

// source returns a replica holding c, put straight into its store (the
// source is trusted; the requester validates everything).
func source(b *testing.B, c chain) *synctest.Replica {
	st := dag.NewMemStore()
	for i := 0; i < len(c.entries); i += 10_000 {
		if _, err := st.Put(context.Background(), dag.Batch{Entries: c.entries[i:min(i+10_000, len(c.entries))]}); err != nil {
			b.Fatal(err)
		}
	}
	return synctest.New(st, synctest.Options{})
}

// resetPeakRSS starts a new peak-RSS measurement (Linux: clear_refs 5).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns the peak resident set since the last reset, in MiB.
func peakRSS() float64 { return status("VmHWM:") }

// liveHeap returns the Go heap in use after a full collection, in MiB:
// what the requester retains, whatever the collector's headroom (which,
// with the source replica in the same process, dominates RSS).
func liveHeap() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// allocated returns the bytes the process has allocated on the heap so far.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// cpuSeconds returns the user and system CPU time the process has used.
// Unlike wall time it does not count the time other processes on the
// machine take the cores, so it compares runs on a loaded machine.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// rss returns the resident set now, in MiB.
func rss() float64 { return status("VmRSS:") }

func status(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

func node(b *testing.B, r ws.Local, spaces ...string) *ws.Node {
	n, err := ws.NewNode(context.Background(), r, ws.Config{
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Manual:      true,
		Spaces:      spaces,
		// WITAN_BENCH_DEFLATE=1: deflated batches on loopback too, as
		// before, to compare in one binary.
		DeflateLoopback: os.Getenv("WITAN_BENCH_DEFLATE") != "",
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkFreshSync: a replica with nothing pulls a space of n entries
// over libp2p on loopback (TCP, Noise, yamux) and verifies every
// signature, each batch as it arrives (synctest.Preparing); against it, a fresh Automerge document syncing n changes
// from another with SyncState, in process. WITAN_FRESH_CPUPROFILE names a
// file for a CPU profile of the witan syncs alone (both sides),
// WITAN_FRESH_TRACE one for an execution trace of them (runtime/trace),
// WITAN_FRESH_ALLOCS one for what they allocate (see startAllocs).
func BenchmarkFreshSync(b *testing.B) {
	for _, n := range sizes() {
		b.Run(fmt.Sprintf("witan-libp2p-badger/%d", n), func(b *testing.B) {
			freshWitan(b, n, func() *synctest.Replica {
				st, err := badgerstore.Open(b.TempDir(), badgerstore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				return synctest.New(st, synctest.Options{})
			})
		})
		b.Run(fmt.Sprintf("witan-libp2p/%d", n), func(b *testing.B) {
			freshWitan(b, n, func() *synctest.Replica { return synctest.NewMem(synctest.Options{}) })
		})
		b.Run(fmt.Sprintf("automerge/%d", n), func(b *testing.B) {
			src := automergeDoc(b, n)
			var rounds, wire int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dst := automerge.New()
				resetPeakRSS()
				base := rss()
				cpu0 := cpuSeconds()
				b.StartTimer()
				rounds, wire = automergeSync(b, src, dst)
				b.StopTimer()
				b.ReportMetric(cpuSeconds()-cpu0, "cpu-s")
				b.ReportMetric(peakRSS(), "peak-RSS-MiB")
				b.ReportMetric(peakRSS()-base, "RSS-growth-MiB")
				if len(dst.Heads()) != 1 || dst.Heads()[0] != src.Heads()[0] {
					b.Fatal("automerge did not converge")
				}
			}
			b.ReportMetric(float64(rounds), "round-trips")
			b.ReportMetric(float64(wire)/float64(n), "wire-B/entry")
		})
	}
}

// freshWitan syncs a chain of n entries into a fresh replica from newDst.
func freshWitan(b *testing.B, n int, newDst func() *synctest.Replica) {
	c := getChain(n)
	src := source(b, c)
	sn := node(b, src, c.space)
	defer sn.Close()
	var st ws.Stats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := newDst()
		// The requester verifies each batch as it arrives, while the one
		// before is stored, as the node's replica does (sync.Preparer).
		dn := node(b, synctest.Preparing{Replica: dst})
		if err := dn.Connect(context.Background(), sn.Addrs()[0]); err != nil {
			b.Fatal(err)
		}
		heap0 := liveHeap()
		resetPeakRSS()
		base := rss()
		stopProfile := startProfile(b, os.Getenv("WITAN_FRESH_CPUPROFILE"))
		stopTrace := startTrace(b, os.Getenv("WITAN_FRESH_TRACE"))
		stopAllocs := startAllocs(b, os.Getenv("WITAN_FRESH_ALLOCS"))
		alloc0 := allocated()
		cpu0 := cpuSeconds()
		b.StartTimer()
		var err error
		st, err = dn.SyncWith(context.Background(), sn.ID(), c.space)
		if err != nil || st.Accepted != n {
			b.Fatalf("%v %+v", err, st)
		}
		b.StopTimer()
		stopAllocs()
		stopTrace()
		stopProfile()
		b.ReportMetric(cpuSeconds()-cpu0, "cpu-s") // both sides, and the collector
		b.ReportMetric(float64(allocated()-alloc0)/float64(n), "alloc-B/entry")
		b.ReportMetric(peakRSS(), "peak-RSS-MiB")
		b.ReportMetric(peakRSS()-base, "RSS-growth-MiB")
		b.ReportMetric(liveHeap()-heap0, "live-heap-growth-MiB")
		dn.Close()
		dst.Close()
	}
	b.ReportMetric(float64(st.Rounds), "round-trips")
	b.ReportMetric(float64(st.BytesIn+st.BytesOut)/float64(n), "wire-B/entry")
	b.ReportMetric(float64(c.bytes)/float64(n), "canonical-B/entry")
	b.ReportMetric(float64(st.BytesIn+st.BytesOut)/float64(c.bytes), "wire/canonical")
}

// automergeDoc returns a document of n changes, each setting one key.
func automergeDoc(b *testing.B, n int) *automerge.Doc {
	d := automerge.New()
	m := d.RootMap()
	for i := 0; i < n; i++ {
		if err := m.Set(fmt.Sprintf("k%d", i%1000), i); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Commit(fmt.Sprintf("change %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// automergeSync exchanges sync messages between a and b until neither has
// more to say; a round trip is one message each way.
func automergeSync(tb testing.TB, a, b *automerge.Doc) (rounds, wire int) {
	sa, sb := automerge.NewSyncState(a), automerge.NewSyncState(b)
	for {
		moved := false
		if m, ok := sb.GenerateMessage(); ok {
			wire += len(m.Bytes())
			if _, err := sa.ReceiveMessage(m.Bytes()); err != nil {
				tb.Fatal(err)
			}
			moved = true
		}
		if m, ok := sa.GenerateMessage(); ok {
			wire += len(m.Bytes())
			if _, err := sb.ReceiveMessage(m.Bytes()); err != nil {
				tb.Fatal(err)
			}
			moved = true
		}
		if !moved {
			return rounds, wire
		}
		rounds++
	}
}

// BenchmarkDivergent: two replicas that share a space of 1000 entries
// each write k more, then pull from each other over libp2p. Round trips
// are per pull; overhead is every byte of both pulls beyond the entries.
func BenchmarkDivergent(b *testing.B) {
	for _, k := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("witan-libp2p/k=%d", k), func(b *testing.B) {
			ctx := context.Background()
			var rounds, overhead, entries float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				base := getChain(1000)
				ra, rb := source(b, base), source(b, base)
				na, nb := node(b, ra, base.space), node(b, rb, base.space)
				if err := na.Connect(ctx, nb.Addrs()[0]); err != nil {
					b.Fatal(err)
				}
				// One sync each way first, so each knows the other's heads.
				if _, err := na.SyncWith(ctx, nb.ID(), base.space); err != nil {
					b.Fatal(err)
				}
				if _, err := nb.SyncWith(ctx, na.ID(), base.space); err != nil {
					b.Fatal(err)
				}
				for j, r := range []*synctest.Replica{ra, rb} {
					if _, err := synctest.NewAuthor(byte(10+j)).Write(ctx, r, base.space, k); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				sa, err := na.SyncWith(ctx, nb.ID(), base.space)
				if err != nil {
					b.Fatal(err)
				}
				sb, err := nb.SyncWith(ctx, na.ID(), base.space)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if sa.Accepted != k || sb.Accepted != k {
					b.Fatalf("%+v %+v", sa, sb)
				}
				rounds += float64(sa.Rounds+sb.Rounds) / 2
				overhead += float64(sa.BytesIn + sa.BytesOut + sb.BytesIn + sb.BytesOut - sa.EntryBytes - sb.EntryBytes)
				entries += float64(2 * k)
				na.Close()
				nb.Close()
			}
			b.ReportMetric(rounds/float64(b.N), "round-trips/pull")
			b.ReportMetric(overhead/float64(b.N), "overhead-B")
			b.ReportMetric(overhead/entries, "overhead-B/entry")
		})
	}
}
