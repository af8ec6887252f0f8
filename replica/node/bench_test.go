package node_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// benchBallots is a session whose n ballots are chained, with the
// create's seed nodes as objects.
func benchBallots(n int) (space string, items []sync.Item) {
	b := ht.New(ht.Options{Simulation: true})
	head, _, ballots := b.BallotChain(n)
	for _, tx := range append(head, ballots...) {
		it := sync.Item{Data: tx.Bytes}
		for _, a := range tx.Attach {
			it.Objects = append(it.Objects, dag.Object{ID: dag.Sum(a), Data: a})
		}
		items = append(items, it)
	}
	return b.Session.String(), items
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNodeIngest is the peer path of the node: a fresh in-memory node
// ingests a session of 2000 ballots in batches of 500 (Node.Ingest →
// replica.Ingest → Badger). Its twin on 9f8fa68 runs httpapi.Local.Ingest.
func BenchmarkNodeIngest(b *testing.B) {
	const n = 2000
	space, items := benchBallots(n)
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		nd, err := node.Open(ctx, node.Options{InMemory: true})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(items); i += 500 {
			res, err := nd.Ingest(ctx, space, items[i:min(i+500, len(items))])
			if err != nil || res.Count(sync.Accepted) != min(500, len(items)-i) {
				b.Fatal(err, res.Count(sync.Accepted))
			}
		}
		b.StopTimer()
		nd.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(items)*b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(len(items)*b.N)/1000, "cpu-µs/entry")
}

// BenchmarkNodeFreshSync: a fresh node joins a session of 2000 ballots that
// another node holds and pulls it over libp2p on loopback, through the
// node's own sync (Connect). Its twin on 9f8fa68 wires sync.NewNode to
// httpapi.Local by hand.
func BenchmarkNodeFreshSync(b *testing.B) {
	const n = 2000
	space, items := benchBallots(n)
	ctx := context.Background()
	cfg := sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}}
	src, err := node.Open(ctx, node.Options{InMemory: true, Sync: &cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Ingest(ctx, space, items); err != nil {
		b.Fatal(err)
	}
	want, _ := src.Heads(ctx, space)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dst, err := node.Open(ctx, node.Options{InMemory: true, Sync: &sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := dst.Connect(ctx, src.Sync().Addrs()[0], []string{space}); err != nil {
			b.Fatal(err)
		}
		for {
			got, _ := dst.Heads(ctx, space)
			if slices.Equal(got, want) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		dst.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(items)*b.N)/b.Elapsed().Seconds(), "entries/s")
}
