package house_test

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

var (
	admitOnce sync.Once
	admitTxs  []ht.Tx
	admitB    *ht.Builder
)

// admitSession is a session of 100k ballots: a roster of 10k members and
// ten MRs on the root branch, each with a ballot from every member, each
// envelope the child of the one before (the shape of the product
// benchmark in bench/).
func admitSession() (*ht.Builder, []ht.Tx) {
	admitOnce.Do(func() {
		const members, mrs = 10_000, 10
		b := ht.New(ht.Options{Simulation: true})
		last := b.Create.ID
		add := func(tx ht.Tx) { admitTxs = append(admitTxs, tx); last = tx.ID }
		add(b.Create)
		add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, members), ht.Members(0, 1), last))
		for mr := 0; mr < mrs; mr++ {
			open, id := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
				Members: ht.Members(0, members), Rule: ht.Majority(house.MinRootNotice), Summary: fmt.Sprintf("MR %d", mr)}, last)
			add(open)
			for m := 0; m < members; m++ {
				add(b.Ballot(ht.Member(m), id, "approve", dag.ID{}, last))
			}
		}
		admitB = b
	})
	return admitB, admitTxs
}

// BenchmarkAdmitFresh is the House's part of a replica's ingest: a House
// made with New (no arena sized in advance, as a replica's House is when
// it meets a session through sync) admits 100k ballots one by one.
func BenchmarkAdmitFresh(b *testing.B) {
	bd, txs := admitSession()
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuTime()
		h := house.New(bd.Session, bd.Objects)
		for _, tx := range txs {
			if err := h.Admit(tx.ID, tx.Env); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(txs)*b.N), "ns/entry")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(txs)*b.N), "cpu-ns/entry")
}

// cpuTime is the process's user+system CPU time: on a shared machine it
// compares runs better than wall time (the collector's background work
// included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
