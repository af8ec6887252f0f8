package harness

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Metrics are the §10 metrics the harness measures (reported, not
// pass/fail in v0.13). A nil member was not measured; Notes say why.
type Metrics struct {
	// SustainedTxPerSec: accepted S11 ballots per second of wall time
	// while the harness's workers submitted them.
	SustainedTxPerSec *float64 `json:"sustained_tx_per_sec"`
	// DecisiveToMergedMs: from the acceptance of the ballot that decides
	// an MR to every node serving it merged (the harness submits the
	// determination in between, as an eventual node needs one).
	DecisiveToMergedP50Ms *float64 `json:"decisive_ballot_to_merged_head_p50_ms"`
	DecisiveToMergedP95Ms *float64 `json:"decisive_ballot_to_merged_head_p95_ms"`
	LatencySamples        int      `json:"latency_samples"`
	// ConvergenceMs: after S11's last write, until every node serves the
	// same heads, state hash and root snapshot.
	ConvergenceMs *float64 `json:"two_node_convergence_ms"`
	// FreshNodeSyncMs: a node started empty, until it holds what the
	// first node holds of the S11 session.
	FreshNodeSyncMs *float64 `json:"fresh_node_sync_ms"`
	// StoragePer1000Ballots: growth of the first node's data directory
	// per 1,000 S11 ballots, in bytes.
	StoragePer1000Ballots *int64 `json:"storage_bytes_per_1000_ballots"`
	// S8RateLimitedShare: share of the S8 flood refused rate_limited.
	S8RateLimitedShare *float64 `json:"s8_rate_limited_share"`
	// FactsMs and ChecksMs: GET /facts and /checks of the largest S11 MR
	// (the one touching the most nodes), on the first node.
	FactsMs        *float64 `json:"largest_mr_facts_ms"`
	ChecksMs       *float64 `json:"largest_mr_checks_ms"`
	LargestMRNodes int      `json:"largest_mr_nodes"`
	Ballots        int      `json:"s11_ballots"`
	MRs            int      `json:"s11_mrs"`
	Members        int      `json:"s11_members"`
	Notes          []string `json:"notes,omitempty"`
}

func ms(d time.Duration) *float64 {
	v := float64(d.Microseconds()) / 1000
	return &v
}

func (m *Metrics) write(w io.Writer) {
	f := func(name string, v *float64, unit string) {
		if v == nil {
			fmt.Fprintf(w, "  %-44s not measured\n", name)
			return
		}
		fmt.Fprintf(w, "  %-44s %.3f %s\n", name, *v, unit)
	}
	fmt.Fprintf(w, "metrics (S11: %d members, %d MRs, %d ballots):\n", m.Members, m.MRs, m.Ballots)
	f("sustained tx/s", m.SustainedTxPerSec, "tx/s")
	f("decisive ballot → merged head p50", m.DecisiveToMergedP50Ms, "ms")
	f("decisive ballot → merged head p95", m.DecisiveToMergedP95Ms, "ms")
	f("two-node convergence", m.ConvergenceMs, "ms")
	f("fresh node sync from genesis", m.FreshNodeSyncMs, "ms")
	if m.StoragePer1000Ballots == nil {
		fmt.Fprintf(w, "  %-44s not measured\n", "storage growth per 1,000 ballots")
	} else {
		fmt.Fprintf(w, "  %-44s %d bytes\n", "storage growth per 1,000 ballots", *m.StoragePer1000Ballots)
	}
	f("S8 share rate-limited", m.S8RateLimitedShare, "(of the flood)")
	f(fmt.Sprintf("/facts of the largest MR (%d nodes)", m.LargestMRNodes), m.FactsMs, "ms")
	f("/checks of the largest MR", m.ChecksMs, "ms")
	for _, n := range m.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func (r *run) addLatency(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latencies = append(r.latencies, d)
}

func (r *run) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Metrics.Notes = append(r.rep.Metrics.Notes, fmt.Sprintf(format, args...))
}

// percentile of sorted durations (nearest rank).
func percentile(d []time.Duration, p int) time.Duration {
	i := (len(d)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return d[i-1]
}

func (r *run) finishLatency() {
	if len(r.latencies) == 0 {
		return
	}
	d := append([]time.Duration(nil), r.latencies...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	r.rep.Metrics.DecisiveToMergedP50Ms = ms(percentile(d, 50))
	r.rep.Metrics.DecisiveToMergedP95Ms = ms(percentile(d, 95))
	r.rep.Metrics.LatencySamples = len(d)
}

// dirSize sums the sizes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// s11 is the scale scenario: a roster of S11.Members, S11.MRs MRs under
// mixed rules (a quarter each into branches ruled by a majority of the
// electorate, two thirds of it, designated approvers and always_allow),
// each editing a section no other MR into its branch edits, so none goes
// stale, and MR 0 editing a block of extra sections (the largest MR, for
// /facts and /checks).
//
// Blocs and turnout, seeded: each threshold MR draws a support level,
// "broad" (90 % of voters approve, the rest reject) or "narrow" (30 %
// approve); each member turns out with probability S11.Turnout % per MR
// (a member who does not turn out casts nothing: absent, the turnout
// model). The harness evaluates each threshold MR itself from the
// ballots it cast (§7: approved when A·den cmp num·N with quorum, rejected
// when (N−R−V)·den cmp num·N fails) and checks the node's /tally agrees;
// it submits the determination for every decided MR and checks merged
// or rejected on every node.
func s11(s *sc) {
	r := s.r
	z := r.cfg.S11
	m := &r.rep.Metrics
	m.Members, m.MRs = z.Members, z.MRs
	largest := 20
	if z.Members >= FullS11.Members {
		largest = 100
	}
	// MRs into different branches never conflict, so MR i edits section
	// i/4+1 of its own kind's branch: the seed stays small enough for a
	// session.create to carry it to peers (a node sends at most 256
	// objects with one entry).
	perKind := (z.MRs + 3) / 4
	m.LargestMRNodes = largest
	ss := s.newSession(SessionOpts{Label: "S11", Roster: z.Members, Sections: perKind + largest})
	r.keep(ss)
	kinds := []string{"major", "two", "appr", "always"}
	rules := map[string]map[string]any{
		"major":  ss.ref("threshold_vote", majorityParams(), nil),
		"two":    ss.TwoThirds(),
		"appr":   ss.Approvers("drafters", 2),
		"always": ss.AlwaysAllow(),
	}
	for _, k := range kinds {
		ss.Branch("t-"+k, "root", ss.Genesis, rules[k])
	}
	type mrPlan struct {
		id, kind string
		open     string
		ballots  []Tx
		approve  int
		decisive int // index of the deciding ballot, -1 if none
		outcome  string
	}
	// Ballots are kept as their bytes only (a full-size run holds many).
	slim := func(tx Tx) Tx { tx.Envelope = nil; return tx }
	parent := func(p *mrPlan) []string {
		if len(p.ballots) == 0 {
			return []string{p.open}
		}
		return []string{p.ballots[len(p.ballots)-1].ID}
	}
	plans := make([]*mrPlan, z.MRs)
	// parent is the plan's last envelope: its ballots form a chain from
	// the open, so a determination after the last has them all in its
	// causal past.
	for i := range plans {
		k := kinds[i%len(kinds)]
		src := fmt.Sprintf("s%d", i)
		ss.Branch(src, "t-"+k, ss.Genesis, ss.AlwaysAllow())
		edits := []Edit{{fmt.Sprintf("/us/t1/s%d", i/4+1), fmt.Sprintf("The period is %d days.", 31+i)}}
		if i == 0 {
			for j := 0; j < largest; j++ {
				edits = append(edits, Edit{fmt.Sprintf("/us/t1/s%d", perKind+1+j), fmt.Sprintf("The period is %d days.", 40+j)})
			}
		}
		c := ss.Amend(src, ss.Genesis, edits...)
		p := &mrPlan{kind: k, decisive: -1}
		mr := MR{Source: src, SourceHead: c, Target: "t-" + k, TargetHead: ss.Genesis, Rule: rules[k]}
		if k == "appr" {
			mr.Group, mr.Electorate = "drafters", []string{ss.Members[1].Key, ss.Members[2].Key}
		}
		p.id = ss.Open(mr)
		p.open = ss.Last[0]
		plans[i] = p
	}
	// Ballots, by plan: decided by hand as they are drawn.
	n := z.Members
	total := 0
	for i, p := range plans {
		switch p.kind {
		case "always":
			p.outcome = "approved"
		case "appr":
			for _, mem := range []int{1, 2} {
				p.ballots = append(p.ballots, ss.TxOn(mem, parent(p), "ballot.cast", map[string]any{"mr": p.id, "choice": "approve", "supersedes": nil}))
			}
			p.decisive, p.outcome = 1, "approved"
		default:
			num, den, cmpGte := 1, 2, false
			if p.kind == "two" {
				num, den, cmpGte = 2, 3, true
			}
			broad := r.draw("S11 support", i) < 50
			share := 30
			if broad {
				share = 90
			}
			a, rj := 0, 0
			order := r.perm(fmt.Sprintf("S11 order %d", i), n)
			for _, mem := range order {
				if r.draw("S11 turnout", i, mem) >= z.Turnout {
					continue
				}
				choice := "reject"
				if r.draw("S11 choice", i, mem) < share {
					choice = "approve"
				}
				if choice == "approve" {
					a++
				} else {
					rj++
				}
				p.ballots = append(p.ballots, slim(ss.TxOn(mem, parent(p), "ballot.cast", map[string]any{"mr": p.id, "choice": choice, "supersedes": nil})))
				if p.outcome == "" {
					pass := a*den > num*n
					if cmpGte {
						pass = a*den >= num*n
					}
					quorum := (a+rj)*2 >= n
					lost := (n-rj)*den <= num*n
					if cmpGte {
						lost = (n-rj)*den < num*n
					}
					switch {
					case pass && quorum:
						p.outcome, p.decisive = "approved", len(p.ballots)-1
					case lost:
						p.outcome, p.decisive = "rejected", len(p.ballots)-1
					}
				}
			}
			p.approve = a
		}
		total += len(p.ballots)
	}
	m.Ballots = total
	var before int64 = -1
	if len(r.cfg.DataDirs) > 0 && r.cfg.DataDirs[0] != "" {
		before, _ = dirSize(r.cfg.DataDirs[0])
	}
	// Workers take MRs; each submits its MR's ballots in order, notes when
	// the deciding one is accepted, then determines and waits for every
	// node to show the outcome.
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan *mrPlan)
	var failMu sync.Mutex
	fails := 0
	var ballotTime time.Duration
	var btMu sync.Mutex
	for w := 0; w < z.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				var decidedAt time.Time
				t0 := time.Now()
				for j, tx := range p.ballots {
					if a, ok := ss.submitTo(ss.c, tx); !ok {
						failMu.Lock()
						fails++
						if fails <= 3 {
							s.check("an S11 ballot is accepted", false, a, "%s", tx.ID)
						}
						failMu.Unlock()
					}
					if j == p.decisive {
						decidedAt = time.Now()
					}
				}
				btMu.Lock()
				ballotTime += time.Since(t0)
				btMu.Unlock()
				if p.outcome == "" {
					continue
				}
				ids := make([]string, len(p.ballots))
				for j, tx := range p.ballots {
					ids[j] = tx.ID
				}
				det := ss.TxOn(0, parent(p), "mr.determine", map[string]any{"mr": p.id, "ballots": ids, "outcome": p.outcome})
				if a, ok := ss.submitTo(ss.c, det); !ok {
					failMu.Lock()
					fails++
					if fails <= 3 {
						s.check("an S11 determination is accepted", false, a, "%s", det.ID)
					}
					failMu.Unlock()
					continue
				}
				if p.outcome == "approved" && !decidedAt.IsZero() {
					if waitStatus(s, ss, p.id, "merged") {
						r.addLatency(time.Since(decidedAt))
					}
				}
			}
		}()
	}
	for _, p := range plans {
		work <- p
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	s.check(fmt.Sprintf("every S11 ballot and determination accepted (%d ballots)", total), fails == 0, nil, "%d refused", fails)
	if total > 0 && ballotTime > 0 {
		v := float64(total) / elapsed.Seconds()
		m.SustainedTxPerSec = &v
		r.note("sustained tx/s counts %d ballots over %.1f s of wall time with %d workers (determinations and their waits included in the time)", total, elapsed.Seconds(), z.Workers)
	}
	if before >= 0 && total >= 1000 {
		after, _ := dirSize(r.cfg.DataDirs[0])
		v := (after - before) * 1000 / int64(total)
		m.StoragePer1000Ballots = &v
	} else if before >= 0 {
		r.note("storage growth not measured: fewer than 1,000 ballots")
	}
	d, ok := s.converge(ss)
	if ok {
		m.ConvergenceMs = ms(d)
	}
	// Every MR's outcome as the harness worked it out, on every node.
	mismatch := 0
	for _, p := range plans {
		want := "open"
		switch p.outcome {
		case "approved":
			want = "merged"
		case "rejected":
			want = "rejected"
		}
		for _, c := range r.clients {
			a := c.Get(r.ctx, q("/merge-requests/"+p.id, ss.ID))
			if Str(a.JSON, "status") != want {
				mismatch++
				if mismatch <= 3 {
					s.check("each S11 MR's status is what the harness worked out", false, a, "MR %s (%s, %d ballots, A = %d): %q, want %q", p.id, p.kind, len(p.ballots), p.approve, Str(a.JSON, "status"), want)
				}
			}
		}
	}
	if mismatch == 0 {
		s.check(fmt.Sprintf("each S11 MR's status on every node is what the harness worked out by hand (%d MRs)", len(plans)), true, nil, "")
	}
	// /facts and /checks of the largest MR.
	t0 := time.Now()
	a := ss.Get("/merge-requests/" + plans[0].id + "/facts")
	m.FactsMs = ms(time.Since(t0))
	s.check("/facts of the largest MR is served", a.OK(), a, "")
	t0 = time.Now()
	a = ss.Get("/merge-requests/" + plans[0].id + "/checks")
	m.ChecksMs = ms(time.Since(t0))
	s.check("/checks of the largest MR is served", a.OK(), a, "")
	r.finishLatency()
	if r.cfg.FreshNode != nil {
		t0 := time.Now()
		url, stop, err := r.cfg.FreshNode(r.ctx)
		if err != nil {
			r.note("fresh node: %v", err)
			return
		}
		defer stop()
		fresh := NewClient(url)
		want := ss.c.Get(r.ctx, q("/heads", ss.ID))
		deadline := time.Now().Add(r.cfg.ConvergeTimeout * 5)
		for {
			h := fresh.Get(r.ctx, q("/heads", ss.ID))
			if h.OK() && fmt.Sprint(Field(h.JSON, "heads")) == fmt.Sprint(Field(want.JSON, "heads")) {
				m.FreshNodeSyncMs = ms(time.Since(t0))
				s.check("a fresh node syncs the S11 session from genesis", true, nil, "")
				break
			}
			if time.Now().After(deadline) {
				s.check("a fresh node syncs the S11 session from genesis", false, h, "not within %s", r.cfg.ConvergeTimeout*5)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		r.note("fresh node sync time includes starting the node")
	} else {
		r.note("fresh node sync not measured: no fresh node was given")
	}
}

// draw is a seeded number in 0..99 for a purpose and its indexes.
func (r *run) draw(purpose string, idx ...int) int {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%v", r.cfg.Seed, purpose, idx)))
	return int(binary.BigEndian.Uint32(sum[:4]) % 100)
}

// waitStatus polls every node until mr has status.
func waitStatus(s *sc, ss *Session, mr, status string) bool {
	deadline := time.Now().Add(s.r.cfg.ConvergeTimeout)
	for time.Now().Before(deadline) {
		all := true
		for _, c := range s.r.clients {
			a := c.Get(s.r.ctx, q("/merge-requests/"+mr, ss.ID))
			if Str(a.JSON, "status") != status {
				all = false
				break
			}
		}
		if all {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
