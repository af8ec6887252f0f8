package harness

import "fmt"

// s13Opinions: the opinion parts of S13, and S14's anchor_drift, with
// member authors (a member's key needs no aging, D61). An MR sets
// section 1 from 30 to 45 days; member 5 approves it.
//
// By hand (§8): a quote "period is 35 days" of the seed's section 1
// ("The period is 30 days.") is not in the text: quote_mismatch. A
// finding quoting "period is 30 days" (holds) with the assertion
// {ballot_choice, member 5, reject} evaluates fails (member 5 approved),
// provisional while the MR is undetermined, final_advisory once the MR's
// determination is executed and checkpointed. A correction by another
// member is correction_invalid; the author's own is listed in
// corrected_by, the original still served. Member 5's reply (replies_to
// the finding) is listed in replies_from_subject. A formalization
// anchored by a quote on section 1 appears in the MR's anchor_drift
// (the MR modifies section 1).
func s13Opinions(s *sc, ss *Session) {
	r := s.r
	ss.Branch("amend", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("amend", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	mr := ss.Open(MR{Source: "amend", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice), Summary: "Extends the period to 35 days"})
	b5 := ss.Accept(ss.BallotTx(5, mr, "approve", ""))
	quote := func(text string) map[string]any {
		return map[string]any{"as_of": ss.Seed.Hash(), "nid": "/us/t1/s1", "text": text}
	}
	onMR := func(extra map[string]any) map[string]any {
		b := opinionBody("member", "A fact-check (simulated)", nil)
		b["subject"] = map[string]any{"type": "mr", "id": mr}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	ss.Refuse(ss.Tx(9, "opinion.publish", onMR(map[string]any{"quotes": []any{quote("period is 35 days")}})), "quote_mismatch", "a misquote of section 1")
	check := ss.Accept(ss.Tx(9, "opinion.publish", onMR(map[string]any{
		"quotes": []any{quote("period is 30 days")},
		"findings": []any{map[string]any{
			"target": map[string]any{"type": "ballot", "id": b5}, "claim": map[string]any{"quote": 0, "text": "member 5 voted to keep 30 days"},
			"verdict": "false", "rationale": "the ballot approves", "evidence": []any{}, "related_quotes": []any{},
			"assertion": map[string]any{"kind": "ballot_choice", "member": ss.Members[5].Key, "mr": mr, "choice": "reject"}}}})))
	for _, cl := range r.clients {
		s.converge(ss)
		a := cl.Get(r.ctx, q("/opinions/"+check+"/evaluation", ss.ID))
		res, _ := Field(a.JSON, "results").([]any)
		s.check("the finding's quote holds and its ballot_choice assertion fails, provisional before the MR is decided",
			len(res) == 2 && Str(res[0], "result") == "holds" && Str(res[1], "result") == "fails" && Str(res[1], "finality") == "provisional" && Field(a.JSON, "authoritative") == false,
			a, "results %v", res)
	}
	ss.Refuse(ss.Tx(8, "opinion.publish", onMR(map[string]any{"corrects": check})), "correction_invalid", "a correction by another author")
	fix := ss.Accept(ss.Tx(9, "opinion.publish", onMR(map[string]any{"corrects": check, "summary": "Rationale reworded (simulated)"})))
	reply := opinionBody("member", "My reply (simulated)", nil)
	reply["subject"] = map[string]any{"type": "opinion", "id": check}
	reply["replies_to"] = check
	reply["stance"] = "oppose"
	rp := ss.Accept(ss.Tx(5, "opinion.publish", reply))
	a := ss.Get("/opinions/" + check)
	s.check("the original stays served with corrected_by [the author's correction] and replies_from_subject [member 5's reply]",
		fmt.Sprint(Field(a.JSON, "corrected_by")) == "["+fix+"]" && fmt.Sprint(Field(a.JSON, "replies_from_subject")) == "["+rp+"]", a,
		"corrected_by %v replies_from_subject %v", Field(a.JSON, "corrected_by"), Field(a.JSON, "replies_from_subject"))
	src := []byte(`{"catala":"scope Notice: definition period equals 30 day (simulated)"}`)
	form := ss.Accept(ss.Tx(9, "opinion.publish", onMR(map[string]any{"quotes": []any{quote("period is 30 days")},
		"formalization": map[string]any{"language": "catala", "language_version": "0.9", "source": Hash(src),
			"anchors": []any{map[string]any{"rule": "period", "quote": 0}}, "terms": []any{"term:/us/t1#period"}}}), src))
	f := ss.Get("/merge-requests/" + mr + "/facts")
	drift, _ := Field(f.JSON, "facts", "anchor_drift").([]any)
	s.check("S14: the formalization anchored on section 1 is in the MR's anchor_drift", len(drift) == 1 && Str(drift[0], "formalization") == form &&
		Str(drift[0], "nids", 0) == "/us/t1/s1", f, "anchor_drift %v", drift)
	// Decided, executed, checkpointed: the assertion is final_advisory.
	yes := []string{b5}
	for i := 0; i < 5; i++ {
		yes = append(yes, ss.Accept(ss.BallotTx(i, mr, "approve", "")))
	}
	ss.Accept(ss.DetermineTx(0, mr, yes, "approved"))
	a, ok := s.waitFinality("/opinions/"+check+"/evaluation", ss)
	res, _ := Field(a.JSON, "results").([]any)
	s.check("once the MR's determination is executed and checkpointed the assertion is final_advisory (still fails)",
		ok && len(res) == 2 && Str(res[1], "result") == "fails" && Str(res[1], "finality") == "final_advisory", a, "results %v", res)
}
