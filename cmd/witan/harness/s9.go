package harness

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// s9Refusals is how many requests every link must refuse during the cut
// before the harness reads the two sides: each node has then tried to
// sync that many times and been kept apart.
const s9Refusals = 3

// s9Partition is S9 on eventual nodes through the harness's own links
// (Config.Links): partition and heal (30k §9 "Forks", §10). The session
// is set up and converged; every link is cut; each side decides the same
// MR from what it sees; the sides are checked apart after the nodes have
// tried to sync through the cut links; the links heal and every node
// converges on the union.
//
// By hand (N = 10; more than 1/2 of the electorate, quorum 1/2,
// on_threshold; §7 "Ballot validity"): the first node (side A) sees
// approvals by members 0–5: 6·2 > 10, approved, and A's determination
// merges the MR there (the root becomes the seed with section 3 at 90
// days, hashed by the harness). The last node (side B) sees rejections by
// 0–2 and 6–9: R = 7, (10 − 7)·2 = 6 > 10 fails, so rejected. Healed,
// members 0–2 each have two ballots not linked by supersedes: void. A = 3
// (3–5), R = 4 (6–9), V = 3: (10 − 4 − 3)·2 = 6 > 10 fails, rejected.
// Two valid determinations of the MR, neither in the other's causal past,
// disagree: contradictory_determination, and neither executes (§9), so
// the MR is open and the root is the seed snapshot again on every node.
// How a contradiction is resolved is open (OQ-3); the harness does not
// drive it.
func s9Partition(s *sc) {
	r := s.r
	a, b := r.clients[0], r.clients[len(r.clients)-1]
	ss := s.newSession(SessionOpts{Label: "S9", Roster: 10})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s3", "The period is 90 days."})
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	if _, ok := s.converge(ss); !ok {
		return
	}
	fork := ss.Last

	// The links must carry the nodes' sync, or cutting them partitions
	// nothing.
	unused := func() *Link {
		for _, l := range r.links {
			if f, _ := l.Counts(); f == 0 {
				return l
			}
		}
		return nil
	}
	deadline := time.Now().Add(r.cfg.ConvergeTimeout)
	for unused() != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if l := unused(); l != nil {
		s.notRun(fmt.Sprintf("cutting the link between nodes: the link %s carried no request, so the nodes do not sync through the harness's links (point their peer sync at them); both sides write while their sync runs", l))
		s9Concurrent(s)
		return
	}

	// The partition.
	healed := false
	heal := func() {
		if !healed {
			for _, l := range r.links {
				l.Heal()
			}
			healed = true
		}
	}
	defer heal() // also when a check ends the entry: later scenarios need the links
	refused := make([]int64, len(r.links))
	for i, l := range r.links {
		if err := l.Cut(); err != nil {
			s.must("every link is cut", false, nil, "%v", err)
		}
		_, refused[i] = l.Counts()
	}
	chain := func(c *Client, parents []string, choice string, members ...int) []string {
		var ids []string
		for _, m := range members {
			tx := ss.TxOn(m, parents, "ballot.cast", map[string]any{"mr": mr, "choice": choice, "supersedes": nil})
			ss.AcceptOn(c, tx)
			ids = append(ids, tx.ID)
			parents = []string{tx.ID}
		}
		return ids
	}
	onA := chain(a, fork, "approve", 0, 1, 2, 3, 4, 5)
	detA := ss.TxOn(3, onA[len(onA)-1:], "mr.determine", map[string]any{"mr": mr, "ballots": sorted(onA), "outcome": "approved"})
	ss.AcceptOn(a, detA)
	onB := chain(b, fork, "reject", 0, 1, 2, 6, 7, 8, 9)
	detB := ss.TxOn(7, onB[len(onB)-1:], "mr.determine", map[string]any{"mr": mr, "ballots": sorted(onB), "outcome": "rejected"})
	ss.AcceptOn(b, detB)

	// Every node tries to sync through the cut links, and is refused.
	deadline = time.Now().Add(r.cfg.ConvergeTimeout)
	tried := func() bool {
		for i, l := range r.links {
			if _, n := l.Counts(); n-refused[i] < s9Refusals {
				return false
			}
		}
		return true
	}
	for !tried() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	var counts []string
	for i, l := range r.links {
		_, n := l.Counts()
		counts = append(counts, fmt.Sprintf("%s refused %d", l.Listen, n-refused[i]))
	}
	s.check(fmt.Sprintf("during the cut the nodes try to sync through every link (each refuses at least %d requests)", s9Refusals), tried(), nil,
		"within %s: %s", r.cfg.ConvergeTimeout, strings.Join(counts, ", "))

	amended := ss.Seed.Clone()
	amended.Find("/us/t1/s3").Text = "The period is 90 days."
	side := func(name string, c *Client, det string, tally [3]int64, status, root string) {
		h := c.Get(r.ctx, q("/heads", ss.ID))
		s.check(name+" during the cut: its heads are its own determination only", slices.Equal(strList(Field(h.JSON, "heads")), []string{det}), h,
			"heads %v, want [%s]", Field(h.JSON, "heads"), det)
		t := c.Get(r.ctx, q("/merge-requests/"+mr+"/tally", ss.ID))
		s.check(fmt.Sprintf("%s during the cut: its tally counts its own ballots only (A = %d, R = %d, V = %d)", name, tally[0], tally[1], tally[2]),
			t.OK() && tallyOf(t) == tally, t, "tally %v", Field(t.JSON, "result", "tally"))
		m := c.Get(r.ctx, q("/merge-requests/"+mr, ss.ID))
		s.check(name+" during the cut: the MR is "+status, Str(m.JSON, "status") == status, m, "status %q", Str(m.JSON, "status"))
		l := c.Get(r.ctx, q("/law", ss.ID))
		s.check(name+" during the cut: /law is the snapshot its side's decision leaves (hash computed by the harness)", Str(l.JSON, "snapshot") == root, l,
			"snapshot %q, want %s", Str(l.JSON, "snapshot"), root)
	}
	side("the first node", a, detA.ID, [3]int64{6, 0, 0}, "merged", amended.Hash())
	side("the last node", b, detB.ID, [3]int64{0, 7, 0}, "rejected", ss.Seed.Hash())

	// The heal.
	heal()
	start := time.Now()
	if _, ok := s.converge(ss); !ok {
		return
	}
	r.logf("  S9: healed, converged in %s", time.Since(start).Round(time.Millisecond))
	both := sorted([]string{detA.ID, detB.ID})
	for i, c := range r.clients {
		name := fmt.Sprintf("node %d after the heal", i+1)
		h := c.Get(r.ctx, q("/heads", ss.ID))
		s.check(name+": the heads are both sides' determinations", slices.Equal(sorted(strList(Field(h.JSON, "heads"))), both), h,
			"heads %v, want %v", Field(h.JSON, "heads"), both)
		t := c.Get(r.ctx, q("/merge-requests/"+mr+"/tally", ss.ID))
		s.check(name+": the tally counts both sides, members 0–2 void (A = 3, R = 4, V = 3, rejected)",
			t.OK() && tallyOf(t) == [3]int64{3, 4, 3} && Str(t.JSON, "result", "outcome") == "rejected", t, "result %v", Field(t.JSON, "result"))
		m := c.Get(r.ctx, q("/merge-requests/"+mr, ss.ID))
		flags := strList(Field(m.JSON, "flags"))
		s.check(name+": the MR is flagged contradictory_determination, open, and not executed",
			slices.Contains(flags, "contradictory_determination") && Str(m.JSON, "status") == "open" && Field(m.JSON, "merge") == nil, m,
			"status %q flags %v merge %v", Str(m.JSON, "status"), flags, Field(m.JSON, "merge"))
		l := c.Get(r.ctx, q("/law", ss.ID))
		s.check(name+": /law is the seed snapshot (the first node's merge is not executed; hash computed by the harness)", Str(l.JSON, "snapshot") == ss.Seed.Hash(), l,
			"snapshot %q, want %s", Str(l.JSON, "snapshot"), ss.Seed.Hash())
	}
	ss.mu.lock()
	ss.Last = both
	ss.mu.unlock()
}

// tallyOf reads A, R and V from a tally answer.
func tallyOf(a *Answer) [3]int64 {
	tl := Field(a.JSON, "result", "tally")
	return [3]int64{Int(tl, "approve"), Int(tl, "reject"), Int(tl, "void")}
}

// strList reads a JSON array of strings.
func strList(v any) []string {
	out := []string{}
	xs, _ := v.([]any)
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}
