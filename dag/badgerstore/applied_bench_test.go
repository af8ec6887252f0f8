package badgerstore

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// BenchmarkOpenApplied measures what the applied index costs a store on
// disk of n entries (a chain, written 1,000 at a time): the time Open
// takes to rebuild it from the log runs, and the memory it holds, per
// entry. WITAN_APPLIED_N sets n (200,000 by default).
//
//	go test ./dag/badgerstore -run '^$' -bench OpenApplied -benchtime 5x
func BenchmarkOpenApplied(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("WITAN_APPLIED_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	dir := b.TempDir()
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	var parents []dag.ID
	batch := make([]dag.Entry, 0, 1000)
	for i := range n {
		e := dagtest.NewEntry("s", 1, i, parents)
		parents = []dag.ID{e.ID}
		if batch = append(batch, e); len(batch) == cap(batch) || i == n-1 {
			if _, err := s.Put(ctx, dag.Batch{Entries: batch}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	var heap float64
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if s.applied.len() != n {
			b.Fatalf("%d entries in the index, want %d", s.applied.len(), n)
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		s.applied = nil
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap = float64(m0.HeapAlloc-m1.HeapAlloc) / float64(n)
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "open-ns/entry")
	b.ReportMetric(heap, "index-B/entry")
}
