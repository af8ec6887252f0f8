package harness

import (
	"fmt"
	"time"
)

// s19: the parts of Simulation 2 a black box can show in minutes.
//
// By hand: fresh non-member keys, each registered with key.register, are
// refused key_too_new when they publish at once (key_aging, D61); a text
// citing a document by a hash no entry of the session publishes fails
// structure (D56), which blocks; a fiscal MR (D53) with no estimate in
// its causal past has its approving determination refused
// estimate_missing; a translation passage anchored to a quote that is not
// in the source's text is refused quote_mismatch (D63); an MR adding
// [[sunset:90]] to section 3 merges, and with its effective date D (the
// UTC date of the checkpoint including the determination, read from
// /checkpoint) /law?date= shows the text on D + 89 days (day 90) and
// not on D + 90 (day 91, D58).
//
// Fiscal notice (D53): the fiscal MR's open is checkpointed, the harness
// waits 4 seconds, a member publishes a complete estimate, and the
// approving determination, accepted now, is checkpointed. Its
// evaluation's notice_elapsed counts from the first checkpoint holding
// the estimate, so it is at most the seconds the harness saw pass from
// just before the estimate to the determination's checkpoint (rounded up);
// counted from the open's checkpoint it would be at least 4 more.
//
// Education (D59): a session created with education true makes every
// node's capability declare ephemeral (s19Education).
//
// A stolen key (§4 "Keys", D62): members 0–4 approve an MR (N = 10,
// 5·2 = 10 > 10 fails: pending); a thief holding member 7's key rejects:
// A = 5, R = 1. Member 7 rotates to a new key, the envelope signed by the
// new key, the body co-signed by the registrar's admin (member 0) over
// "oth/0.10-cosig\n" + JCS(body without cosig), compromised_after the
// last entry before the thief's ballot: the thief's ballot is ignored,
// A = 5, R = 0. Member 7 approves with the new key: A = 6, 12 > 10,
// approved if closed, no one voided; a determination listing every
// ballot, the thief's included, merges the MR.
func s19(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S19"})
	r.keep(ss)
	fresh := 20
	for i := 0; i < fresh; i++ {
		k := NewSigner(fmt.Sprintf("witan harness %s run %s fresh key %d", r.cfg.Seed, r.cfg.RunID, i))
		ss.Accept(ss.TxBy(k, "key.register", map[string]any{"key": k.Key}))
		ss.Refuse(ss.TxBy(k, "opinion.publish", opinionBody("advisor", "A new voice (simulated)", fullDisclosure())), "key_too_new", fmt.Sprintf("fresh key %d publishing at once", i))
	}
	annex := Hash([]byte("an annex no entry of the session publishes"))
	ss.Branch("annex", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("annex", ss.Genesis, Edit{"/us/t1/s1", "As set out in the annex " + annex + "."})
	mr := ss.Open(MR{Source: "annex", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	a := ss.Get("/merge-requests/" + mr + "/checks")
	s.check("a reference to an unpublished annex fails structure, which blocks", checkStatuses(a)["structure"] == "block" && Field(a.JSON, "checks", "blocked") == true, a, "checks %v", checkStatuses(a))

	ss.Branch("fiscal", "root", ss.Genesis, ss.AlwaysAllow())
	cf := ss.Amend("fiscal", ss.Genesis, Edit{"/us/t1/s2", "The board may spend what the session appropriates (simulated)."})
	// Into a branch of its own, ruled like the root, so that its merge
	// leaves the root's head where the MRs below expect it.
	ss.Branch("budget", "root", ss.Genesis, ss.Majority(RootNotice))
	fb := ss.Body(MR{Source: "fiscal", SourceHead: cf, Target: "budget", TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	fb["fiscal"] = true
	ss.Accept(ss.Tx(1, "mr.open", fb))
	fmr := ObjectID(fb)
	openIdx := Int(ss.LastReceipt, "log_index")
	fyes := ss.Vote(fmr, "approve", 0, 6)
	ss.Refuse(ss.DetermineTx(0, fmr, fyes, "approved"), "estimate_missing", "approving a fiscal MR with no estimate")
	s19FiscalNotice(s, ss, fmr, openIdx, fyes)

	tr := opinionBody("member", "A translation (simulated)", nil)
	tr["quotes"] = []any{map[string]any{"as_of": ss.Seed.Hash(), "nid": "/us/t1/s1", "text": "period is 31 days"}}
	tr["translation"] = map[string]any{"language": "es-MX", "of": ss.Seed.Hash(), "passages": []any{map[string]any{"quote": 0, "text": "el plazo es de 31 días"}}}
	ss.Refuse(ss.Tx(4, "opinion.publish", tr), "quote_mismatch", "a translation passage whose quote is not in the text")

	ss.Branch("sunset", "root", ss.Genesis, ss.AlwaysAllow())
	cs := ss.Amend("sunset", ss.Genesis, Edit{"/us/t1/s3", "The pilot runs for a season. [[sunset:90]]"})
	smr := ss.Open(MR{Source: "sunset", SourceHead: cs, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	ss.Accept(ss.DetermineTx(0, smr, ss.Vote(smr, "approve", 0, 6), "approved"))
	_, ok := s.waitFinality("/merge-requests/"+smr, ss)
	cp := ss.Get("/checkpoint")
	ts := Str(cp.JSON, "checkpoint", "ts")
	d, err := time.Parse("2006-01-02", firstN(ts, 10))
	s.must("the checkpoint including the determination dates the merge", ok && err == nil, cp, "ts %q", ts)
	text := func(date time.Time) string {
		law := ss.Get("/law?date=" + date.Format("2006-01-02"))
		return Str(law.JSON, "root", "children", 0, "children", 2, "text")
	}
	day90, day91 := d.AddDate(0, 0, 89), d.AddDate(0, 0, 90)
	s.check("the sunset text is in /law on day 90 ("+day90.Format("2006-01-02")+")", text(day90) == "The pilot runs for a season. [[sunset:90]]", cp, "text %q", text(day90))
	s.check("and gone on day 91 ("+day91.Format("2006-01-02")+")", text(day91) == "", cp, "text %q", text(day91))
	// Last: its merge moves the root, against which the MRs above were opened.
	s19Stolen(s, ss, ss.followRoot(cs))
	s.converge(ss)
	s19Education(s)
}

// s19Education: a session created with education true (D59) makes the
// node's capability document declare education and ephemeral, and every
// answer about the session carries ephemeral: true, on every node.
func s19Education(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S19 education", KeySpace: "S19e", Extra: map[string]any{"education": true}})
	r.keep(ss)
	s.converge(ss)
	for _, c := range r.clients {
		a := c.Get(r.ctx, "/.well-known/oth")
		s.check("the capability document declares education and ephemeral once it holds an education session: "+c.URL,
			Field(a.JSON, "education") == true && Field(a.JSON, "ephemeral") == true, a, "education %v ephemeral %v", Field(a.JSON, "education"), Field(a.JSON, "ephemeral"))
		for _, p := range []string{"/sessions/" + ss.ID, "/law", "/heads"} {
			a := c.Get(r.ctx, q(p, ss.ID))
			s.check("ephemeral: true on "+p+": "+c.URL, a.OK() && Field(a.JSON, "ephemeral") == true, a, "ephemeral %v", Field(a.JSON, "ephemeral"))
		}
	}
}

func firstN(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}

// s19Stolen: S19's stolen key (see s19).
// head is the root's head.
func s19Stolen(s *sc, ss *Session, head string) {
	r := s.r
	ss.Branch("stolen", "root", head, ss.AlwaysAllow())
	c := ss.Amend("stolen", head, Edit{"/us/t1/s1", "The period is 40 days."})
	mr := ss.Open(MR{Source: "stolen", SourceHead: c, TargetHead: head, Rule: ss.Majority(RootNotice)})
	ballots := ss.Vote(mr, "approve", 0, 5)
	cut := ss.Last[0]
	ballots = append(ballots, ss.Accept(ss.BallotTx(7, mr, "reject", "")))
	a, _, ifc, cnt := ss.Tally(mr)
	s.check("the thief's reject counts before the rotation: pending, A = 5, R = 1", ifc == "pending" && cnt == [3]int64{5, 1, 0}, a, "if_closed %q counts %v", ifc, cnt)
	nk := NewSigner(fmt.Sprintf("witan harness %s run %s S19 member 7 new key", r.cfg.Seed, r.cfg.RunID))
	body := map[string]any{"member": ss.Members[7].Key, "new": nk.Key, "compromised_after": cut}
	body["cosig"] = map[string]any{"key": ss.Members[0].Key, "sig": ss.Members[0].Sign("oth/0.10-cosig\n", MustCanon(body))}
	ss.Accept(ss.TxBy(nk, "key.rotate", body))
	a, _, ifc, cnt = ss.Tally(mr)
	s.check("after the rotation the thief's ballot is ignored: A = 5, R = 0", ifc == "pending" && cnt == [3]int64{5, 0, 0}, a, "if_closed %q counts %v", ifc, cnt)
	ballots = append(ballots, ss.Accept(ss.TxBy(nk, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "supersedes": nil})))
	a, _, ifc, cnt = ss.Tally(mr)
	voided, _ := Field(a.JSON, "result", "voided").([]any)
	s.check("member 7's ballot with the new key counts: approved if closed, A = 6, no one voided", ifc == "approved" && cnt == [3]int64{6, 0, 0} && len(voided) == 0, a, "if_closed %q counts %v voided %v", ifc, cnt, voided)
	ss.Accept(ss.DetermineTx(0, mr, ballots, "approved"))
	s.converge(ss)
	for _, cl := range r.clients {
		a := cl.Get(r.ctx, q("/merge-requests/"+mr, ss.ID))
		s.check("the MR merges with the thief's ballot listed and ignored: "+cl.URL, Str(a.JSON, "status") == "merged", a, "status %q", Str(a.JSON, "status"))
	}
}

// s19FiscalNotice: the fiscal MR's notice (see s19). openIdx is the
// open's log index on the first node, ballots the approvals.
func s19FiscalNotice(s *sc, ss *Session, mr string, openIdx int64, ballots []string) {
	a := ss.Get("/checkpoint")
	ok := s.poll(func() bool {
		a = ss.Get("/checkpoint")
		return Int(a.JSON, "checkpoint", "size") > openIdx
	})
	s.must("a checkpoint holds the fiscal MR's open", ok && openIdx >= 0, a, "checkpoint %v, open at %d", Field(a.JSON, "checkpoint"), openIdx)
	time.Sleep(4 * time.Second)
	t1 := time.Now()
	e := map[string]any{"mr": mr, "baseline": "current law", "by_year": years(2026, 10, 1000), "assumptions": "simulated uptake"}
	ss.Accept(ss.Tx(4, "opinion.publish", onSubject("member", "mr", mr, map[string]any{"estimate": e, "method": map[string]any{"inputs": []any{}}})))
	ss.Accept(ss.DetermineTx(0, mr, ballots, "approved"))
	a, ok = s.waitFinality("/merge-requests/"+mr, ss)
	span := time.Since(t1)
	s.must("the fiscal MR's determination, accepted once an estimate is in its past, is checkpointed", ok && Str(a.JSON, "status") == "merged", a, "status %q finality %q", Str(a.JSON, "status"), Str(a.JSON, "finality"))
	el := Int(a.JSON, "evaluations", 0, "result", "timing", "notice_elapsed")
	bound := int64(span/time.Second) + 1
	if bound >= 4 {
		s.notRun("the fiscal notice's start: the estimate took too long to checkpoint to tell its start from the open's")
		return
	}
	s.check(fmt.Sprintf("the fiscal MR's notice counts from the estimate's checkpoint: notice_elapsed at most %d s (4 s more from the open's)", bound), el >= 0 && el <= bound, a,
		"notice_elapsed %d, timing %v", el, Field(a.JSON, "evaluations", 0, "result", "timing"))
}
