package harness

import "fmt"

// s22: observers (D78). The session declares an observers group holding
// one key outside the roster. Everything an observer signs is refused
// observer_not_allowed except key.register and plain opinions on the
// spec or an RFC: a ballot, an mr.open, a determination, a group.create
// (a group it would sign positions for), a group position on behalf of
// the drafters, an opinion on an MR, and an opinion on the spec carrying
// an estimate; a roster update adding the observer is refused likewise,
// and (once its key is aged, below) an observer's ranking.
// Its key.register is accepted.
//
// Then a day of witnessed time passes (the harness's clock moves 25 hours
// and a member publishes; key_aging, D61), so the observer's key and a
// non-member's, both registered before, may publish: a plain observer
// opinion on the spec is accepted; a protocol complaint (respondent spec,
// issue protocol, §8) addressed to the observer is accepted from member 4
// and from the non-member (an advisor with the full disclosure: "any
// keyholder"); one addressed to member 5, not an observer, is
// addressee_invalid. The observer's opinion with responds_to naming
// member 4's complaint is listed in that complaint's observer_replies on
// every node; member 6's opinion with the same responds_to is not (not an
// observer), and the non-member's complaint has none.
func s22(s *sc) {
	r := s.r
	obs := NewSigner(fmt.Sprintf("witan harness %s run %s observer", r.cfg.Seed, r.cfg.RunID))
	ss := s.newSession(SessionOpts{Label: "S22", KeySpace: "S22", Extra: map[string]any{"observers": "group:observers"}})
	r.keep(ss)
	ss.Accept(ss.Tx(0, "group.create", map[string]any{"id": "observers", "members": []string{obs.Key}, "admins": []string{ss.Members[0].Key}}))
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	m := MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)}
	mr := ss.Open(m)
	const code = "observer_not_allowed"
	ss.Refuse(ss.TxBy(obs, "ballot.cast", map[string]any{"mr": mr, "choice": "approve", "supersedes": nil}), code, "an observer's ballot")
	m.Summary = "opened by an observer"
	ss.Refuse(ss.TxBy(obs, "mr.open", ss.Body(m)), code, "an observer's mr.open")
	ss.Refuse(ss.TxBy(obs, "mr.determine", map[string]any{"mr": mr, "ballots": []string{}, "outcome": "pending"}), code, "an observer's determination")
	ss.Refuse(ss.TxBy(obs, "group.create", map[string]any{"id": "watchers", "members": []string{obs.Key}, "admins": []string{obs.Key}}), code, "an observer's group.create")
	pos := opinionBody("group", "A position (simulated)", fullDisclosure())
	pos["on_behalf_of"] = "group:drafters"
	pos["subject"] = map[string]any{"type": "mr", "id": mr}
	ss.Refuse(ss.TxBy(obs, "opinion.publish", pos), code, "a group position signed by an observer")
	onMR := opinionBody("advisor", "A view on the MR (simulated)", fullDisclosure())
	onMR["subject"] = map[string]any{"type": "mr", "id": mr}
	ss.Refuse(ss.TxBy(obs, "opinion.publish", onMR), code, "an observer's opinion on an MR")
	est := opinionBody("advisor", "An estimate (simulated)", fullDisclosure())
	est["estimate"] = map[string]any{"mr": mr}
	ss.Refuse(ss.TxBy(obs, "opinion.publish", est), code, "an observer's opinion on the spec carrying an estimate")
	var roster []string
	for _, k := range ss.Members {
		roster = append(roster, k.Key)
	}
	grp := map[string]any{"id": "roster", "members": append(roster, obs.Key), "admins": []string{ss.Members[0].Key}}
	ss.Refuse(ss.Tx(0, "group.update", map[string]any{"group": ObjectID(grp)}, MustCanon(grp)), code, "a roster update adding the observer")
	ss.Accept(ss.TxBy(obs, "key.register", map[string]any{"key": obs.Key}))
	nm := NewSigner(fmt.Sprintf("witan harness %s run %s S22 non-member", r.cfg.Seed, r.cfg.RunID))
	ss.Accept(ss.TxBy(nm, "key.register", map[string]any{"key": nm.Key}))
	ss.age(3)
	rk := opinionBody("advisor", "An observer's ranking (simulated)", fullDisclosure())
	rk["ranking"] = map[string]any{"metric": "turnout", "scope_type": "mr", "filter": map[string]any{"session": ss.ID}, "as_of": ss.Last[0],
		"order": "desc", "items": []any{map[string]any{"id": mr, "value": "0/10"}}}
	ss.Refuse(ss.TxBy(obs, "opinion.publish", rk), code, "an observer's ranking")
	ss.Accept(ss.TxBy(obs, "opinion.publish", opinionBody("advisor", "An observer's view of the spec (simulated)", fullDisclosure())))
	complaint := func(kind string, to string) map[string]any {
		var d map[string]any
		if kind != "member" {
			d = fullDisclosure()
		}
		b := opinionBody(kind, "A protocol complaint (simulated)", d)
		b["stance"] = "question"
		b["complaint"] = map[string]any{"respondent": map[string]any{"type": "spec", "id": "30k-v0.13 §8"}, "issue": "protocol",
			"addressed_to": []any{to}, "evidence": []any{}, "remedy_sought": "Say what a node does with a refusal it cannot check."}
		return b
	}
	c1 := ss.Accept(ss.Tx(4, "opinion.publish", complaint("member", obs.Key)))
	c2 := ss.Accept(ss.TxBy(nm, "opinion.publish", complaint("advisor", obs.Key)))
	ss.Refuse(ss.Tx(4, "opinion.publish", complaint("member", ss.Members[5].Key)), "addressee_invalid", "a complaint addressed to a key that is not an observer")
	reply := opinionBody("advisor", "The observer's reply (simulated)", fullDisclosure())
	reply["responds_to"] = []any{c1}
	rid := ss.Accept(ss.TxBy(obs, "opinion.publish", reply))
	mreply := opinionBody("member", "A member's reply (simulated)", nil)
	mreply["responds_to"] = []any{c1}
	ss.Accept(ss.Tx(6, "opinion.publish", mreply))
	s.converge(ss)
	for _, c := range r.clients {
		a := c.Get(r.ctx, q("/opinions/"+c1, ss.ID))
		got := fmt.Sprint(Field(a.JSON, "observer_replies"))
		s.check("the observer's reply, and only it, is in the complaint's observer_replies: "+c.URL, got == fmt.Sprint([]any{rid}), a, "observer_replies %s", got)
		a = c.Get(r.ctx, q("/opinions/"+c2, ss.ID))
		l, ok := Field(a.JSON, "observer_replies").([]any)
		s.check("the non-member's complaint has no observer reply: "+c.URL, ok && len(l) == 0, a, "observer_replies %v", Field(a.JSON, "observer_replies"))
	}
}
