package harness

import (
	"fmt"
	"time"
)

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
//
// Notice (D42): before each determination the live tally is pending,
// approved if closed, stating notice_required 259200 and notice_met
// false (no checkpoint time has passed); an eventual node accepts the
// determination (notice is advisory there).
//
// History (D44): after a day of witnessed time ages an advisor's key,
// member 5 and the advisor publish opinions on X → Z once it merged;
// /history/us/t1/s1 on every node lists X → Z and Z → Y (the merged MRs
// that changed section 1, not the rejected Y → X), and X → Z's item lists
// member 5's opinion in member_opinions and the advisor's in
// other_opinions, each in its own list.
//
// Evidence (D45): X → Z's MR extract, read from every node once its
// determination is checkpointed, verifies from its bytes alone with the
// harness's own code: the checkpoint's signature, every entry's id,
// signature and RFC 9162 inclusion proof against the checkpoint's root,
// the open, the ten ballots and the determination all carried; the
// ballots give A = 7, R = 3 (7·2 = 14 > 10: approved), which the
// determination's stated tally and outcome must match.
func s17(s *sc) {
	r := s.r
	if r.eventual() {
		s.notApplicable("the 72 hours of notice enforced and an early determination refused notice_not_elapsed, which the scenario asks of strong nodes (notice is advisory on an eventual node: the harness checks the live outcome pending with the notice stated)")
	} else {
		s.notRun("the 72 hours of notice enforced and an early determination refused notice_not_elapsed on a strong node")
	}
	rule := func(ss *Session) map[string]any {
		p := majorityParams()
		p["reversion"] = map[string]any{"num": 3, "den": 4}
		return ss.ref("threshold_vote", p, RootNotice)
	}
	ss := s.newSession(SessionOpts{Label: "S17", KeySpace: "S17", RootRule: rule(&Session{TextRef: textRef()})})
	r.keep(ss)
	adv := NewSigner(fmt.Sprintf("witan harness %s run %s S17 advisor", r.cfg.Seed, r.cfg.RunID))
	ss.Accept(ss.TxBy(adv, "key.register", map[string]any{"key": adv.Key}))
	ss.age(4)
	root := rule(ss)
	blocP, blocQ, blocR := []int{0, 1, 2}, []int{3, 4, 5}, []int{6, 7, 8, 9}
	var evidence []string
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
		a, out, ifc, _ := ss.Tally(mr)
		s.check(name+": before its 72 hours of notice the live outcome is pending, approved if closed, with the notice stated", out == "pending" && ifc == "approved" &&
			Int(a.JSON, "result", "timing", "notice_required") == RootNotice && Field(a.JSON, "result", "timing", "notice_met") == false, a,
			"outcome %q if_closed %q timing %v", out, ifc, Field(a.JSON, "result", "timing"))
		det := ss.Accept(ss.DetermineTx(0, mr, ids, "approved"))
		ss.followRoot(c)
		evidence = append(append([]string{}, ids...), det)
		return mr, det
	}
	x2z, _ := step("x-to-z", "The period is 60 days.", append(blocQ, blocR...), blocP)
	a, st := ss.Status(x2z)
	s.must("X → Z passes, 7 of 10", st == "merged", a, "status %q", st)
	x2zEvidence := evidence
	mop := ss.Accept(ss.Tx(5, "opinion.publish", onSubject("member", "mr", x2z, map[string]any{"stance": "support"})))
	aop := ss.Accept(ss.TxBy(adv, "opinion.publish", onSubject("advisor", "mr", x2z, map[string]any{"stance": "oppose"})))
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
	s.converge(ss)
	ids := func(v any) string {
		l, _ := v.([]any)
		out := []string{}
		for _, x := range l {
			out = append(out, Str(x, "id"))
		}
		return fmt.Sprint(out)
	}
	for _, cl := range r.clients {
		h := cl.Get(r.ctx, q("/history/us/t1/s1", ss.ID))
		items, _ := Field(h.JSON, "history").([]any)
		var mrs []string
		var it any
		for _, x := range items {
			mrs = append(mrs, Str(x, "mr"))
			if Str(x, "mr") == x2z {
				it = x
			}
		}
		s.check("/history/us/t1/s1 lists the two merged MRs, X → Z and Z → Y: "+cl.URL, len(items) == 2 && it != nil && (mrs[0] == z2y || mrs[1] == z2y) && Field(h.JSON, "authoritative") == false, h, "mrs %v", mrs)
		s.check("X → Z's item lists the member's opinion and the outside (advisor's) opinion separately: "+cl.URL,
			ids(Field(it, "member_opinions")) == fmt.Sprint([]string{mop}) && ids(Field(it, "other_opinions")) == fmt.Sprint([]string{aop}), h,
			"member_opinions %s other_opinions %s", ids(Field(it, "member_opinions")), ids(Field(it, "other_opinions")))
	}

	s17Extract(s, ss, x2z, x2zEvidence)

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

// s17Extract: X → Z's evidence extract, on every node (see s17).
func s17Extract(s *sc, ss *Session, mr string, evidence []string) {
	r := s.r
	a, ok := s.waitFinality("/merge-requests/"+mr, ss)
	s.must("X → Z's determination is checkpointed", ok, a, "finality %q", Str(a.JSON, "finality"))
	s.converge(ss)
	for _, c := range r.clients {
		var x *Answer
		s.poll(func() bool {
			x = c.Get(r.ctx, q("/extract/"+mr, ss.ID))
			return x.OK() && Str(x.JSON, "finality") == "final_advisory"
		})
		ap, rj, err := checkMRExtract(x, mr, evidence)
		s.check("X → Z's MR extract verifies offline (checkpoint, ids, signatures, inclusion proofs; every ballot and the determination carried): "+c.URL, err == nil, x, "%v", err)
		dets, _ := Field(x.JSON, "determinations").([]any)
		s.check("the extract's ballots give A = 7, R = 3, approved, as its determination states: "+c.URL, err == nil && ap == 7 && rj == 3 && len(dets) == 1 &&
			Int(dets[0], "tally", "approve") == 7 && Int(dets[0], "tally", "reject") == 3 && Str(dets[0], "outcome") == "approved", x,
			"ballots A = %d R = %d, determinations %v", ap, rj, dets)
	}
}
