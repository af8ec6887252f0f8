package replica_test

// Opinions beside the S11 ballots (the opinion layer's performance goals): with
// WITAN_S11_OPINIONS opinions (default 100000) in the session, S11
// derivation stays ≥ 500k ballots/s and the tally p95 ≤ 1 ms, and
// /opinions paging p95 ≤ 20 ms.
//
// go test ./replica -run '^$' -bench 'S11(Derive|Tally)(Opinions)?$|OpinionsPage' -benchtime 3x

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/view"
)

var (
	opinionsOnce sync.Once
	opinionsTxs  []ht.Tx // S11's entries with the opinions interleaved, in a causal order
	opinionsN    int
)

// s11Opinions interleaves opinions with the S11 session: opinion k is a
// child of the k-th S11 entry after the roster (spread evenly over the
// log, each right after its parent), signed by a member, on one of the
// MRs (or the spec), every tenth declaring stakes on its MR and every
// fiftieth quoting the seed (a verified quote).
func s11Opinions(tb testing.TB) (*s11, []ht.Tx, int) {
	d := s11Session(tb)
	opinionsOnce.Do(func() {
		n := envInt("WITAN_S11_OPINIONS", 100000)
		b := d.b
		seed := b.Seed.Hash().String()
		// Parents: entries after the MRs opened (so that an opinion may
		// name any MR), evenly spaced.
		first := 0
		for i, tx := range d.txs {
			if tx.Env.Type == dag.TxBallotCast {
				first = i
				break
			}
		}
		span := len(d.txs) - first
		after := make([][]ht.Tx, len(d.txs))
		for k := 0; k < n; k++ {
			at := first + k*span/n
			mr := d.mrs[k%len(d.mrs)]
			extra := map[string]any{"stance": []string{"support", "oppose", "amend", "question", "neutral"}[k%5],
				"summary": fmt.Sprintf("opinion %d", k)}
			switch {
			case k%50 == 0:
				extra["quotes"] = []any{map[string]any{"as_of": seed, "nid": "/us/t1/s1", "text": "period is 30 days"}}
			case k%10 == 0:
				extra["disclosure"] = map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{},
					"ai_assistance": "none", "foreign_principal": nil,
					"stakes": []any{map[string]any{"subject": mr, "direction": "yes", "venue": "a simulated market", "size_band": nil}}}
			}
			subj, id := "mr", mr.String()
			if k%7 == 0 {
				subj, id = "spec", "30k-v0.13"
			}
			tx := b.Opinion(ht.Member(k%d.members), ht.OpinionBody("member", subj, id, extra), d.txs[at].ID)
			after[at] = append(after[at], tx)
		}
		for i, tx := range d.txs {
			opinionsTxs = append(opinionsTxs, tx)
			opinionsTxs = append(opinionsTxs, after[i]...)
		}
		opinionsN = n
	})
	return d, opinionsTxs, opinionsN
}

// BenchmarkS11DeriveOpinions is BenchmarkS11Derive with the opinions in
// the session: ballots/s counts the S11 ballots over the whole
// derivation (opinions included), the goal's measure.
func BenchmarkS11DeriveOpinions(b *testing.B) {
	d, txs, n := s11Opinions(b)
	in := ht.Input(txs...)
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuTime()
		h, refused, pending, err := house.Derive(d.b.Session, in, d.b.Objects)
		cpu += cpuTime() - cpu0
		if err != nil || len(refused) > 0 || len(pending) > 0 {
			b.Fatalf("derive: %v %v %d", err, refused[:min(3, len(refused))], len(pending))
		}
		if h.OpinionCount() != n {
			b.Fatalf("%d opinions, want %d", h.OpinionCount(), n)
		}
	}
	b.ReportMetric(float64(d.ballots*b.N)/b.Elapsed().Seconds(), "ballots/s")
	b.ReportMetric(float64(d.ballots*b.N)/cpu.Seconds(), "ballots/cpu-s")
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "opinions/s")
}

// opinionsReplica ingests the S11 session with its opinions into a
// replica (Badger in memory), once per benchmark.
func opinionsReplica(b *testing.B, txs []ht.Tx) *replica.Replica {
	ctx := context.Background()
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(b, 0)})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(txs); i += s11Batch {
		subs := make([]replica.Submission, 0, s11Batch)
		for _, tx := range txs[i:min(i+s11Batch, len(txs))] {
			subs = append(subs, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		outs, err := r.Ingest(ctx, subs)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if o.Status != replica.Accepted {
				b.Fatalf("%+v", o)
			}
		}
	}
	return r
}

// BenchmarkS11TallyOpinions is the tally query (with the members' stakes
// beside it, as /tally serves them) on the session with its opinions,
// with its p95 latency (goal ≤ 1 ms).
func BenchmarkS11TallyOpinions(b *testing.B) {
	d, txs, _ := s11Opinions(b)
	ctx := context.Background()
	r := opinionsReplica(b, txs)
	defer r.Close()
	space := d.b.Session.String()
	lat := make([]time.Duration, 0, b.N)
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := view.New(r).Tally(ctx, dag.MustParseID(space), d.mrs[i%len(d.mrs)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds())/1e3, "p95-µs")
	// The stakes rows alone (one member in ten declares on its MR).
	lat = lat[:0]
	for i := 0; i < 200; i++ {
		start := time.Now()
		if _, err := view.New(r).Stakes(ctx, dag.MustParseID(space), d.mrs[i%len(d.mrs)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds())/1e3, "stakes-p95-µs")
}

// BenchmarkOpinionsPage walks /opinions in pages of 100 (the HTTP
// default) through the replica's API, each page encoded as JSON as the
// handler does, unfiltered and filtered by one author; p95 latency per
// page (goal ≤ 20 ms).
func BenchmarkOpinionsPage(b *testing.B) {
	d, txs, _ := s11Opinions(b)
	ctx := context.Background()
	r := opinionsReplica(b, txs)
	defer r.Close()
	space := d.b.Session
	// A checkpoint, so that every opinion's finality is looked up (and
	// final_advisory), as on a node that has checkpointed.
	if _, err := r.Checkpoint(ctx, space); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    view.OpinionFilter
	}{
		{"all", view.OpinionFilter{}},
		{"author", view.OpinionFilter{Author: ht.Member(3).Key()}},
		{"subject", view.OpinionFilter{Subject: d.mrs[0].String()}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			var after dag.ID
			for i := 0; i < b.N; i++ {
				start := time.Now()
				page, next, err := view.New(r).Opinions(ctx, space, c.f, after, 100)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(page); err != nil {
					b.Fatal(err)
				}
				if len(page) > 0 && page[0].Finality != replica.FinalAdvisory {
					b.Fatalf("finality %s after a checkpoint", page[0].Finality)
				}
				lat = append(lat, time.Since(start))
				after = next // from the start again at the end
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds())/1e6, "p95-ms")
		})
	}
}
