package harness

import (
	"fmt"
	"time"
)

// s18: Simulation 1.
//
// A node that rate-limits keys by shared affiliation fails: S8's flood
// comes from keys that all declare one affiliation, and each must get the
// same budget. Every harness session is simulated (D54), so every JSON answer about
// S1's session carries "simulation": true, and its tally shows both
// shares (D50: approve_of_cast and approve_of_electorate with the rule's
// share named) on every node.
//
// Contest (D47), by hand: N = 10, four options on section 1. Members 0–3
// rank only the status quo S; 4 and 5 rank A > S; 6 and 7 B > S; 8
// C > D > S; 9 ranks nothing. Against S each option has at most 2 members
// above it and at least 8 below: S beats every option, is unbeaten, and
// wins; every option is rejected contest_lost, on every node.
//
// Amendment notice (D48): a version superseding an MR and touching only
// the nodes it touched needs 24 hours of notice (notice_required 86400 in
// its tally's timing); one touching another node keeps the rule's 72
// hours (259200). Notice is advisory on an eventual node; the required
// figure is what the node states.
//
// Emergency (D49): an MR asking for emergency handling, approved by 7 of
// 10 with emergency "yes" (2/3 designate it), determined 25 hours of
// witnessed time after its open: merged, emergency_designated, notice
// 86400; /law shows its text. Once an entry brings witnessed time 30
// days and a second past the merge, the expiry change restores section 1
// and the root's head is no longer the emergency merge, on every node.
func s18(s *sc) {
	r := s.r
	if r.s1 == nil {
		s.e.Result = NotRun
		s.e.Reason = "needs S1"
		return
	}
	ss, mr := r.s1.ss, r.s1.mr
	for _, c := range r.clients {
		for _, path := range []string{"/sessions/" + ss.ID, "/log", "/heads", "/checkpoint", "/branches", "/branches/root", "/law",
			"/merge-requests", "/merge-requests/" + mr, "/merge-requests/" + mr + "/tally", "/merge-requests/" + mr + "/facts",
			"/merge-requests/" + mr + "/checks", "/merge-requests/" + mr + "/diff", "/objects/" + mr, "/export/popolo", "/export/rollcall"} {
			a := c.Get(r.ctx, q(path, ss.ID))
			s.check("simulation: true on "+path, a.OK() && Field(a.JSON, "simulation") == true, a, "status %d, simulation %v", a.Status, Field(a.JSON, "simulation"))
		}
		a := c.Get(r.ctx, q("/merge-requests/"+mr+"/tally", ss.ID))
		tl := Field(a.JSON, "result", "tally")
		s.check("the tally shows both shares and the rule's", Field(tl, "approve_of_cast") != nil && Field(tl, "approve_of_electorate") != nil && Field(tl, "rule_share") != nil, a, "tally %v", tl)
	}
	// A node that rate-limits keys by shared affiliation fails: S8's
	// flood comes from keys that all declare the same affiliation.
	ran := false
	for _, e := range r.rep.Entries {
		for _, c := range e.Checks {
			if e.ID == "S8" && c.Check == sameBudget {
				ran = true
				s.check("S8: keys sharing an affiliation each get the full per-key budget", c.OK, nil, "S8's check failed")
			}
		}
	}
	if !ran {
		s.notRun("keys sharing an affiliation each get the full budget (S8 did not run)")
	}
	s18Contest(s)
	s18Emergency(s)
}

// s18Contest: the status quo wins, and the superseding versions' notice.
func s18Contest(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S18 contest", KeySpace: "S18", RootRule: (&Session{TextRef: textRef()}).deadlineMajority()})
	r.keep(ss)
	rule := ss.deadlineMajority()
	var opts []string
	for i, days := range []int{45, 40, 35, 60} {
		tx, mr := ss.option(fmt.Sprintf("d%d", i), rule, "", Edit{"/us/t1/s1", fmt.Sprintf("The period is %d days.", days)})
		ss.Accept(tx)
		opts = append(opts, mr)
	}
	cid := ss.Accept(ss.Tx(3, "contest.open", map[string]any{"options": opts}))
	var ranks []string
	for m := 0; m < 4; m++ {
		ranks = append(ranks, ss.rank(cid, m, ""))
	}
	ranks = append(ranks, ss.rank(cid, 4, opts[0], ""), ss.rank(cid, 5, opts[0], ""), ss.rank(cid, 6, opts[1], ""), ss.rank(cid, 7, opts[1], ""),
		ss.rank(cid, 8, opts[2], opts[3], ""))
	ss.Accept(ss.Tx(4, "contest.determine", map[string]any{"contest": cid, "rankings": ranks, "outcome": "rejected", "winner": "status_quo"}))

	// Notice of superseding versions, on a fresh base outside the contest.
	notice := func(mr string) int64 {
		a := ss.Get("/merge-requests/" + mr + "/tally")
		return Int(a.JSON, "result", "timing", "notice_required")
	}
	tx, first := ss.option("v1", rule, "", Edit{"/us/t1/s2", "The fee is 10 dollars (simulated)."}, Edit{"/us/t1/s3", "The fee is due yearly (simulated)."})
	ss.Accept(tx)
	supersede := func(name string, edits ...Edit) string {
		ss.Branch(name, "root", ss.Genesis, ss.AlwaysAllow())
		c := ss.Amend(name, ss.Genesis, edits...)
		return ss.Open(MR{Source: name, SourceHead: c, TargetHead: ss.Genesis, Rule: rule, Supersedes: first})
	}
	a := ss.Get("/merge-requests/" + first + "/tally")
	s.check("the first version needs the rule's 72 hours of notice", notice(first) == 259200, a, "notice_required %d", notice(first))
	v2 := supersede("v2", Edit{"/us/t1/s2", "The fee is 12 dollars (simulated)."})
	a = ss.Get("/merge-requests/" + v2 + "/tally")
	s.check("a superseding version touching only the same nodes needs 24 hours of notice", notice(v2) == 86400, a, "notice_required %d", notice(v2))
	v3 := supersede("v3", Edit{"/us/t1/s1", "The period is 50 days."})
	a = ss.Get("/merge-requests/" + v3 + "/tally")
	s.check("a superseding version touching another node keeps 72 hours", notice(v3) == 259200, a, "notice_required %d", notice(v3))

	s.converge(ss)
	for _, cl := range r.clients {
		a := cl.Get(r.ctx, q("/contests/"+cid, ss.ID))
		rounds, _ := Field(a.JSON, "result", "rounds").([]any)
		s.check("the status quo wins the four-option contest: "+cl.URL, Str(a.JSON, "result", "winner") == "status_quo" && len(rounds) == 1 && Str(rounds[0], "winner") == "status_quo", a, "result %v", Field(a.JSON, "result"))
		for i, o := range opts {
			a := cl.Get(r.ctx, q("/merge-requests/"+o, ss.ID))
			s.check(fmt.Sprintf("option %d is rejected contest_lost: %s", i, cl.URL), Str(a.JSON, "status") == "rejected" && Str(a.JSON, "reason") == "contest_lost", a, "status %q reason %q", Str(a.JSON, "status"), Str(a.JSON, "reason"))
		}
	}
}

// s18Emergency: the emergency MR and its expiry (see s18).
func s18Emergency(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S18 emergency", KeySpace: "S18e"})
	r.keep(ss)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 5 days."})
	body := ss.Body(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	body["emergency"] = true
	ss.Accept(ss.Tx(1, "mr.open", body))
	mr := ObjectID(body)
	var ballots []string
	for m := 0; m < 7; m++ {
		ballots = append(ballots, ss.Accept(ss.Tx(m, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "emergency": "yes", "supersedes": nil})))
	}
	r.advance(25 * time.Hour)
	ss.Accept(ss.DetermineTx(3, mr, ballots, "approved"))
	a := ss.Get("/merge-requests/" + mr)
	ev := Field(a.JSON, "evaluations", 0, "result")
	s.check("the emergency MR merges after 24 hours, designated, with 24 hours of notice", Str(a.JSON, "status") == "merged" && Field(ev, "emergency_designated") == true &&
		Int(ev, "timing", "notice_required") == 86400, a, "status %q evaluation %v", Str(a.JSON, "status"), ev)
	merge := Str(a.JSON, "merge")
	section1 := func(c *Client) (*Answer, string) {
		l := c.Get(r.ctx, q("/law", ss.ID))
		return l, Str(l.JSON, "root", "children", 0, "children", 0, "text")
	}
	l, t := section1(ss.c)
	s.check("/law shows the emergency text", t == "The period is 5 days.", l, "section 1 %q", t)
	r.advance(29 * 24 * time.Hour)
	ss.Accept(ss.TxBy(ss.Members[5], "key.register", map[string]any{"key": ss.Members[5].Key}))
	l, t = section1(ss.c)
	s.check("29 days later nothing has expired", t == "The period is 5 days.", l, "section 1 %q", t)
	r.advance(24*time.Hour + time.Second)
	ss.Accept(ss.TxBy(ss.Members[6], "key.register", map[string]any{"key": ss.Members[6].Key}))
	s.converge(ss)
	for _, cl := range r.clients {
		l, t := section1(cl)
		s.check("30 days after the merge the expiry change restores section 1: "+cl.URL, t == "The period is 30 days.", l, "section 1 %q", t)
		h := cl.Get(r.ctx, q("/branches/root", ss.ID))
		s.check("the root's head is no longer the emergency merge: "+cl.URL, Str(h.JSON, "branch", "heads", 0) != "" && Str(h.JSON, "branch", "heads", 0) != merge, h, "heads %v, merge %s", Field(h.JSON, "branch", "heads"), merge)
	}
}
