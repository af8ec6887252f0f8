package harness

import "net/http"

// s21: district attributes (D72) and jurisdictions (D73), the parts a
// black box can show without aged keys or a contest.
//
// By hand: the district table gives even members region north and odd
// members south; density urban for 2, 4, 6, 8 and rural for the rest
// (member 0 included). A session.create naming a table with a religion
// column is refused district_attribute_invalid. Members 0–5 approve an
// MR: by region north 3 (0, 2, 4) and south 3 (1, 3, 5); by density
// urban 2 (2, 4) and rural 4 (0, 1, 3, 5), the same on every node. An
// MR giving section 2 the text "[[applies:CA]] …" merges: /law for
// jurisdiction CA shows it, for NY shows section 2 as before the merge,
// and an undeclared code is jurisdiction_unknown.
func s21(s *sc) {
	r := s.r
	s.notRun("a contest deadline 30 hours after open (deadline_too_short) and a seven-option contest's fallback")
	s.notRun("[[opt_in:]] after a jurisdiction's choice, and attested_by / unattested (they need aged keys)")
	members := map[string]any{}
	var keys []*Signer
	for i := 0; i < 10; i++ {
		keys = append(keys, r.member(i))
		region, density := "north", "urban"
		if i%2 == 1 {
			region, density = "south", "rural"
		}
		if i == 0 {
			density = "rural"
		}
		members[keys[i].Key] = map[string]any{"region": region, "density": density}
	}
	table := MustCanon(map[string]any{"attributes": map[string]any{"region": []string{"north", "south"}, "density": []string{"urban", "rural"}}, "members": members})
	juris := []any{map[string]any{"code": "CA", "name": "California"}, map[string]any{"code": "NY", "name": "New York"}}
	ss := s.newSession(SessionOpts{Label: "S21", Extra: map[string]any{"districts": Hash(table), "jurisdictions": juris}, Attach: [][]byte{table}})
	r.keep(ss)
	bad := MustCanon(map[string]any{"attributes": map[string]any{"religion": []string{"a", "b"}}, "members": map[string]any{keys[0].Key: map[string]any{"religion": "a"}}})
	body := map[string]any{"label": "witan harness " + r.cfg.Seed + " run " + r.cfg.RunID + " S21 religion (simulated)", "seed": ss.Seed.Hash(),
		"simulation": true, "education": false, "registrar": "group:registrar", "profile": "uslm-1", "roster": "group:roster",
		"root_rule": ss.Majority(RootNotice), "root_governance_rule": ss.TwoThirds(), "districts": Hash(bad)}
	create := Seal(keys[0], "session.create", ObjectID(body), []string{}, body, r.ts(), append(append(ss.Seed.Objects(), RuleText), bad)...)
	ss.Refuse(create, "district_attribute_invalid", "a district table with a religion column")

	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s2", "[[applies:CA]] Appeals lie to the state board (simulated)."})
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	yes := ss.Vote(mr, "approve", 0, 6)
	s.converge(ss)
	want := map[string]map[string]int64{"region": {"north": 3, "south": 3}, "density": {"urban": 2, "rural": 4}}
	for by, vals := range want {
		var first []byte
		for i, cl := range r.clients {
			a := cl.Get(r.ctx, q("/merge-requests/"+mr+"/tally?by="+by, ss.ID))
			got := map[string]int64{}
			groups, _ := Field(a.JSON, "groups").([]any)
			for _, g := range groups {
				got[Str(g, "value")] = Int(g, "tally", "approve")
			}
			ok := a.OK()
			for v, n := range vals {
				ok = ok && got[v] == n
			}
			s.check("tally by "+by+" as worked out by hand, on every node", ok, a, "groups %v", got)
			b, _ := Canon(groups)
			if i == 0 {
				first = b
			} else {
				s.check("tally by "+by+" identical on every node", string(b) == string(first), a, "differs")
			}
		}
	}
	ss.Accept(ss.DetermineTx(0, mr, yes, "approved"))
	// /law by jurisdiction is the law in force: an on_merge merge has a
	// date once a checkpoint includes its determination.
	a, ok := s.waitFinality("/merge-requests/"+mr, ss)
	s.must("the merge is checkpointed", ok, a, "finality %q", Str(a.JSON, "finality"))
	s.converge(ss)
	ca := ss.Get("/law?jurisdiction=CA")
	ny := ss.Get("/law?jurisdiction=NY")
	s.check("/law?jurisdiction=CA applies the [[applies:CA]] node", Str(ca.JSON, "root", "children", 0, "children", 1, "text") == "[[applies:CA]] Appeals lie to the state board (simulated).", ca, "section 2 %q", Str(ca.JSON, "root", "children", 0, "children", 1, "text"))
	s.check("/law?jurisdiction=NY shows section 2 as before the merge", Str(ny.JSON, "root", "children", 0, "children", 1, "text") == "The period is 30 days.", ny, "section 2 %q", Str(ny.JSON, "root", "children", 0, "children", 1, "text"))
	tx := ss.Get("/law?jurisdiction=TX")
	s.check("/law?jurisdiction=TX (undeclared) is jurisdiction_unknown", tx.Status >= http.StatusBadRequest && Str(tx.JSON, "code") == "jurisdiction_unknown", tx, "%d %q", tx.Status, Str(tx.JSON, "code"))
}
