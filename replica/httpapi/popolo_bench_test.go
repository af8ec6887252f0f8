package httpapi_test

// BenchmarkPopoloExport streams GET /export/popolo of an S11-sized
// session over a real listener (30k §10 S11: 11,000 members, ~300 MRs,
// about a million envelopes; the goal: ≤ 10 s, flat memory). The
// size comes from the environment, as replica's S11 benchmarks:
//
//	WITAN_S11_MEMBERS    roster size              (default 2000; S11: 11000)
//	WITAN_S11_MRS        merge requests           (default 30;   S11: 300)
//	WITAN_S11_ENVELOPES  ballots in all, about    (default 20000; S11: 1000000)
//
// go test ./replica/httpapi -run '^$' -bench PopoloExport -benchtime 1x
//
// Reported: s/export (wall time of one export, read whole by the client),
// body-MB, votes, and peak-heap-MB: the largest live heap seen while the
// export runs (runtime/metrics, sampled every 2 ms) less the heap after a
// collection just before it, and alloc-MB/export, every byte allocated in
// the process (server and client) during one export. The peak counts
// garbage not yet collected: with the House of a million ballots live,
// the collector lets garbage grow to about the live heap before it runs,
// so the peak says little at S11; what the export holds is the snapshot
// (one byte per member per MR) and a 64 KiB buffer, and alloc-MB/export
// against body-MB says whether anything is allocated per vote.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

func BenchmarkPopoloExport(b *testing.B) {
	members := envInt("WITAN_S11_MEMBERS", 2000)
	nMR := envInt("WITAN_S11_MRS", 30)
	total := envInt("WITAN_S11_ENVELOPES", 20000)
	n := newNode(b)
	ctx := context.Background()
	rep := n.node.Replica()
	bl := ht.New(ht.Options{Label: "S11 Popolo", Simulation: true})
	var last dag.ID
	var batch []replica.Submission
	flush := func() {
		if len(batch) == 0 {
			return
		}
		outs, err := rep.Ingest(ctx, batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if o.Status != replica.Accepted {
				b.Fatalf("%+v", o)
			}
		}
		batch = batch[:0]
	}
	add := func(tx ht.Tx) {
		batch = append(batch, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		last = tx.ID
		if len(batch) == 1000 {
			flush()
		}
	}
	start := time.Now()
	add(bl.Create)
	add(bl.GroupCreate(ht.Member(0), "roster", ht.Members(0, members), ht.Members(0, 1), last))
	add(bl.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last))
	add(bl.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 21), ht.Members(1, 2), last))
	add(bl.BranchCreate(ht.Member(1), "floor", "drafters", house.RootBranch, bl.Genesis, false, ht.Majority(0), ht.TwoThirds(), last))
	add(bl.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, bl.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	am, change := bl.Append(ht.Member(2), "draft", bl.Genesis, []statute.Op{ht.Replace(bl.Seed, "/us/t1/s1", "The period is 45 days.")}, last)
	add(am)
	var mrs []dag.ID
	for i := 0; i < nMR; i++ {
		tx, id := bl.Open(ht.Member(1+i%20), ht.MR{Source: "draft", SourceHead: change, Target: "floor", TargetHead: bl.Genesis,
			Members: ht.Members(0, members), Rule: ht.Majority(0), Summary: fmt.Sprintf("S11 MR %d", i)}, last)
		add(tx)
		mrs = append(mrs, id)
	}
	perMR := min(members, max(1, total/nMR))
	votes := 0
	for i, mr := range mrs {
		for k := 0; k < perMR; k++ {
			m := (k + i*7) % members
			add(bl.Ballot(ht.Member(m), mr, []string{"approve", "approve", "reject", "abstain"}[(m+i)%4], dag.ID{}, last))
			votes++
		}
	}
	flush()
	if _, err := rep.Checkpoint(ctx, bl.Session); err != nil {
		b.Fatal(err)
	}
	b.Logf("session: %d members, %d MRs, %d ballots; generated and ingested in %v", members, nMR, votes, time.Since(start).Round(time.Millisecond))

	url := n.srv.URL + httpapi.Base + "/export/popolo?session=" + bl.Session.String()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 { metrics.Read(allocs); return allocs[0].Value.Uint64() }
	var alloc uint64
	var wall time.Duration
	var peak, body uint64
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		runtime.GC()
		base := heap()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var top uint64
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				if h := heap(); h > top {
					top = h
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		b.StartTimer()
		a0 := allocated()
		t0 := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		cw := &countTail{}
		if _, err := io.Copy(cw, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		wall += time.Since(t0)
		alloc += allocated() - a0
		b.StopTimer()
		close(stop)
		wg.Wait()
		if resp.StatusCode != http.StatusOK || string(cw.tail[:]) != "]}\n" {
			b.Fatalf("%d, body ends %q", resp.StatusCode, cw.tail[:])
		}
		if top > base && top-base > peak {
			peak = top - base
		}
		body = cw.n
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/export")
	b.ReportMetric(float64(body)/1e6, "body-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(votes), "votes")
	b.ReportMetric(float64(alloc)/float64(b.N)/1e6, "alloc-MB/export")
}

// countTail counts what it is given and keeps the last three bytes.
type countTail struct {
	n    uint64
	tail [3]byte
}

func (c *countTail) Write(p []byte) (int, error) {
	c.n += uint64(len(p))
	for _, x := range p[max(0, len(p)-3):] {
		c.tail[0], c.tail[1], c.tail[2] = c.tail[1], c.tail[2], x
	}
	return len(p), nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
