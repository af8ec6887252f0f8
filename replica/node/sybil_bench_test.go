package node_test

import (
	"bytes"
	"context"
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
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// BenchmarkSybilFlood is issue 15's Sybil flood at its scale: 245 peer ids
// (WITAN_SYBILS) each answer the victim's pull with 4096 (WITAN_SYBIL_ENTRIES)
// validly signed key.registers of the victim's session whose parents nobody
// has, one peer after another, against a victim on disk with the default
// bounds, which runs its value-log GC after every 35 peers (as witan up
// -gc-every does on a schedule). It fails unless the pending entries stay
// within the bounds and an honest pull afterwards takes one round trip, and
// reports what the flood cost: entries the victim took in, pending held,
// the victim's live heap and the process's peak RSS, the store's bytes on
// disk, and the honest pull. Run it once: -benchtime 1x. On 9f8fa68 the
// flood left a million pending entries (521 MiB) and the honest pull took 8
// rounds. TestSybilOrphansBounded is the same at a size CI runs.
// WITAN_SYBIL_HEAP=file writes a profile of the live heap after the flood.
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
		if (i+1)%35 == 0 {
			n, err := gc.GC(ctx)
			if err != nil {
				b.Fatal(err)
			}
			rewritten += n
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
		_, err := victimNode.Replica().Finality(ctx, space, last)
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
	n, err := gc.GC(ctx)
	if err != nil {
		b.Fatal(err)
	}
	rewritten += n
	b.StopTimer()
	// Closed, so that no file is counted at its preallocated size.
	closed = true
	victim.Close()
	if err := victimNode.Close(); err != nil {
		b.Fatal(err)
	}
	disk := treeBytes(dir)
	b.Logf("%d sybils × %d entries offered: %d sent before they were cut off, in %s; %d taken in pending; pending %d charged (peak %d), %d in the store, %d evicted; live heap %d MiB, peak RSS %d MiB; store %d MiB on disk (GC rewrote %d value-log files); honest pull: %d round(s), head applied %s after connecting",
		sybils, per, took0, flood.Round(time.Second), uint64(ps.Held)+ps.Evicted, ps.Held, peakPending, len(stored), ps.Evicted, ms.HeapInuse>>20, peakRSS()>>20, disk>>20, rewritten, len(pulls), took.Round(time.Millisecond))
	b.ReportMetric(float64(took0), "sent")
	b.ReportMetric(float64(uint64(ps.Held)+ps.Evicted), "taken")
	b.ReportMetric(float64(peakPending), "peak-pending")
	b.ReportMetric(float64(ms.HeapInuse>>20), "heap-MiB")
	b.ReportMetric(float64(peakRSS()>>20), "peak-rss-MiB")
	b.ReportMetric(float64(disk>>20), "disk-MiB")
	b.ReportMetric(float64(took.Milliseconds()), "honest-ms")
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
