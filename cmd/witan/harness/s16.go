package harness

import "fmt"

// s16: parties and interest groups (the L2 parts).
//
// By hand (§8, D36, D37, D38): a position on behalf of group "party"
// signed by member 3, a plain member of it, is refused
// group_not_authorized; its admin's (member 2) position proposing a
// change that sets section 2 to "Appeals lie to the party's board." is
// accepted. A member then appends a change giving section 2 that same
// text, and the MR from that branch lists, in its fact sheet's origin on
// every node, the party's opinion for /us/t1/s2 (author_kind group, on
// behalf of group:party). A ballot on it signed by a key outside the
// roster is refused; a governance MR setting the root branch's
// governance rule is refused not_authorized (D38: fixed for the session).
//
// Complaints (§8, D39, D40): the first node's signed rejection receipt of
// that outsider's ballot names a refusal_index. Member 6 files a refusal
// complaint against the node (respondent the node's key, issue refusal)
// with the receipt and the refusal-log reference as evidence: accepted,
// and the first node's evaluation says both items hold; the same receipt
// with its status changed to "accepted" is evidence_invalid. (The spec's
// wording has the node refuse a valid opinion; an honest node refuses
// nothing valid, so the harness files on a refusal it can cause.)
func s16(s *sc) {
	r := s.r
	if levelRank(r.rep.Claimed) < levelRank("L3") {
		s.notApplicable("an L3 node's re-validation of the complaint (rejection_inconsistent): the nodes claim " + r.rep.Claimed)
	} else {
		s.notRun("an L3 node's re-validation of the complaint (rejection_inconsistent)")
	}
	ss := s.newSession(SessionOpts{Label: "S16"})
	r.keep(ss)
	ss.Accept(ss.Tx(2, "group.create", map[string]any{"id": "party", "members": []string{ss.Members[2].Key, ss.Members[3].Key}, "admins": []string{ss.Members[2].Key}}))
	advocate := NewSigner(fmt.Sprintf("witan harness %s run %s advocacy drafter", r.cfg.Seed, r.cfg.RunID))
	const text = "Appeals lie to the party's board (simulated)."
	ops, res, err := ReplaceOps(ss.Seed, Edit{"/us/t1/s2", text})
	s.must("the harness builds its change", err == nil, nil, "%v", err)
	proposal := NewChange(advocate.Key, ss.Genesis, ss.Seed, res, ops, "model text")
	attach := append([][]byte{MustCanon(proposal.Object)}, res.Objects()...)
	position := func() map[string]any {
		b := opinionBody("group", "The party's model text (simulated)", fullDisclosure())
		b["on_behalf_of"] = "group:party"
		b["proposes"] = []any{proposal.ID}
		b["stance"] = "amend"
		return b
	}
	ss.Refuse(ss.Tx(3, "opinion.publish", position(), attach...), "group_not_authorized", "a group position signed by a plain member")
	pos := ss.Accept(ss.Tx(2, "opinion.publish", position(), attach...))
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s2", text})
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	s.converge(ss)
	for _, cl := range r.clients {
		f := cl.Get(r.ctx, q("/merge-requests/"+mr+"/facts", ss.ID))
		origin, _ := Field(f.JSON, "facts", "origin").([]any)
		s.check("the MR's origin lists the party's position for /us/t1/s2 on every node", len(origin) == 1 && Str(origin[0], "opinion") == pos &&
			Str(origin[0], "nid") == "/us/t1/s2" && Str(origin[0], "author_kind") == "group" && Str(origin[0], "on_behalf_of") == "group:party",
			f, "origin %v", origin)
	}
	out := ss.TxBy(advocate, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "supersedes": nil})
	ss.Refuse(out, "", "a ballot signed by a key outside the roster")
	s16Complaint(s, ss, out)
	_, head := ss.RootHead()
	gov, _ := ss.OpenTx(MR{Kind: "governance", Target: "root", TargetHead: head, Rule: ss.TwoThirds(),
		Set: map[string]any{"governance_rule": ss.Majority(nil)}})
	ss.Refuse(gov, "not_authorized", "a governance MR setting the root's governance rule")
}

// s16Complaint files a refusal complaint on the node's refusal of tx (see
// s16); tx is submitted again to get its receipt (a refusal is not
// stored, so the node answers it alike).
func s16Complaint(s *sc, ss *Session, tx Tx) {
	r := s.r
	a := ss.c.Submit(r.ctx, tx)
	rc, _ := Field(a.JSON, "receipt").(map[string]any)
	if !s.check("the rejection receipt names a refusal_index", rc != nil && Int(rc, "refusal_index") >= 0, a, "receipt %v", rc) {
		return
	}
	complaint := func(rc map[string]any) map[string]any {
		b := onSubject("member", "session", ss.ID, nil)
		b["complaint"] = map[string]any{"respondent": map[string]any{"type": "node", "id": Str(rc, "node")}, "issue": "refusal",
			"evidence":      []any{map[string]any{"receipt": rc}, map[string]any{"refusal": map[string]any{"node": Str(rc, "node"), "index": Field(rc, "refusal_index")}}},
			"remedy_sought": "Re-validate the ballot (simulated)."}
		return b
	}
	forged := map[string]any{}
	for k, v := range rc {
		forged[k] = v
	}
	forged["status"] = "accepted"
	ss.Refuse(ss.Tx(6, "opinion.publish", complaint(forged)), "evidence_invalid", "a complaint whose receipt was altered")
	id := ss.Accept(ss.Tx(6, "opinion.publish", complaint(rc)))
	ev := ss.Get("/opinions/" + id + "/evaluation")
	list, _ := Field(ev.JSON, "results").([]any)
	held := map[int64]string{}
	for _, x := range list {
		if Str(x, "kind") == "evidence" {
			held[Int(x, "index")] = Str(x, "result")
		}
	}
	s.check("the complaint's receipt (evidence 0) and refusal-log reference (evidence 1) hold on the node that refused", len(held) == 2 && held[0] == "holds" && held[1] == "holds", ev, "results %v", list)
}
