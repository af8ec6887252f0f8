package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag/badgerstore"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// The requester of a fresh sync runs in a child process (this test binary,
// started again with WITAN_BENCH_REQUESTER set), so that its peak resident
// set is its own: with both sides in one process, the source's data and
// the collector's headroom over it dominate.

// Environment of the child.
const (
	envRequester = "WITAN_BENCH_REQUESTER" // the source's multiaddr, with /p2p/
	envSpace     = "WITAN_BENCH_SPACE"
	envStore     = "WITAN_BENCH_STORE" // "mem" or a Badger directory
	// Knobs for experiments, read by the child only: a Badger index cache
	// and a Go memory limit (debug.SetMemoryLimit), in MiB.
	envIndexCache = "WITAN_BENCH_INDEX_CACHE_MIB"
	envMemLimit   = "WITAN_BENCH_MEMLIMIT_MIB"
	// Badger's memtable and block cache sizes (MiB; 0 keeps badgerstore's
	// defaults).
	envMemTable   = "WITAN_BENCH_MEMTABLE_MIB"
	envBlockCache = "WITAN_BENCH_BLOCKCACHE_MIB"
	// Any value: the child's store skips the fsync of each Put.
	envNoSync = "WITAN_BENCH_NOSYNC"
)

// childResult is what the child prints, as one JSON line, when done.
type childResult struct {
	Seconds   float64  `json:"seconds"`    // the pull alone
	CPU       float64  `json:"cpu"`        // CPU seconds the child used in the pull
	PeakRSS   float64  `json:"peak_rss"`   // VmHWM, MiB, for the whole process life
	PeakAnon  float64  `json:"peak_anon"`  // the most RssAnon seen during the pull (sampled every 20 ms), MiB
	HeapAfter float64  `json:"heap_after"` // Go heap in use after a full collection, MiB
	RSSAnon   float64  `json:"rss_anon"`   // anonymous resident memory at the end, MiB
	RSSFile   float64  `json:"rss_file"`   // file-backed resident memory (mapped tables) at the end, MiB
	HeapSys   float64  `json:"heap_sys"`   // Go heap obtained from the OS at the end, MiB
	Stats     ws.Stats `json:"stats"`
	Err       string   `json:"err,omitempty"`
}

func TestMain(m *testing.M) {
	if addr := os.Getenv(envRequester); addr != "" {
		res := requester(addr, os.Getenv(envSpace), os.Getenv(envStore))
		json.NewEncoder(os.Stdout).Encode(res)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// requester is the child: a fresh replica pulls space from the node at
// addr, verifying every signature, and reports.
func requester(addr, space, store string) (res childResult) {
	ctx := context.Background()
	if mib := envInt(envMemLimit); mib > 0 {
		debug.SetMemoryLimit(int64(mib) << 20)
	}
	var r *synctest.Replica
	if store == "mem" {
		r = synctest.NewMem(synctest.Options{})
	} else {
		o := badgerstore.Options{NoSync: os.Getenv(envNoSync) != ""}
		o.MemTableSize = int64(envInt(envMemTable)) << 20
		o.BlockCacheSize = int64(envInt(envBlockCache)) << 20
		o.Tune = func(bo badger.Options) badger.Options {
			// Badger keeps every table's index and Bloom filter on the
			// heap unless given an index cache: that grows with the data.
			if mib := envInt(envIndexCache); mib > 0 {
				bo = bo.WithIndexCacheSize(int64(mib) << 20)
			}
			return bo
		}
		st, err := badgerstore.Open(store, o)
		if err != nil {
			return childResult{Err: err.Error()}
		}
		r = synctest.New(st, synctest.Options{})
	}
	defer r.Close()
	n, err := ws.NewNode(ctx, r, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true})
	if err != nil {
		return childResult{Err: err.Error()}
	}
	defer n.Close()
	if err := n.Connect(ctx, addr); err != nil {
		return childResult{Err: err.Error()}
	}
	src, err := peer.Decode(addr[strings.LastIndex(addr, "/")+1:])
	if err != nil {
		return childResult{Err: err.Error()}
	}
	if p := os.Getenv("WITAN_BENCH_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			defer f.Close()
		}
	}
	// Anonymous memory is what the process allocates; VmHWM also counts
	// the pages of files it maps (Badger's value log and tables), which
	// the kernel reclaims under pressure.
	stopSampling := make(chan struct{})
	sampled := make(chan float64)
	go func() {
		peak := 0.0
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, status("RssAnon:"))
			select {
			case <-t.C:
			case <-stopSampling:
				sampled <- peak
				return
			}
		}
	}()
	start, cpu0 := time.Now(), cpuSeconds()
	res.Stats, err = n.SyncWith(ctx, src, space)
	pprof.StopCPUProfile()
	close(stopSampling)
	res.PeakAnon = <-sampled
	res.Seconds, res.CPU = time.Since(start).Seconds(), cpuSeconds()-cpu0
	if err != nil {
		res.Err = err.Error()
	}
	res.PeakRSS = peakRSS()
	res.RSSAnon, res.RSSFile = status("RssAnon:"), status("RssFile:")
	res.HeapAfter = liveHeap()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapSys = float64(ms.HeapSys) / (1 << 20)
	if p := os.Getenv("WITAN_BENCH_HEAPPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	runtime.KeepAlive(r)
	return res
}

// envInt reads a number from the environment, 0 if unset or not one.
func envInt(name string) int {
	n, _ := strconv.Atoi(os.Getenv(name))
	return n
}

// runRequester runs the child against source node sn and returns what it
// reports; store is "mem" or "badger".
func runRequester(b *testing.B, sn *ws.Node, space, store string, n int) childResult {
	dir := "mem"
	if store == "badger" {
		dir = b.TempDir()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envRequester+"="+sn.Addrs()[0],
		envSpace+"="+space,
		envStore+"="+dir,
	)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("requester: %v\n%s", err, errb.String())
	}
	var res childResult
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		b.Fatalf("requester said %q: %v", out.String(), err)
	}
	if res.Err != "" {
		b.Fatalf("requester: %s", res.Err)
	}
	if res.Stats.Accepted != n {
		b.Fatalf("requester accepted %d of %d: %+v", res.Stats.Accepted, n, res.Stats)
	}
	return res
}

// BenchmarkFreshSyncChild: a fresh replica in its own process pulls n
// entries over libp2p on loopback from this one and verifies every
// signature; peak-RSS-MiB is the child's VmHWM over its whole life (the
// goal: at most 256 MiB, flat in n, with the Badger store), which counts
// the mapped pages of Badger's files, and peak-anon-RSS-MiB the most
// anonymous memory sampled during the pull; sync-s is the pull alone
// (ns/op adds the child's start).
func BenchmarkFreshSyncChild(b *testing.B) {
	for _, n := range sizes() {
		for _, store := range []string{"badger", "mem"} {
			b.Run(fmt.Sprintf("%s/%d", store, n), func(b *testing.B) {
				c := getChain(n)
				src := source(b, c)
				sn := node(b, src, c.space)
				defer sn.Close()
				var res childResult
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res = runRequester(b, sn, c.space, store, n)
				}
				b.StopTimer()
				b.ReportMetric(res.Seconds, "sync-s")
				b.ReportMetric(res.CPU, "requester-cpu-s")
				b.ReportMetric(res.PeakRSS, "peak-RSS-MiB")
				b.ReportMetric(res.PeakAnon, "peak-anon-RSS-MiB")
				b.ReportMetric(res.HeapAfter, "heap-after-MiB")
				b.ReportMetric(res.RSSAnon, "anon-RSS-MiB")
				b.ReportMetric(res.RSSFile, "file-RSS-MiB")
				b.ReportMetric(res.HeapSys, "heap-sys-MiB")
				b.ReportMetric(float64(res.Stats.Rounds), "round-trips")
				b.ReportMetric(float64(res.Stats.BytesIn+res.Stats.BytesOut)/float64(c.bytes), "wire/canonical")
			})
		}
	}
}
