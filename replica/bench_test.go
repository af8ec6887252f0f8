package replica_test

// S11 scale (30k §10): an 11,000-member roster, ~300 MRs under mixed rules,
// ballots from most members, about a million envelopes. The sizes come from
// the environment so that CI stays small:
//
//	WITAN_S11_MEMBERS    roster size              (default 2000; S11: 11000)
//	WITAN_S11_MRS        merge requests           (default 30;   S11: 300)
//	WITAN_S11_ENVELOPES  envelopes in all, about  (default 20000; S11: 1000000)
//	WITAN_S11_DISK       BenchmarkS11Ingest's replica on disk (fsync on), not in memory
//	WITAN_S11_NOPIPELINE BenchmarkS11Ingest waits for each part's commit before the next
//
// go test ./replica -run '^$' -bench S11 -benchtime 1x

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
	"github.com/witan-dev/witan/rules"
)

// cpuTime is the process's user+system CPU time: the machine these
// benchmarks run on is shared, so wall-clock rates understate the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

type s11 struct {
	b        *ht.Builder
	txs      []ht.Tx
	ballots  int
	members  int
	mrs      []dag.ID
	extraMR  dag.ID  // an MR left open, for the incremental benchmark
	extra    []ht.Tx // ballots on extraMR, not in txs
	gen      time.Duration
	lastTxID dag.ID
}

var (
	s11Once sync.Once
	s11Data *s11
)

// s11Session generates the S11 session once per process: groups, four
// target branches with different merge rules (threshold on_threshold,
// threshold votes_cast on_deadline, designated_approvers, always_allow),
// MRs opened from one draft, then for each MR its ballots and an honest
// determination. Each entry's parent is the previous entry.
func s11Session(tb testing.TB) *s11 {
	s11Once.Do(func() {
		start := time.Now()
		n := envInt("WITAN_S11_MEMBERS", 2000)
		nMR := envInt("WITAN_S11_MRS", 30)
		total := envInt("WITAN_S11_ENVELOPES", 20000)
		committee := min(51, n)
		// A quarter of the MRs are decided by the committee, whose members
		// alone vote; the other MRs share the rest of the ballots.
		byCommittee := nMR / 4
		perMR := max(1, (total-2*nMR-byCommittee*committee)/max(1, nMR-byCommittee))
		b := ht.New(ht.Options{Label: "S11"})
		d := &s11{b: b, members: n}
		add := func(tx ht.Tx) { d.txs = append(d.txs, tx); d.lastTxID = tx.ID }
		add(b.Create)
		for i := 0; i < n; i++ {
			ht.Member(i)
		}
		add(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), d.lastTxID))
		add(b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), d.lastTxID))
		add(b.GroupCreate(ht.Member(1), "committee", ht.Members(0, committee), ht.Members(1, 2), d.lastTxID))
		add(b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 21), ht.Members(1, 2), d.lastTxID))
		deadline := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
		targets := []struct {
			name string
			rule rules.Ref
		}{
			{"floor", ht.Majority(0)},
			{"budget", ht.Ref(rules.KindThresholdVote, `{"num":3,"den":5,"cmp":"gte","basis":"votes_cast","quorum_num":1,"quorum_den":4,"closing":"on_deadline","deadline":"`+deadline+`"}`, 0)},
			{"committee", ht.Approvers("committee", 26)},
			{"clerk", ht.AlwaysAllow()},
		}
		for _, tg := range targets {
			add(b.BranchCreate(ht.Member(1), tg.name, "drafters", house.RootBranch, b.Genesis, false, tg.rule, ht.TwoThirds(), d.lastTxID))
		}
		add(b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), d.lastTxID))
		am, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Seed, "/us/t1/s1", "The period is 45 days.")}, d.lastTxID)
		add(am)
		type opened struct {
			id    dag.ID
			rule  rules.Ref
			el    []dag.Key
			voter func(i int) int
		}
		var ops []opened
		for i := 0; i < nMR; i++ {
			tg := targets[i%len(targets)]
			el, voter := ht.Members(0, n), func(k int) int { return k % n }
			if tg.name == "committee" {
				el, voter = ht.Members(0, committee), func(k int) int { return k % committee }
			}
			tx, id := b.Open(ht.Member(1+i%20), ht.MR{Source: "draft", SourceHead: change, Target: tg.name, TargetHead: b.Genesis,
				Members: ht.Members(0, n), Rule: tg.rule, Summary: fmt.Sprintf("S11 MR %d", i)}, d.lastTxID)
			add(tx)
			d.mrs = append(d.mrs, id)
			ops = append(ops, opened{id, tg.rule, el, voter})
		}
		for i, o := range ops {
			nb := perMR
			if o.rule.Kind == rules.KindDesignatedApprovers {
				nb = min(nb, committee)
			}
			nb = min(nb, n)
			var bs []rules.Ballot
			var ids []dag.ID
			for k := 0; k < nb; k++ {
				m := o.voter(k)
				choice := []string{"approve", "approve", "approve", "reject", "reject", "abstain"}[(m+i)%6]
				tx := b.Ballot(ht.Member(m), o.id, choice, dag.ID{}, d.lastTxID)
				add(tx)
				body, _ := rules.DecodeBallotBody(tx.Env.Body)
				bs = append(bs, rules.Ballot{Tx: tx.ID, Author: tx.Env.Author, BallotBody: body})
				ids = append(ids, tx.ID)
				d.ballots++
			}
			el := o.el
			if o.rule.Kind == rules.KindDesignatedApprovers {
				el = ht.Members(0, committee)
			}
			res, err := rules.Evaluate(o.rule, el, o.id, bs, rules.Context{})
			if err != nil {
				panic(err)
			}
			add(b.Determine(ht.Member(0), o.id, ids, string(res.IfClosed), d.lastTxID))
		}
		// One more MR left open, for the incremental cost per ballot.
		tx, id := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, Target: "floor", TargetHead: b.Genesis,
			Members: ht.Members(0, n), Rule: targets[0].rule, Summary: "S11 open MR"}, d.lastTxID)
		add(tx)
		d.extraMR = id
		prev := tx.ID
		for k := 0; k < min(n, 20000); k++ {
			bt := b.Ballot(ht.Member(k), id, "approve", dag.ID{}, prev)
			d.extra = append(d.extra, bt)
			prev = bt.ID
		}
		d.gen = time.Since(start)
		s11Data = d
	})
	tb.Logf("S11 data: %d members, %d MRs, %d envelopes (%d ballots); generated in %v", s11Data.members, len(s11Data.mrs), len(s11Data.txs), s11Data.ballots, s11Data.gen.Round(time.Millisecond))
	return s11Data
}

const s11Batch = 1000

// s11Call is how many envelopes BenchmarkS11Ingest hands one Ingest call:
// what a sync requester hands the node (sync.DefaultIngestItems), so that
// the replica verifies each part while it writes the one before.
const s11Call = 4096

// s11Frame and s11ReadAhead are the batch a sync responder sends and how
// many of them the requester reads, and pre-verifies, ahead of Ingest.
const (
	s11Frame     = 1024
	s11ReadAhead = 4
)

// BenchmarkS11Ingest measures, in one run, the raw batch-verify rate of
// every envelope and the replica's ingest rate (decode, batch verify,
// admit, Badger in memory), and reports ingest as a fraction of verify.
// Ingest takes the envelopes s11Call at a time, each frame of them
// pre-verified beside the Ingest before, as a sync requester does.
func BenchmarkS11Ingest(b *testing.B) {
	d := s11Session(b)
	ctx := context.Background()
	subs := make([]replica.Submission, len(d.txs))
	for i, tx := range d.txs {
		subs[i] = replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach}
	}
	var verify, ingest, verifyCPU, ingestCPU time.Duration
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		start, c0 := time.Now(), cpuTime()
		for i := 0; i < len(d.txs); i += s11Batch {
			bv := dag.NewBatchVerifier()
			for _, tx := range d.txs[i:min(i+s11Batch, len(d.txs))] {
				bv.Add(tx.Env.Author, dag.DomainEnvelope, tx.Env.SigningBytes(), tx.Env.Sig)
			}
			if ok, _ := bv.Verify(); !ok {
				b.Fatal("batch does not verify")
			}
		}
		verify, verifyCPU = verify+time.Since(start), verifyCPU+cpuTime()-c0
		ro := replica.Options{InMemory: true, NodeKey: nodeKey(b, 0)}
		if os.Getenv("WITAN_S11_DISK") != "" {
			ro.InMemory, ro.Dir = false, b.TempDir()
		}
		r, err := replica.Open(ctx, ro)
		if err != nil {
			b.Fatal(err)
		}
		if os.Getenv("WITAN_S11_NOPIPELINE") != "" {
			replica.NoPipeline(r) // each part's commit waited for before the next is planned
		}
		stopProfile := startProfile(b, os.Getenv("WITAN_S11_CPUPROFILE"))
		b.StartTimer()
		start, c0 = time.Now(), cpuTime()
		// As a sync requester does (sync.Preparer): a reader goroutine
		// pre-verifies each frame of s11Frame as it comes, at most
		// s11ReadAhead frames ahead of the Ingest calls.
		// WITAN_S11_NOPREPARE=1 leaves all verification to Ingest.
		frames := make(chan int, s11ReadAhead)
		prepare := os.Getenv("WITAN_S11_NOPREPARE") == ""
		go func() {
			for i := 0; i < len(subs); i += s11Frame {
				if prepare {
					r.PreVerify(subs[i:min(i+s11Frame, len(subs))])
				}
				frames <- min(i+s11Frame, len(subs))
			}
		}()
		for i := 0; i < len(subs); i += s11Call {
			hi := min(i+s11Call, len(subs))
			for got := i; got < hi; {
				got = <-frames
			}
			outs, err := r.Ingest(ctx, subs[i:hi])
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range outs {
				if o.Status != replica.Accepted {
					b.Fatalf("%+v", o)
				}
			}
		}
		ingest, ingestCPU = ingest+time.Since(start), ingestCPU+cpuTime()-c0
		b.StopTimer()
		stopProfile()
		r.Close()
		b.StartTimer()
	}
	n := float64(len(d.txs) * b.N)
	b.ReportMetric(n/verify.Seconds(), "verify-env/s")
	b.ReportMetric(n/ingest.Seconds(), "ingest-env/s")
	b.ReportMetric(verify.Seconds()/ingest.Seconds(), "ingest/verify")
	b.ReportMetric(verifyCPU.Seconds()/ingestCPU.Seconds(), "ingest/verify-cpu")
	// Cores the ingest kept busy (CPU over wall): what overlapping the
	// locked part with the next part's verification raises.
	b.ReportMetric(ingestCPU.Seconds()/ingest.Seconds(), "ingest-cores")
	b.ReportMetric(ingestCPU.Seconds()*1e6/n, "ingest-cpu-µs/env")
}

// startProfile starts a CPU profile into file, if named, and returns its
// stop: WITAN_S11_CPUPROFILE profiles the ingest of BenchmarkS11Ingest
// alone, without the generation of the session or the verify pass. So do,
// for where the wall time goes, WITAN_S11_BLOCKPROFILE and
// WITAN_S11_MUTEXPROFILE (every blocking event and contention, written
// at the end) and WITAN_S11_TRACE (runtime/trace).
func startProfile(b *testing.B, file string) (stop func()) {
	var stops []func()
	create := func(name string) *os.File {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	if file != "" {
		f := create(file)
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	for _, p := range []struct{ env, name string }{{"WITAN_S11_BLOCKPROFILE", "block"}, {"WITAN_S11_MUTEXPROFILE", "mutex"}} {
		name := os.Getenv(p.env)
		if name == "" {
			continue
		}
		if p.name == "block" {
			runtime.SetBlockProfileRate(1)
		} else {
			runtime.SetMutexProfileFraction(1)
		}
		stops = append(stops, func() {
			f := create(name)
			pprof.Lookup(p.name).WriteTo(f, 0) //nolint:errcheck // a benchmark's profile
			f.Close()
			runtime.SetBlockProfileRate(0)
			runtime.SetMutexProfileFraction(0)
		})
	}
	if name := os.Getenv("WITAN_S11_TRACE"); name != "" {
		f := create(name)
		if err := trace.Start(f); err != nil {
			b.Fatal(err)
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// BenchmarkS11Derive is the full derivation from genesis of the decoded,
// already verified entries: deterministic topological order, validation
// against each entry's causal past, polls, determinations re-evaluated and
// executed. The goal is ≥ 500k ballots folded per second.
//
// The heap is collected before each derivation, untimed: a collection's
// cost here is mostly marking the benchmark's own million decoded
// envelopes, and whether one falls inside a timed derivation was the
// largest source of noise in ballots/cpu-s. What a derivation allocates
// is reported (B/op, allocs/op) instead.
func BenchmarkS11Derive(b *testing.B) {
	d := s11Session(b)
	in := ht.Input(d.txs...)
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
		if it == 0 {
			b.StopTimer()
			merged := 0
			for _, m := range h.State().MRs {
				if m.Status == house.StatusMerged {
					merged++
				}
			}
			b.Logf("derived: %d MRs, %d merged, %d refolds", len(d.mrs)+1, merged, h.Counts().Refolds)
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(d.ballots*b.N)/b.Elapsed().Seconds(), "ballots/s")
	b.ReportMetric(float64(d.ballots*b.N)/cpu.Seconds(), "ballots/cpu-s")
	b.ReportMetric(float64(len(d.txs)*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkS11AdmitBallot is the incremental cost of one more ballot on a
// session at S11 scale: judged against its causal past and folded into its
// MR's poll, nothing refolded.
func BenchmarkS11AdmitBallot(b *testing.B) {
	d := s11Session(b)
	h, _, _, err := house.Derive(d.b.Session, ht.Input(d.txs...), d.b.Objects)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the derivation's garbage is not the next ballot's cost
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%len(d.extra) == 0 {
			// Every spare ballot is in: start again from the session.
			b.StopTimer()
			if h, _, _, err = house.Derive(d.b.Session, ht.Input(d.txs...), d.b.Objects); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.StartTimer()
		}
		tx := d.extra[i%len(d.extra)]
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkS11Tally is the tally query through the replica's public API,
// with its p95 latency (goal ≤ 1 ms).
func BenchmarkS11Tally(b *testing.B) {
	d := s11Session(b)
	ctx := context.Background()
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: nodeKey(b, 0)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < len(d.txs); i += s11Batch {
		subs := make([]replica.Submission, 0, s11Batch)
		for _, tx := range d.txs[i:min(i+s11Batch, len(d.txs))] {
			subs = append(subs, replica.Submission{Envelope: tx.Bytes, Attachments: tx.Attach})
		}
		if _, err := r.Ingest(ctx, subs); err != nil {
			b.Fatal(err)
		}
	}
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
}
