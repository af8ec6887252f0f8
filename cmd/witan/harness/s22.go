package harness

import "fmt"

// s22: observers (D78). The session declares an observers group holding
// one key outside the roster. Everything an observer signs is refused
// observer_not_allowed except key.register and plain opinions on the
// spec or an RFC: a ballot, an mr.open, a determination, a group.create
// (a group it would sign positions for), a group position on behalf of
// the drafters, an opinion on an MR, and an opinion on the spec carrying
// an estimate; a roster update adding the observer is refused likewise.
// Its key.register is accepted.
//
// Not run: the parts that need the observer's key aged (key_aging, a day
// of witnessed time, D61) — a plain observer opinion on the spec accepted,
// complaints addressed to the observer, addressee_invalid, and the
// observer's reply in observer_replies.
func s22(s *sc) {
	r := s.r
	s.notRun("a plain observer opinion on the spec accepted, complaints to the observer, addressee_invalid and observer_replies: they need the observer's key aged (key_aging: a day of witnessed time)")
	obs := NewSigner(fmt.Sprintf("witan harness %s run %s observer", r.cfg.Seed, r.cfg.RunID))
	ss := s.newSession(SessionOpts{Label: "S22", Extra: map[string]any{"observers": "group:observers"}})
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
	s.converge(ss)
}
