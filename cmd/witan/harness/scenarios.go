package harness

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// scenarios are the §10 entries in the order the harness runs them. The
// expected values in each are worked out by hand from the spec's words
// in the comments above the functions.
var scenarios = []scenario{
	{id: "L0", kind: "requirement", level: "L0", title: "Verifier: every node's log verifies (ids, signatures) and reproduces its signed checkpoint", fn: nil},
	{id: "S1", level: "L1", title: "Linear amendment passes a majority vote", fn: s1},
	{id: "S2", level: "L1", title: "Concurrent conflicting edits, resolution, vote", fn: s2},
	{id: "S3", level: "L1", title: "Governance MR changes a branch's merge rule", fn: s3},
	{id: "S4", level: "L1", title: "Equivocation (double ballot) voids the member's ballots", fn: s4},
	{id: "S5", level: "L1", title: "Bait-and-switch: head moves after ballots, MR goes stale", fn: s5},
	{id: "S6", level: "L2", title: "Contested capital_vote with quadratic cost", fn: s6},
	{id: "S7", level: "L2", title: "Restricted draft is revealed, then merged", fn: s7},
	{id: "S8", level: "L2", title: "Opinion flood from many keys; per-key rate limits; disclosure enforcement", fn: s8},
	{id: "S9", level: "L3", title: "Partition and heal (eventual)", fn: s9},
	{id: "S10", level: "L3", title: "Malicious operator withholds, reorders, or rewrites history; independent verifiers detect it", fn: s10},
	{id: "S11", level: "L3", title: "Scale: large roster, many MRs, mixed rules", fn: s11},
	{id: "S12", level: "L2", title: "Finality and citation", fn: s12},
	{id: "S13", level: "L2", title: "Fact-check loop", fn: s13},
	{id: "S14", level: "L2", title: "Formal grammar and rules", fn: s14},
	{id: "S15", level: "L2", title: "Markets and rankings", fn: s15},
	{id: "S16", level: "L2/L3", title: "Parties, interest groups, and complaints", fn: s16},
	{id: "S17", level: "L2", title: "Procedure and evidence", fn: s17},
	{id: "S18", level: "L2", title: "Simulation 1 replay", fn: s18},
	{id: "S19", level: "L2", title: "Simulation 2 replay", fn: s19},
	{id: "S20", level: "L2", title: "Simulation 4 replay", fn: s20},
	{id: "S21", level: "L2", title: "Simulation 5 replay", fn: s21},
	{id: "S22", level: "L2", title: "Observers", fn: s22},
}

func init() {
	// L0 runs last, over every session the other entries made; it is
	// listed first in the report.
	scenarios[0].fn = l0
	l0def := scenarios[0]
	scenarios = append(scenarios[1:], l0def)
}

// perm is a seeded permutation of 0..n-1 for a purpose: the synthetic
// blocs (who votes which way) come from it.
func (r *run) perm(purpose string, n int) []int {
	type k struct {
		i int
		h string
	}
	ks := make([]k, n)
	for i := range ks {
		ks[i] = k{i, Hash([]byte(fmt.Sprintf("%s|%s|%d", r.cfg.Seed, purpose, i)))}
	}
	sort.Slice(ks, func(a, b int) bool { return ks[a].h < ks[b].h })
	out := make([]int, n)
	for i, x := range ks {
		out[i] = x.i
	}
	return out
}

// sessions made by the run, for the L0 verifier.
func (r *run) keep(ss *Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessionsMade = append(r.sessionsMade, ss)
}

// s1: S1 and the S12/S13 parts that follow from it.
//
// By hand (§7 threshold_vote, N = 10, num/den 1/2 gt, basis electorate,
// quorum 1/2, on_threshold): a bloc of 2 rejects first (A = 0, R = 2),
// then a bloc of 6 approves. After 5 approvals 5·2 = 10 > 10 fails while
// (N−R−V)·2 = 16 > 10 keeps approval possible: pending. The 6th gives
// 12 > 10 with quorum (6+2)·2 = 16 ≥ 10: approved if closed (the root's
// 72 h notice is advisory on an eventual node). Shares (D50):
// approve_of_cast 6/8, approve_of_electorate 6/10. After the
// determination the root's head is a change by oth:system with parents
// [root head at open, source head] whose result is the seed with
// section 1 reading "The period is 45 days.", which the harness hashes
// itself; /law serves that snapshot; everything about the MR is
// provisional until a checkpoint, then final_advisory; never final.
func s1(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S1"})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	change := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	mr := ss.Open(MR{Source: "draft", SourceHead: change, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice), Summary: "Extends the period to 35 days"})
	a, st := ss.Status(mr)
	s.check("the MR is served under the id the harness computed, open", st == "open", a, "status %q", st)
	p := r.perm("S1 blocs", 10)
	noes, ayes := p[:2], p[2:8]
	var ballots []string
	for _, i := range noes {
		ballots = append(ballots, ss.Accept(ss.BallotTx(i, mr, "reject", "")))
	}
	for _, i := range ayes[:5] {
		ballots = append(ballots, ss.Accept(ss.BallotTx(i, mr, "approve", "")))
	}
	a, _, ifc, c := ss.Tally(mr)
	s.check("after 5 approvals and 2 rejections the MR is pending (5·2 = 10 > 10 fails)", ifc == "pending" && c == [3]int64{5, 2, 0}, a, "if_closed %q counts %v", ifc, c)
	decisive := time.Now()
	ballots = append(ballots, ss.Accept(ss.BallotTx(ayes[5], mr, "approve", "")))
	a, _, ifc, c = ss.Tally(mr)
	s.check("the 6th approval decides it: approved if closed (12 > 10)", ifc == "approved" && c == [3]int64{6, 2, 0}, a, "if_closed %q counts %v", ifc, c)
	s.check("the live tally is provisional", Str(a.JSON, "finality") == "provisional", a, "finality %q", Str(a.JSON, "finality"))
	tl := Field(a.JSON, "result", "tally")
	s.check("shares side by side (D50): approve_of_cast 6/8, approve_of_electorate 6/10",
		Int(tl, "approve_of_cast", "num") == 6 && Int(tl, "approve_of_cast", "den") == 8 &&
			Int(tl, "approve_of_electorate", "num") == 6 && Int(tl, "approve_of_electorate", "den") == 10 && Field(tl, "rule_share") != nil,
		a, "tally %v", tl)
	det := ss.Accept(ss.DetermineTx(3, mr, ballots, "approved"))
	logIndex := Int(ss.LastReceipt, "log_index")
	a, st = ss.Status(mr)
	// The checkpoint read after the status: if it does not include the
	// determination, neither did any checkpoint when the status was read,
	// so the MR must have been provisional (the harness does not control
	// when the node checkpoints).
	cpa := ss.Get("/checkpoint")
	cpSize := Int(cpa.JSON, "checkpoint", "size")
	s.check("merged after the determination", st == "merged", a, "status %q", st)
	if cpSize <= logIndex {
		s.check("provisional while no checkpoint includes the determination", Str(a.JSON, "finality") == "provisional", a, "finality %q (checkpoint size %d, log index %d)", Str(a.JSON, "finality"), cpSize, logIndex)
	}
	want := ss.Seed.Clone()
	want.Find("/us/t1/s1").Text = "The period is 45 days."
	_, head := ss.RootHead()
	ob := ss.Get("/objects/" + head)
	obj, _ := Field(ob.JSON, "object").(map[string]any)
	parents, _ := Field(obj, "parents").([]any)
	s.check("the root's head is the derived merge change: id = sha256(JCS(object)), author oth:system, parents [target head, source head], result the harness's own hash of the amended seed",
		obj != nil && ObjectID(obj) == head && Str(obj, "author") == SystemAuthor && len(parents) == 2 &&
			parents[0] == ss.Genesis && parents[1] == change && Str(obj, "result") == want.Hash(), ob,
		"head %s object %v, want result %s", head, obj, want.Hash())
	law := ss.Get("/law")
	s.check("/law serves the amended snapshot (hash computed by the harness)", Str(law.JSON, "snapshot") == want.Hash(), law, "snapshot %q want %s", Str(law.JSON, "snapshot"), want.Hash())
	// Every node serves the merged head: the decisive-ballot latency.
	s.converge(ss)
	r.addLatency(time.Since(decisive))
	// S12: provisional until checkpointed, then final_advisory.
	a, ok := s.waitFinality("/merge-requests/"+mr, ss)
	s.check("the merged MR becomes final_advisory once a checkpoint includes it (eventual node)", ok, a, "finality %q", Str(a.JSON, "finality"))
	for _, path := range []string{"/merge-requests/" + mr, "/merge-requests/" + mr + "/tally", "/merge-requests/" + mr + "/facts", "/law", "/heads", "/checkpoint", "/log"} {
		for _, c := range r.clients {
			a := c.Get(r.ctx, q(path, ss.ID))
			// A node that has not checkpointed the session yet (the second,
			// just synced) answers /checkpoint 404.
			served := a.OK() || path == "/checkpoint" && a.Status == http.StatusNotFound
			s.check("an eventual node never emits final: "+path, !r.eventual() || (served && !bytes.Contains(a.Body, []byte(`"finality":"final"`))), a, "served final or failed")
		}
	}
	// S13: the summary says 35, the change sets 45; /facts reports 30 → 45
	// byte for byte on every node. Numbers are taken from the heading and
	// the text (§6 item 8): "Section 1" gives 1, so the sequences are
	// [1, 30] before and [1, 45] after.
	var first []byte
	for i, c := range r.clients {
		a := c.Get(r.ctx, q("/merge-requests/"+mr+"/facts", ss.ID))
		f, _ := Field(a.JSON, "facts").(map[string]any)
		if f == nil {
			f = a.JSON
		}
		nums, _ := Field(f, "numbers").([]any)
		s.check("/facts numbers: /us/t1/s1 [1 30] → [1 45], authoritative false", len(nums) == 1 && Str(nums[0], "nid") == "/us/t1/s1" &&
			fmt.Sprint(Field(nums[0], "before")) == "[1 30]" && fmt.Sprint(Field(nums[0], "after")) == "[1 45]" && Field(f, "authoritative") == false,
			a, "numbers %v", nums)
		// finality is each replica's own label (its checkpoints are its
		// own); the sheet is compared without it.
		g := map[string]any{}
		for k, v := range f {
			if k != "finality" {
				g[k] = v
			}
		}
		b, _ := Canon(g)
		if i == 0 {
			first = b
		} else {
			s.check("/facts byte-identical on every node (finality aside: each replica labels its own)", bytes.Equal(first, b), a, "differs from the first node's")
		}
	}
	r.s1 = &s1State{ss: ss, mr: mr, change: change, pre: ss.Seed.Find("/us/t1/s1").Hash(), head: head, det: det}
}

// waitFinality polls path until its finality is final_advisory (or
// final on a strong node).
func (s *sc) waitFinality(path string, ss *Session) (*Answer, bool) {
	deadline := time.Now().Add(s.r.cfg.FinalityTimeout)
	for {
		a := ss.Get(path)
		f := Str(a.JSON, "finality")
		if f == "final_advisory" || (!s.r.eventual() && f == "final") {
			return a, true
		}
		if time.Now().After(deadline) {
			return a, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFinalityAll is waitFinality on every node: what a node serves by
// date depends on its own checkpoints.
func (s *sc) waitFinalityAll(path string, ss *Session) (*Answer, bool) {
	var a *Answer
	for _, c := range s.r.clients {
		ok := s.poll(func() bool {
			a = c.Get(s.r.ctx, q(path, ss.ID))
			f := Str(a.JSON, "finality")
			return f == "final_advisory" || (!s.r.eventual() && f == "final")
		})
		if !ok {
			return a, false
		}
	}
	return a, true
}

// s2: concurrent conflicting edits. Two branches fork at the seed;
// "left" sets section 1 to 45 days (written to the first node) and
// "right" to 60 days (written to the last node, concurrently, with the
// same parents). Left merges by a 6/10 majority. Right, opened against
// the new root head, conflicts on /us/t1/s1 (changed differently on both
// sides since the merge-base, §6 item 2): without a resolution it is
// refused; with the resolution "The period is 50 days." it merges by 6/10
// and every node's /law is the seed with section 1 at 50 days.
func s2(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S2"})
	r.keep(ss)
	other := r.clients[len(r.clients)-1]
	if len(r.clients) > 1 {
		s.converge(ss)
	}
	parents := append([]string(nil), ss.Last...)
	mk := func(name string) (Tx, string) {
		obj := map[string]any{"name": name, "session": ss.ID, "owner": "group:drafters",
			"source": map[string]any{"branch": "root", "change": ss.Genesis}, "head": ss.Genesis, "visibility": "public", "protected": false,
			"merge_rule": ss.AlwaysAllow(), "governance_rule": ss.TwoThirds()}
		return ss.TxOn(1, parents, "branch.create", map[string]any{"branch": ObjectID(obj)}, MustCanon(obj)), ObjectID(obj)
	}
	lb, _ := mk("left")
	rb, _ := mk("right")
	ss.AcceptOn(ss.c, lb)
	ss.AcceptOn(other, rb)
	ss.Last = []string{lb.ID}
	ltx, lch := ss.AmendTx(2, "left", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	ss.AcceptOn(ss.c, ltx)
	ss.Last = []string{rb.ID}
	rtx, rch := ss.AmendTx(2, "right", ss.Genesis, Edit{"/us/t1/s1", "The period is 60 days."})
	ss.AcceptOn(other, rtx)
	ss.Trees[lch.ID], ss.Trees[rch.ID] = lch.Result, rch.Result
	ss.Last = []string{ltx.ID, rtx.ID}
	sort.Strings(ss.Last)
	if len(r.clients) > 1 {
		s.converge(ss)
	}
	mrL := ss.Open(MR{Source: "left", SourceHead: lch.ID, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	yes := ss.Vote(mrL, "approve", 0, 6)
	ss.Accept(ss.DetermineTx(0, mrL, yes, "approved"))
	a, st := ss.Status(mrL)
	s.must("the left MR merges", st == "merged", a, "status %q", st)
	_, root := ss.RootHead()
	bare, _ := ss.OpenTx(MR{Source: "right", SourceHead: rch.ID, TargetHead: root, Rule: ss.Majority(RootNotice)})
	ss.Refuse(bare, "", "an MR whose conflict on /us/t1/s1 has no resolution")
	res := ss.Seed.Find("/us/t1/s1").Clone()
	res.Text = "The period is 50 days."
	mrR := ss.Open(MR{Source: "right", SourceHead: rch.ID, TargetHead: root, Rule: ss.Majority(RootNotice),
		Resolutions: []any{map[string]any{"nid": "/us/t1/s1", "node": res.Spec(true)}}})
	yes = ss.Vote(mrR, "approve", 0, 6)
	ss.Accept(ss.DetermineTx(0, mrR, yes, "approved"))
	a, st = ss.Status(mrR)
	s.check("the resolved MR merges", st == "merged", a, "status %q", st)
	want := ss.Seed.Clone()
	want.Find("/us/t1/s1").Text = "The period is 50 days."
	s.converge(ss)
	for _, c := range r.clients {
		law := c.Get(r.ctx, q("/law", ss.ID))
		s.check("every node's /law is the seed with the resolution (hash computed by the harness)", Str(law.JSON, "snapshot") == want.Hash(), law, "snapshot %q want %s", Str(law.JSON, "snapshot"), want.Hash())
	}
}

// s3: a governance MR changes a branch's merge rule.
//
// By hand: under always_allow an MR into "draft" is approved once open,
// with no ballots. The governance MR is judged by draft's governance
// rule, 2/3 gte of N = 10: 6 approvals give 18 ≥ 20 false (pending), 7
// give 21 ≥ 20 (approved). Afterwards draft's merge rule is
// designated_approvers(drafters = {1, 2}, required 2): an MR under the
// old rule is refused not_authorized, a ballot by roster member 5 (not in
// the frozen electorate {1, 2}) is refused ballot_invalid, and approvals
// by 1 and 2 give A = 2 ≥ 2: approved.
func s3(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S3"})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	ss.Branch("work", "draft", ss.Genesis, ss.AlwaysAllow())
	c1 := ss.Amend("work", ss.Genesis, Edit{"/us/t1/s1", "The period is 40 days."})
	mr1 := ss.Open(MR{Source: "work", SourceHead: c1, Target: "draft", TargetHead: ss.Genesis, Rule: ss.AlwaysAllow()})
	a, out, _, _ := ss.Tally(mr1)
	s.check("always_allow: approved once open, with no ballots", out == "approved", a, "outcome %q", out)
	ss.Accept(ss.DetermineTx(4, mr1, nil, "approved"))
	a, st := ss.Status(mr1)
	s.must("the always_allow MR merges", st == "merged", a, "status %q", st)
	_, draftHead := ss.BranchHead("draft")
	ss.Trees[draftHead] = ss.Trees[c1]
	newRule := ss.Approvers("drafters", 2)
	gov := ss.Open(MR{Kind: "governance", Target: "draft", TargetHead: draftHead, Rule: ss.TwoThirds(), Set: map[string]any{"merge_rule": newRule}})
	yes := ss.Vote(gov, "approve", 0, 6)
	a, out, _, _ = ss.Tally(gov)
	s.check("governance MR with 6/10 under 2/3 gte: pending (18 ≥ 20 fails)", out == "pending", a, "outcome %q", out)
	yes = append(yes, ss.Vote(gov, "approve", 6, 7)...)
	ss.Accept(ss.DetermineTx(4, gov, yes, "approved"))
	a, st = ss.Status(gov)
	s.must("the governance MR merges at 7/10", st == "merged", a, "status %q", st)
	a = ss.Get("/branches/draft")
	s.check("draft's merge rule is now designated_approvers", Str(a.JSON, "branch", "merge_rule", "kind") == "designated_approvers", a, "merge_rule %v", Field(a.JSON, "branch", "merge_rule"))
	ss.Branch("work2", "draft", draftHead, ss.AlwaysAllow())
	c2 := ss.Amend("work2", draftHead, Edit{"/us/t1/s2", "Appeals lie to the board."})
	old, _ := ss.OpenTx(MR{Source: "work2", SourceHead: c2, Target: "draft", TargetHead: draftHead, Rule: ss.AlwaysAllow()})
	ss.Refuse(old, "not_authorized", "an MR under the replaced rule")
	drafters := []string{ss.Members[1].Key, ss.Members[2].Key}
	mr2 := ss.Open(MR{Source: "work2", SourceHead: c2, Target: "draft", TargetHead: draftHead, Group: "drafters", Electorate: drafters, Rule: newRule})
	ss.Refuse(ss.BallotTx(5, mr2, "approve", ""), "ballot_invalid", "a ballot by a member outside the electorate")
	ok := ss.Vote(mr2, "approve", 1, 2)
	a, out, _, _ = ss.Tally(mr2)
	s.check("designated_approvers with A = 1 < 2: pending", out == "pending", a, "outcome %q", out)
	ok = append(ok, ss.Vote(mr2, "approve", 2, 3)...)
	ss.Accept(ss.DetermineTx(4, mr2, ok, "approved"))
	a, st = ss.Status(mr2)
	s.check("designated_approvers with A = 2: merged", st == "merged", a, "status %q", st)
	s.converge(ss)
}

// s4: equivocation. By hand: member 0 casts approve and reject with no
// supersedes link: V = 1, neither counts. Members 1–5 approve; member 6
// approves, then rejects superseding it (a chain, not equivocation): R =
// 1. So A = 5, R = 1, V = 1; 5·2 = 10 > 10 fails and (N−R−V)·2 = 16 > 10
// keeps it possible: pending. A determination claiming approved over all
// these ballots is refused.
func s4(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S4"})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	all := []string{ss.Accept(ss.BallotTx(0, mr, "approve", "")), ss.Accept(ss.BallotTx(0, mr, "reject", ""))}
	all = append(all, ss.Vote(mr, "approve", 1, 6)...)
	first := ss.Accept(ss.BallotTx(6, mr, "approve", ""))
	all = append(all, first, ss.Accept(ss.BallotTx(6, mr, "reject", first)))
	a, out, _, cnt := ss.Tally(mr)
	s.check("A = 5, R = 1, V = 1: pending", out == "pending" && cnt == [3]int64{5, 1, 1}, a, "outcome %q counts %v", out, cnt)
	ss.Refuse(ss.DetermineTx(3, mr, all, "approved"), "", "a determination claiming approved")
	s.converge(ss)
}

// s5: bait-and-switch. Two MRs into the root touch section 1 ("draft":
// 45 days, "rival": 60 days); each gets 6/10 approvals. Then the draft
// branch moves (section 2: "Nobody may appeal."), and rival merges first:
// the root's head moves, the draft MR's pre hash on /us/t1/s1 no longer
// matches, so its approval cannot execute (§6 item 3): stale, the root
// unchanged, /law has 60 days in section 1 and section 2 untouched.
func s5(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S5"})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	ss.Branch("rival", "root", ss.Genesis, ss.AlwaysAllow())
	c1 := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	c2 := ss.Amend("rival", ss.Genesis, Edit{"/us/t1/s1", "The period is 60 days."})
	mr1 := ss.Open(MR{Source: "draft", SourceHead: c1, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	mr2 := ss.Open(MR{Source: "rival", SourceHead: c2, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	b1 := ss.Vote(mr1, "approve", 0, 6)
	b2 := ss.Vote(mr2, "approve", 0, 6)
	ss.Amend("draft", c1, Edit{"/us/t1/s2", "Nobody may appeal."})
	ss.Accept(ss.DetermineTx(0, mr2, b2, "approved"))
	a, st := ss.Status(mr1)
	s.check("the first MR is stale once the root's head moved", st == "stale", a, "status %q", st)
	_, root := ss.RootHead()
	ss.Accept(ss.DetermineTx(0, mr1, b1, "approved"))
	a, st = ss.Status(mr1)
	_, root2 := ss.RootHead()
	s.check("its approval does not execute: still stale, the root unchanged", st == "stale" && root2 == root, a, "status %q root %s → %s", st, root, root2)
	want := ss.Seed.Clone()
	want.Find("/us/t1/s1").Text = "The period is 60 days."
	law := ss.Get("/law")
	s.check("/law: section 1 at 60 days, section 2 untouched (hash computed by the harness)", Str(law.JSON, "snapshot") == want.Hash(), law, "snapshot %q", Str(law.JSON, "snapshot"))
	s.converge(ss)
}

// s6: capital_vote is strong-only (§10 L2, §7): on a node that does not
// list it in rule_kinds, a branch whose merge rule is capital_vote is
// refused rule_not_supported, and the scenario is not applicable.
func s6(s *sc) {
	r := s.r
	if r.supports("capital_vote") {
		s.e.Result = NotRun
		s.e.Reason = "the nodes list capital_vote; the harness does not drive contested capital votes yet"
		return
	}
	ss := s.newSession(SessionOpts{Label: "S6"})
	r.keep(ss)
	rule := ss.ref("capital_vote", map[string]any{"budget": 100, "cost": "quadratic", "num": 1, "den": 2, "cmp": "gt", "closing": "on_deadline"}, nil)
	obj := map[string]any{"name": "capital", "session": ss.ID, "owner": "group:drafters",
		"source": map[string]any{"branch": "root", "change": ss.Genesis}, "head": ss.Genesis, "visibility": "public", "protected": false,
		"merge_rule": rule, "governance_rule": ss.TwoThirds()}
	code := ss.Refuse(ss.Tx(1, "branch.create", map[string]any{"branch": ObjectID(obj)}, MustCanon(obj)), "rule_not_supported", "a branch ruled by capital_vote")
	if code == "rule_not_supported" {
		s.e.Result = NotApplicable
		s.e.Reason = "rule_not_supported: capital_vote is strong-only and the node is " + r.rep.Nodes[0].Consistency
	}
}

// s9: partition and heal on eventual nodes (s9.go). Without links the
// harness owns (Config.Links) it cannot cut the nodes apart: it writes
// concurrently to two nodes (the two sides of a partition) while their
// sync runs and checks the heal: members 0–2 approve on the first node
// and 3–5 on the last, every ballot a child of the open; after sync every
// node tallies A = 6 (approved if closed) and converges; a determination
// written on the last node merges the MR on both.
func s9(s *sc) {
	r := s.r
	if len(r.clients) < 2 {
		s.e.Result = NotApplicable
		s.e.Reason = "needs two nodes"
		return
	}
	if !r.eventual() {
		s.e.Result = NotRun
		s.e.Reason = "fail-over of strong nodes is not driven by the harness"
		return
	}
	if len(r.links) > 0 {
		s9Partition(s)
		return
	}
	s.notRun("cutting the link between nodes: the harness reaches them only over HTTP, so both sides write while their sync runs")
	s9Concurrent(s)
}

func s9Concurrent(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S9"})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s3", "The period is 90 days."})
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	s.converge(ss)
	open := ss.Last
	other := r.clients[len(r.clients)-1]
	var ids []string
	for i := 0; i < 6; i++ {
		tx := ss.TxOn(i, open, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "supersedes": nil})
		c := ss.c
		if i >= 3 {
			c = other
		}
		ss.AcceptOn(c, tx)
		ids = append(ids, tx.ID)
	}
	s.converge(ss)
	for _, c := range r.clients {
		a := c.Get(r.ctx, q("/merge-requests/"+mr+"/tally", ss.ID))
		s.check("after the heal every node counts A = 6", Int(a.JSON, "result", "tally", "approve") == 6 && Str(a.JSON, "result", "if_closed") == "approved", a, "tally %v", Field(a.JSON, "result"))
	}
	sort.Strings(ids)
	hs := other.Get(r.ctx, q("/heads", ss.ID))
	var heads []string
	for _, h := range Field(hs.JSON, "heads").([]any) {
		heads = append(heads, fmt.Sprint(h))
	}
	ss.AcceptOn(other, ss.TxOn(0, heads, "mr.determine", map[string]any{"mr": mr, "ballots": ids, "outcome": "approved"}))
	s.converge(ss)
	for _, c := range r.clients {
		a := c.Get(r.ctx, q("/merge-requests/"+mr, ss.ID))
		s.check("the MR is merged on every node", Str(a.JSON, "status") == "merged", a, "status %q", Str(a.JSON, "status"))
	}
}

// s12: the events stream (s12Events) and the citation of the
// pre-amendment text after S1's merge (§5 "Citations"): the object is the
// text as of the cited hash, and latest names where it stands now. S1
// checked the MR provisional until a checkpoint, then final_advisory.
func s12(s *sc) {
	r := s.r
	if r.s1 == nil {
		s.e.Result = NotRun
		s.e.Reason = "needs S1"
		return
	}
	s12Events(s)
	ss := r.s1.ss
	for _, c := range r.clients {
		a := c.Get(r.ctx, q("/cite/"+ss.Genesis+"?nid=/us/t1/s1", ss.ID))
		s.check("/cite of the pre-amendment snapshot returns the original text with latest = the current root head",
			a.OK() && Str(a.JSON, "object", "text") == "The period is 30 days." && Str(a.JSON, "latest") == r.s1.head && Str(a.JSON, "finality") != "final",
			a, "object %v latest %v", Field(a.JSON, "object"), Field(a.JSON, "latest"))
	}
}

// s13: the fact-check loop. S1 checked 30 → 45 byte for byte; the
// opinion parts are s13Opinions (s13.go); here a branch gives sections 2 and 3 the same [[def:period]]
// with different text (scopes overlap: same parent) and makes them refer
// to each other: /checks warns definitions and reference_cycles,
// structure passes, nothing blocks.
func s13(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S13"})
	r.keep(ss)
	ss.Branch("defs", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("defs", ss.Genesis, Edit{"/us/t1/s2", "[[def:period]] The period is 30 days. See [[ref:/us/t1/s3]]."},
		Edit{"/us/t1/s3", "[[def:period]] The period is 31 days. See [[ref:/us/t1/s2]]."})
	mr := ss.Open(MR{Source: "defs", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	s.converge(ss)
	for _, cl := range r.clients {
		a := cl.Get(r.ctx, q("/merge-requests/"+mr+"/checks", ss.ID))
		by := checkStatuses(a)
		s.check("/checks: definitions and reference_cycles warn, structure passes, not blocked",
			by["definitions"] == "warn" && by["reference_cycles"] == "warn" && by["structure"] == "pass" && Field(a.JSON, "checks", "blocked") == false,
			a, "checks %v", by)
	}
	s13Opinions(s, ss)
}

func checkStatuses(a *Answer) map[string]string {
	by := map[string]string{}
	list, _ := Field(a.JSON, "checks", "checks").([]any)
	for _, c := range list {
		by[Str(c, "name")] = Str(c, "status")
	}
	return by
}

// s14: the L1 parts of formal grammar and rules.
//
// By hand: a title inside a section violates uslm-1 (kinds contain only
// kinds below them): the MR's structure check blocks. Quorum: a branch
// ruled by threshold_vote 1/2 gt electorate with quorum 3/4,
// on_threshold, N = 10. Members 0–4 approve, then 0–2 also reject with
// no supersedes link: V = 3, A = 2, and (N−V)·4 = 28 < 3·10 = 30: quorum
// can no longer be met, so the MR is rejected, not left pending. The
// Popolo export's counts for that MR equal /tally's on every node.
func s14(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S14"})
	r.keep(ss)
	quorum := ss.ref("threshold_vote", map[string]any{"num": 1, "den": 2, "cmp": "gt", "basis": "electorate", "quorum_num": 3, "quorum_den": 4, "closing": "on_threshold"}, nil)
	ss.Branch("q", "root", ss.Genesis, quorum)
	ss.Branch("bad", "q", ss.Genesis, ss.AlwaysAllow())
	ss.Branch("good", "q", ss.Genesis, ss.AlwaysAllow())
	// A title inside section 1.
	base := ss.tree(ss.Genesis)
	res := base.Clone()
	s1n := res.Find("/us/t1/s1")
	pre := base.Find("/us/t1/s1").Hash()
	s1n.Children = append(s1n.Children, &Node{NID: "/us/t1/s1/x", Kind: "title", Text: "A title inside a section."})
	ops := []any{map[string]any{"op": "replace", "nid": "/us/t1/s1", "pre": pre, "node": s1n.Spec(true)}}
	ch := NewChange(ss.Members[2].Key, ss.Genesis, base, res, ops, "amend")
	ss.Accept(ss.Tx(2, "branch.append", map[string]any{"branch": "bad", "change": ch.ID}, append([][]byte{MustCanon(ch.Object)}, res.Objects()...)...))
	ss.Trees[ch.ID] = res
	mb := ss.Open(MR{Source: "bad", SourceHead: ch.ID, Target: "q", TargetHead: ss.Genesis, Rule: quorum})
	a := ss.Get("/merge-requests/" + mb + "/checks")
	s.check("a kind the profile forbids blocks the MR (structure)", checkStatuses(a)["structure"] == "block" && Field(a.JSON, "checks", "blocked") == true, a, "checks %v", checkStatuses(a))
	c := ss.Amend("good", ss.Genesis, Edit{"/us/t1/s2", "The period is 20 days."})
	mr := ss.Open(MR{Source: "good", SourceHead: c, Target: "q", TargetHead: ss.Genesis, Rule: quorum})
	ss.Vote(mr, "approve", 0, 5)
	ss.Vote(mr, "reject", 0, 3)
	a, out, _, cnt := ss.Tally(mr)
	s.check("quorum unreachable through void ballots: rejected with A = 2, V = 3", out == "rejected" && cnt == [3]int64{2, 0, 3}, a, "outcome %q counts %v", out, cnt)
	s.converge(ss)
	for _, cl := range r.clients {
		p := cl.Get(r.ctx, q("/export/popolo", ss.ID))
		t := cl.Get(r.ctx, q("/merge-requests/"+mr+"/tally", ss.ID))
		var ev any
		evs, _ := Field(p.JSON, "vote_events").([]any)
		for _, e := range evs {
			if Str(e, "id") == mr {
				ev = e
			}
		}
		counts := map[string]int64{}
		cs, _ := Field(ev, "counts").([]any)
		for _, x := range cs {
			counts[Str(x, "option")] = Int(x, "value")
		}
		tl := Field(t.JSON, "result", "tally")
		s.check("/export/popolo counts equal /tally (yes = approve, no = reject)", ev != nil && counts["yes"] == Int(tl, "approve") && counts["no"] == Int(tl, "reject"),
			p, "counts %v tally %v", counts, tl)
	}
}

// l0: every node's log, for every session the run made: each entry's id
// is sha256(JCS(envelope)) and its signature verifies; the checkpoint's
// signature verifies (under CheckpointDomain) and its root is the RFC
// 9162 root of the first size ids in the node's log order.
func l0(s *sc) {
	r := s.r
	for _, ss := range r.sessionsMade {
		for _, c := range r.clients {
			ids, ok := s.readLog(c, ss)
			if !ok {
				continue
			}
			a := c.Get(r.ctx, q("/checkpoint", ss.ID))
			cp, _ := Field(a.JSON, "checkpoint").(map[string]any)
			if cp == nil {
				s.check("the node serves a checkpoint of "+ss.ID, false, a, "no checkpoint")
				continue
			}
			size := Int(cp, "size")
			s.check("the checkpoint's signature verifies", VerifySigned(cp, CheckpointDomain, "node"), a, "signature by %s", Str(cp, "node"))
			if size < 0 || size > int64(len(ids)) {
				s.check("the checkpoint's size is within the log", false, a, "size %d, log %d", size, len(ids))
				continue
			}
			root, err := MerkleRoot(ids[:size])
			s.check("the checkpoint's root is the RFC 9162 root of the log's first size ids", err == nil && root == Str(cp, "root"), a, "computed %s, served %s", root, Str(cp, "root"))
		}
	}
}

// readLog pages through /log and verifies every entry.
func (s *sc) readLog(c *Client, ss *Session) ([]string, bool) {
	r := s.r
	var ids []string
	after := ""
	bad := 0
	for {
		path := "/log?limit=500"
		if after != "" {
			path += "&after=" + after
		}
		a := c.Get(r.ctx, q(path, ss.ID))
		if !a.OK() {
			s.check("/log pages are served", false, a, "page after %q", after)
			return nil, false
		}
		es, _ := Field(a.JSON, "entries").([]any)
		for _, e := range es {
			raw, err := Canon(Field(e, "envelope"))
			var id string
			if err == nil {
				id, err = VerifyEnvelope(raw)
			}
			if err != nil || id != Str(e, "tx") {
				bad++
				if bad == 1 {
					s.check("every log entry's id is sha256(JCS(envelope)) and its signature verifies", false, a, "entry %s: computed %s: %v", Str(e, "tx"), id, err)
				}
			}
			ids = append(ids, Str(e, "tx"))
		}
		next, _ := Field(a.JSON, "next").(string)
		if next == "" || len(es) == 0 {
			break
		}
		after = url.QueryEscape(next)
	}
	if bad == 0 {
		s.check(fmt.Sprintf("every log entry's id and signature verify (%d entries on %s)", len(ids), strings.TrimPrefix(c.URL, "http://")), true, nil, "")
	}
	return ids, true
}
