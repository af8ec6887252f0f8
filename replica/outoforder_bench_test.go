package replica_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// oooHistory is a session whose n ballots are chained one after another
// (each the child of the one before), after the create, the roster of n
// members and the MR's open.
func oooHistory(n int) (space dag.ID, head, ballots []replica.Submission) {
	b := ht.New(ht.Options{})
	h, _, bs := b.BallotChain(n)
	for _, tx := range h {
		head = append(head, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
	}
	for _, tx := range bs {
		ballots = append(ballots, replica.Submission{Envelope: tx.Bytes})
	}
	return b.Session, head, ballots
}

// BenchmarkOutOfOrderIngest measures a peer's delivery of a chain of
// ballots newest first, in batches of 256, so that every ballot waits in
// the store for its parent, and then of the session's head, which
// promotes them all in one Put. "cache" keeps the verified envelopes of
// waiting entries (Options.PendingCache, the default); "nocache" decodes
// and verifies each promoted entry again. "inorder" is the same delivery
// oldest first (nothing waits), for comparison. The ns/ballot figure
// covers the whole delivery, batch verification included.
// ns/promoted and cpu-ns/promoted time the last Ingest alone (wall clock
// and the process's CPU time, Badger's background work included), per
// promoted ballot. WITAN_OOO_BALLOTS sets the chain's length (default
// 2000).
func BenchmarkOutOfOrderIngest(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("WITAN_OOO_BALLOTS")); err == nil && v > 0 {
		n = v
	}
	space, head, ballots := oooHistory(n)
	rev := slices.Clone(ballots)
	slices.Reverse(rev)
	const batch = 256
	run := func(b *testing.B, cache int, order []replica.Submission, headFirst bool) {
		ctx := context.Background()
		var promote, promoteCPU time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(b, 0), PendingCache: cache})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if headFirst {
				if _, err := r.Ingest(ctx, head); err != nil {
					b.Fatal(err)
				}
			}
			for j := 0; j < len(order); j += batch {
				if _, err := r.Ingest(ctx, order[j:min(j+batch, len(order))]); err != nil {
					b.Fatal(err)
				}
			}
			if !headFirst {
				t0, c0 := time.Now(), processCPU()
				if _, err := r.Ingest(ctx, head); err != nil {
					b.Fatal(err)
				}
				promote += time.Since(t0)
				promoteCPU += processCPU() - c0
			}
			b.StopTimer()
			if log, _ := r.Log(ctx, space, 0, 0); len(log) != n+3 {
				b.Fatalf("log has %d entries, want %d", len(log), n+3)
			}
			r.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/ballot")
		if !headFirst {
			b.ReportMetric(float64(promote.Nanoseconds())/float64(b.N*n), "ns/promoted")
			b.ReportMetric(float64(promoteCPU.Nanoseconds())/float64(b.N*n), "cpu-ns/promoted")
		}
	}
	b.Run("cache", func(b *testing.B) { run(b, 0, rev, false) })
	b.Run("nocache", func(b *testing.B) { run(b, -1, rev, false) })
	b.Run("inorder", func(b *testing.B) { run(b, 0, ballots, true) })
}

// processCPU is the process's user+system CPU time (the machine is shared:
// wall-clock figures swing with its load).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
