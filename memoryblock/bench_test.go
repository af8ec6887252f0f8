package memoryblock_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

// go test ./memoryblock -run '^$' -bench . -benchtime 1s

func BenchmarkBlockHash(b *testing.B) {
	blk := sample(b, dag.Sum([]byte("p")))
	b.ReportAllocs()
	for b.Loop() {
		_ = mb.BlockHash(blk)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
}

// Decode from the wire, then verify: what a receiver pays per block.
func BenchmarkDecodeVerify(b *testing.B) {
	wire := sample(b, dag.Sum([]byte("p"))).Encode()
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		blk, err := mb.Decode(wire)
		if err != nil {
			b.Fatal(err)
		}
		if err := mb.VerifyBlock(blk); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
}

func BenchmarkVerifyBlock(b *testing.B) {
	blk := sample(b, dag.Sum([]byte("p")))
	b.ReportAllocs()
	for b.Loop() {
		if err := mb.VerifyBlock(blk); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
}

func BenchmarkAcceptBlock(b *testing.B) {
	parent := dag.Sum([]byte("p"))
	blk := sample(b, parent)
	have := mb.SetOf(parent)
	b.ReportAllocs()
	for b.Loop() {
		if r := mb.AcceptBlock(blk, 50, have); r.Accepted == nil {
			b.Fatal("refused")
		}
	}
}

// Ancestry of the tip of a 100,000-block chain. peak-heap-B is the heap
// the walk allocates with the collector off, which bounds its peak; the
// chain itself is built before the timer starts.
func BenchmarkAncestryChain100k(b *testing.B) {
	const n = 100_000
	m, ids := chain(b, n)
	top := ids[n-1]
	var peak uint64
	var ms runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		old := debug.SetGCPercent(-1)
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		b.StartTimer()
		h := mb.Ancestry(top, m)
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		debug.SetGCPercent(old)
		if len(h.Chain) != n {
			b.Fatalf("chain %d", len(h.Chain))
		}
		peak = max(peak, ms.HeapAlloc-before)
		b.StartTimer()
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
}

func BenchmarkIsDescendantOfChain100k(b *testing.B) {
	const n = 100_000
	m, ids := chain(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if d := mb.IsDescendantOf(ids[n-1], ids[0], m); !d.Descendant {
			b.Fatal("not a descendant")
		}
	}
}
