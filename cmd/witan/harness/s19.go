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
func s19(s *sc) {
	r := s.r
	s.notRun("a stolen member key, its rotation and the member's real ballot counting (key.rotate)")
	s.notRun("a fiscal MR's notice starting only once an estimate is published, and an education session's ephemeral capability")
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
	fb := ss.Body(MR{Source: "fiscal", SourceHead: cf, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	fb["fiscal"] = true
	ss.Accept(ss.Tx(1, "mr.open", fb))
	fmr := ObjectID(fb)
	ss.Refuse(ss.DetermineTx(0, fmr, ss.Vote(fmr, "approve", 0, 6), "approved"), "estimate_missing", "approving a fiscal MR with no estimate")

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
	s.converge(ss)
}

func firstN(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}
