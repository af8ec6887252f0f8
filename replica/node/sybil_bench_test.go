package node_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// BenchmarkSybilFlood is the Sybil flood of docs/security.md at its scale: 245 peer ids
// (WITAN_SYBILS) each answer the victim's pull with 4096 (WITAN_SYBIL_ENTRIES)
// validly signed key.registers of the victim's session whose parents nobody
// has, one peer after another, against a victim on disk with the default
// bounds and no GC schedule: the replica runs the value-log GC itself once
// enough bytes of dropped orphans are garbage (replica.Options.GCAfterDropped;
// WITAN_SYBIL_GC_EVERY=N adds a GC after every N peers, as witan up -gc-every
// does on a schedule). It fails unless the pending entries stay within the
// bounds and an honest pull afterwards takes one round trip, and reports
// what the flood cost: at checkpoints during the flood (after 35, 70, 140,
// 245 and 350 peers; WITAN_SYBIL_CHECKPOINTS) the victim's live heap, the
// blocks its store takes on disk and what the replica holds for pending
// entries, so that one run shows whether they level off; at the end the
// entries taken in, pending held, the peak RSS, the store's bytes on disk
// after Close, and the honest pull. Run it once: -benchtime 1x. On 9f8fa68
// the flood left a million pending entries (521 MiB) and the honest pull
// took 8 rounds. TestSybilOrphansBounded and TestSybilFloodFlat are the
// same at sizes CI runs. WITAN_SYBIL_HEAP=prefix writes a profile of the
// live heap at each checkpoint (prefix.N) and after the flood (prefix).
func BenchmarkSybilFlood(b *testing.B) {
	sybils, per := envInt(b, "WITAN_SYBILS", 245), envInt(b, "WITAN_SYBIL_ENTRIES", 4096)
	for range b.N {
		sybilFlood(b, sybils, per)
	}
}

func envInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q", name, v)
		}
		return n
	}
	return def
}

func sybilFlood(b *testing.B, sybils, per int) {
	ctx := context.Background()
	builder := ht.New(ht.Options{})
	roster := builder.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), builder.Create.ID)
	space := builder.Session.String()
	dir := b.TempDir()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	victimNode, err := node.Open(ctx, node.Options{Dir: dir, NodeKey: key})
	if err != nil {
		b.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			victimNode.Close()
		}
	}()
	honestNode, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer honestNode.Close()
	for _, tx := range []ht.Tx{builder.Create, roster} {
		for _, n := range []*node.Node{victimNode, honestNode} {
			if rc, err := n.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
				b.Fatalf("setup: %+v %v", rc, err)
			}
		}
	}
	var mu gosync.Mutex
	done := map[string][]sync.Stats{}
	victim, err := sync.NewNode(ctx, victimNode, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space},
		Engine: sync.Options{OnEvent: func(ev sync.Event) {
			if ev.Kind == sync.EventSyncDone {
				mu.Lock()
				done[ev.Peer] = append(done[ev.Peer], ev.Stats)
				mu.Unlock()
			}
		}}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if !closed {
			victim.Close()
		}
	}()
	gc := victimNode.Store().(interface {
		GC(context.Context) (int, error)
	})

	var gen gosync.Mutex // the builder signs one envelope at a time
	orphans := func(n int) []sync.Item {
		gen.Lock()
		defer gen.Unlock()
		items := make([]sync.Item, n)
		for k := range items {
			items[k] = sync.Item{Data: builder.KeyRegister(ht.Member(k%4), randomID()).Bytes}
		}
		return items
	}
	b.ResetTimer()
	start := time.Now()
	var sent, rewritten int
	var peakPending int
	checkpoints := envInts(b, "WITAN_SYBIL_CHECKPOINTS", []int{35, 70, 140, 245, 350})
	every := 0
	if os.Getenv("WITAN_SYBIL_GC_EVERY") != "" {
		every = envInt(b, "WITAN_SYBIL_GC_EVERY", 0)
	}
	var cps []checkpoint
	for i := range sybils {
		h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
		if err != nil {
			b.Fatal(err)
		}
		// The sybil signs its entries as it sends them, a thousand at a
		// time, and stops when the victim cuts it off.
		var once gosync.Once
		h.SetStreamHandler(protocol.ID(sync.ProtocolID), func(s network.Stream) {
			defer s.Close()
			buf := make([]byte, 64<<10)
			s.SetReadDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck
			if _, err := s.Read(buf); err != nil && err != io.EOF {
				return
			}
			first := false
			once.Do(func() { first = true })
			if !first || sync.WriteFrame(s, sync.Header{Entries: uint64(per)}.Encode()) != nil {
				return
			}
			for k := 0; k < per; k += 1000 {
				items := orphans(min(1000, per-k))
				if sync.WriteFrame(s, sync.EncodeBatch(items)) != nil {
					return
				}
				mu.Lock()
				sent += len(items)
				mu.Unlock()
			}
			sync.WriteFrame(s, sync.End{}.Encode()) //nolint:errcheck
		})
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := h.Connect(cctx, peer.AddrInfo{ID: victim.ID(), Addrs: victim.Host().Addrs()}); err != nil {
			b.Fatal(err)
		}
		cancel()
		waitFor(b, 120*time.Second, "the victim's pull from sybil "+strconv.Itoa(i), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(done[h.ID().String()]) > 0
		})
		h.Close()
		peakPending = max(peakPending, victimNode.Replica().PendingStats().Held)
		if every > 0 && (i+1)%every == 0 {
			n, err := gc.GC(ctx)
			if err != nil {
				b.Fatal(err)
			}
			rewritten += n
		}
		if slices.Contains(checkpoints, i+1) {
			mu.Lock()
			s := sent
			mu.Unlock()
			cp := measure(b, victimNode, dir, i+1, s, rewritten+int(victimNode.Replica().PendingStats().GCRewritten))
			cps = append(cps, cp)
			b.Logf("checkpoint %s", cp)
		}
	}
	flood := time.Since(start)
	ps := victimNode.Replica().PendingStats()
	stored, err := victimNode.Pending(ctx, space)
	if err != nil {
		b.Fatal(err)
	}
	if ps.Held > replicaPendingPerSpace || len(stored) > replicaPendingPerSpace || peakPending > replicaPendingPerSpace {
		b.Fatalf("%d pending charged (peak %d), %d stored; the bound is %d per space", ps.Held, peakPending, len(stored), replicaPendingPerSpace)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if path := os.Getenv("WITAN_SYBIL_HEAP"); path != "" {
		// The live heap after the flood, for go tool pprof.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}

	honest, err := sync.NewNode(ctx, honestNode, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true, Spaces: []string{space}})
	if err != nil {
		b.Fatal(err)
	}
	defer honest.Close()
	last := roster.ID
	for i := range 20 {
		tx := builder.KeyRegister(ht.Member(10+i), last)
		if rc, err := honestNode.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			b.Fatalf("honest entry: %+v %v", rc, err)
		}
		last = tx.ID
	}
	pullStart := time.Now()
	if err := victim.Connect(ctx, honest.Addrs()[0]); err != nil {
		b.Fatal(err)
	}
	waitFor(b, 60*time.Second, "the honest entries at the victim", func() bool {
		_, err := victimNode.Replica().Finality(ctx, builder.Session, last)
		mu.Lock()
		defer mu.Unlock()
		return err == nil && len(done[honest.ID().String()]) > 0
	})
	took := time.Since(pullStart)
	mu.Lock()
	pulls := slices.Clone(done[honest.ID().String()])
	took0 := sent
	mu.Unlock()
	for _, st := range pulls {
		if st.Rounds != 1 {
			b.Fatalf("honest pull took %d round trips, want 1: %+v", st.Rounds, st)
		}
	}
	b.StopTimer()
	ps = victimNode.Replica().PendingStats()
	// Closed, so that no file is counted at its preallocated size.
	closed = true
	victim.Close()
	if err := victimNode.Close(); err != nil {
		b.Fatal(err)
	}
	disk := treeBytes(dir)
	b.Logf("%d sybils × %d entries offered: %d sent before they were cut off, in %s; %d taken in pending; pending %d charged (peak %d), %d in the store, %d evicted (%d MiB); heap in use %d MiB, peak RSS %d MiB; store %d MiB on disk after Close (value-log GC: %d runs started by dropped bytes rewrote %d files, the schedule's %d); honest pull: %d round(s), head applied %s after connecting",
		sybils, per, took0, flood.Round(time.Second), uint64(ps.Held)+ps.Evicted, ps.Held, peakPending, len(stored), ps.Evicted, ps.DroppedBytes>>20, ms.HeapInuse>>20, peakRSS()>>20, disk>>20, ps.GCRuns, ps.GCRewritten, rewritten, len(pulls), took.Round(time.Millisecond))
	b.ReportMetric(float64(took0), "sent")
	b.ReportMetric(float64(uint64(ps.Held)+ps.Evicted), "taken")
	b.ReportMetric(float64(peakPending), "peak-pending")
	b.ReportMetric(float64(ms.HeapInuse>>20), "heap-MiB")
	b.ReportMetric(float64(peakRSS()>>20), "peak-rss-MiB")
	b.ReportMetric(float64(disk>>20), "disk-MiB")
	b.ReportMetric(float64(took.Milliseconds()), "honest-ms")
	for _, cp := range cps {
		b.ReportMetric(float64(cp.disk>>20), "disk-MiB@"+strconv.Itoa(cp.peers))
		b.ReportMetric(float64(cp.heap>>20), "heap-MiB@"+strconv.Itoa(cp.peers))
	}
}

// checkpoint is what the victim holds after so many sybils.
type checkpoint struct {
	peers, sent, taken, rewritten int
	heap, disk, vlog, lsm         int64
	vlogFiles                     int
	blockCache, indexCache        int64
	fp                            replica.PendingFootprint
}

func (c checkpoint) String() string {
	return fmt.Sprintf("after %d sybils: %d orphans sent, %d taken in; live heap %d MiB; store on disk %d MiB allocated (body files and value log %d MiB in %d files, LSM %d MiB; GC rewrote %d files so far); Badger caches: block %d MiB, index %d MiB; replica: %d charge records, %d/%d queue slots (len/cap), %d sources, pending cache %d envelopes %d MiB, %d/%d slots",
		c.peers, c.sent, c.taken, c.heap>>20, c.disk>>20, c.vlog>>20, c.vlogFiles, c.lsm>>20, c.rewritten, c.blockCache>>20, c.indexCache>>20,
		c.fp.Records, c.fp.QueueSlots, c.fp.QueueCap, c.fp.Sources, c.fp.CacheItems, c.fp.CacheBytes>>20, c.fp.CacheSlots, c.fp.CacheSlotCap)
}

// measure takes a checkpoint of the victim, whose store is open: the live
// heap after a GC (with a heap profile if WITAN_SYBIL_HEAP names a file
// prefix), the blocks the store's files take on disk (not their apparent
// sizes: Badger preallocates the value log's newest file), and what the
// replica holds for pending entries.
func measure(b *testing.B, n *node.Node, dir string, peers, sent, rewritten int) checkpoint {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if path := os.Getenv("WITAN_SYBIL_HEAP"); path != "" {
		f, err := os.Create(path + "." + strconv.Itoa(peers))
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	ps := n.Replica().PendingStats()
	cp := checkpoint{peers: peers, sent: sent, taken: ps.Held + int(ps.Evicted), rewritten: rewritten, heap: int64(ms.HeapAlloc),
		fp: n.Replica().PendingFootprint()}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		var used int64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			used = st.Blocks * 512
		}
		cp.disk += used
		if strings.HasSuffix(path, ".vlog") || strings.HasSuffix(path, ".dat") {
			cp.vlog += used
			cp.vlogFiles++
		} else if strings.HasSuffix(path, ".sst") {
			cp.lsm += used
		}
		return nil
	})
	if db, ok := n.Store().(interface{ DB() *badger.DB }); ok {
		if m := db.DB().BlockCacheMetrics(); m != nil {
			cp.blockCache = int64(m.CostAdded()) - int64(m.CostEvicted())
		}
		if m := db.DB().IndexCacheMetrics(); m != nil {
			cp.indexCache = int64(m.CostAdded()) - int64(m.CostEvicted())
		}
	}
	return cp
}

// envInts reads a comma-separated list of counts.
func envInts(b *testing.B, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q", name, v)
		}
		out = append(out, n)
	}
	return out
}

// replicaPendingPerSpace is the default bound the flood meets (one session).
const replicaPendingPerSpace = 65536

// treeBytes returns the bytes of the files under dir.
func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// peakRSS returns the process's peak resident set (VmHWM), 0 if unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
