package harness

import "time"

// s17: procedure, the parts an eventual node and a black box can show.
//
// Cyclic blocs (by hand, N = 10, root rule 1/2 gt of the electorate with
// reversion 3/4, §7 and D41): bloc P (members 0–2) ranks X > Y > Z, bloc
// Q (3–5) Y > Z > X, bloc R (6–9) Z > X > Y, where section 1 reads X "30
// days" (the seed), Z "60 days", Y "90 days". X → Z: Q and R approve,
// 7·2 = 14 > 10, merged. Z → Y: P and Q approve, 12 > 10, merged. Y → X
// restores a text section 1 had at an earlier root head, so the fact
// sheet lists a revert and 3/4 replaces 1/2: P and R approve, Q rejects;
// 7·4 = 28 > 30 fails and (10 − 3)·4 = 28 > 30 fails, so it is rejected
// (on_threshold), not pending.
//
// Effective dates (D43): an MR effective 2099-01-01 (section 2) merges,
// then an on_merge MR (section 3): /law?date=<today> holds both back (a merge
// with a later effective date holds back every merge after it), and
// /law?date=2099-01-02 shows both, once a checkpoint dates the second.
// (/law without a date is the root's head: witan's reading.)
func s17(s *sc) {
	r := s.r
	s.notRun("72 hours of notice on a strong node (notice is advisory on an eventual node)")
	s.notRun("an evidence extract verified offline (witan verify-extract covers witan's extract format)")
	s.notRun("/history's member and outside opinions (outside opinions need aged keys)")
	rule := func(ss *Session) map[string]any {
		p := majorityParams()
		p["reversion"] = map[string]any{"num": 3, "den": 4}
		return ss.ref("threshold_vote", p, RootNotice)
	}
	ss := s.newSession(SessionOpts{Label: "S17", RootRule: rule(&Session{TextRef: textRef()})})
	r.keep(ss)
	root := rule(ss)
	blocP, blocQ, blocR := []int{0, 1, 2}, []int{3, 4, 5}, []int{6, 7, 8, 9}
	step := func(name, text string, yes, no []int) (string, string) {
		_, head := ss.RootHead()
		ss.Branch(name, "root", head, ss.AlwaysAllow())
		c := ss.Amend(name, head, Edit{"/us/t1/s1", text})
		mr := ss.Open(MR{Source: name, SourceHead: c, TargetHead: head, Rule: root})
		var ids []string
		for _, m := range yes {
			ids = append(ids, ss.Accept(ss.BallotTx(m, mr, "approve", "")))
		}
		for _, m := range no {
			ids = append(ids, ss.Accept(ss.BallotTx(m, mr, "reject", "")))
		}
		det := ss.Accept(ss.DetermineTx(0, mr, ids, "approved"))
		ss.followRoot(c)
		return mr, det
	}
	x2z, _ := step("x-to-z", "The period is 60 days.", append(blocQ, blocR...), blocP)
	a, st := ss.Status(x2z)
	s.must("X → Z passes, 7 of 10", st == "merged", a, "status %q", st)
	z2y, _ := step("z-to-y", "The period is 90 days.", append(blocP, blocQ...), blocR)
	a, st = ss.Status(z2y)
	s.must("Z → Y passes, 6 of 10", st == "merged", a, "status %q", st)
	// Y → X: the determination claiming approved is refused; the tally
	// says rejected.
	_, head := ss.RootHead()
	ss.Branch("y-to-x", "root", head, ss.AlwaysAllow())
	c := ss.Amend("y-to-x", head, Edit{"/us/t1/s1", "The period is 30 days."})
	mr := ss.Open(MR{Source: "y-to-x", SourceHead: c, TargetHead: head, Rule: root})
	for _, m := range append(blocP, blocR...) {
		ss.Accept(ss.BallotTx(m, mr, "approve", ""))
	}
	for _, m := range blocQ {
		ss.Accept(ss.BallotTx(m, mr, "reject", ""))
	}
	f := ss.Get("/merge-requests/" + mr + "/facts")
	rev, _ := Field(f.JSON, "facts", "reverts").([]any)
	s.check("Y → X's fact sheet lists the revert of /us/t1/s1", len(rev) == 1 && Str(rev[0], "nid") == "/us/t1/s1", f, "reverts %v", rev)
	a, out, _, cnt := ss.Tally(mr)
	s.check("Y → X under the 3/4 reversion threshold: rejected with A = 7, R = 3 (28 > 30 fails)", out == "rejected" && cnt == [3]int64{7, 3, 0}, a, "outcome %q counts %v", out, cnt)

	// Effective dates.
	_, head = ss.RootHead()
	ss.Branch("later", "root", head, ss.AlwaysAllow())
	c4 := ss.Amend("later", head, Edit{"/us/t1/s2", "Appeals lie to the board."})
	b4 := ss.Body(MR{Source: "later", SourceHead: c4, TargetHead: head, Rule: root})
	b4["effective"] = map[string]any{"type": "date", "date": "2099-01-01"}
	ss.Accept(ss.Tx(1, "mr.open", b4))
	mr4 := ObjectID(b4)
	ss.Accept(ss.DetermineTx(0, mr4, ss.Vote(mr4, "approve", 0, 6), "approved"))
	head = ss.followRoot(c4)
	ss.Branch("after", "root", head, ss.AlwaysAllow())
	c5 := ss.Amend("after", head, Edit{"/us/t1/s3", "Notices are posted online."})
	mr5 := ss.Open(MR{Source: "after", SourceHead: c5, TargetHead: head, Rule: root})
	ss.Accept(ss.DetermineTx(0, mr5, ss.Vote(mr5, "approve", 0, 6), "approved"))
	a, st = ss.Status(mr5)
	s.must("both dated and on_merge MRs merge", st == "merged", a, "status %q", st)
	now := ss.Seed.Clone()
	now.Find("/us/t1/s1").Text = "The period is 90 days."
	// The on_merge dates are those of this node's checkpoints: wait for
	// the last one, then ask for the law in force today and in 2099.
	s.waitFinality("/merge-requests/"+mr5, ss)
	today := time.Now().UTC().Format("2006-01-02")
	law := ss.Get("/law?date=" + today)
	s.check("/law?date=today holds back the 2099 merge and the merge after it (hash computed by the harness)", Str(law.JSON, "snapshot") == now.Hash(), law, "snapshot %q want %s", Str(law.JSON, "snapshot"), now.Hash())
	later := now.Clone()
	later.Find("/us/t1/s2").Text = "Appeals lie to the board."
	later.Find("/us/t1/s3").Text = "Notices are posted online."
	law = ss.Get("/law?date=2099-01-02")
	s.check("/law?date=2099-01-02 shows both merges", Str(law.JSON, "snapshot") == later.Hash(), law, "snapshot %q want %s", Str(law.JSON, "snapshot"), later.Hash())
	s.converge(ss)
}

// followRoot reads the root's head after a merge of change c (whose
// source branch forked at the root's previous head) and records that the
// merge change's result is c's.
func (ss *Session) followRoot(c string) string {
	_, head := ss.RootHead()
	ss.Trees[head] = ss.tree(c)
	return head
}
