package synctest_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// BenchmarkIngest: a chain of signed envelopes ingested into a fresh
// in-memory replica in batches of 1024, as a fresh sync delivers them;
// every signature is verified.
func BenchmarkIngest(b *testing.B) {
	const n = 8192
	a := synctest.NewAuthor(1)
	space, root, rootID := a.Session("bench")
	items := []sync.Item{{Data: root}}
	prev := rootID
	for i := 1; i < n; i++ {
		data, id := a.Entry(space, []dag.ID{prev}, i)
		items = append(items, sync.Item{Data: data})
		prev = id
	}
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		r := synctest.NewMem(synctest.Options{})
		for i := 0; i < n; i += 1024 {
			res, err := r.Ingest(ctx, space, items[i:i+1024])
			if err != nil || res.Count(sync.Accepted) != 1024 {
				b.Fatal(err, res.Count(sync.Accepted))
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	// CPU per entry, which a busy machine disturbs less than the rate.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n*b.N)/1000, "cpu-µs/entry")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
