package harness

import (
	"fmt"
	"net/http"
	"time"
)

// s21: Simulation 5: district attributes (D72), jurisdictions and their
// choices (D73), attestations (D76) and the contest parts (s21Contest).
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
//
// Jurisdiction choices: the session names a key for CA and one for NY;
// the same MR makes section 3 "[[opt_in:medicaid-x]] …". With the merge
// effective on date D (the checkpoint including the determination), CA's
// key records an opt_in effective D + 10: /law?jurisdiction=CA shows
// section 3's new text on D + 10 and its old text on D + 9; NY, with no
// opt-in, shows the old text on D + 10.
//
// Attestations (after a day of witnessed time ages the non-member keys
// registered before): key A's opinion lists the organization "Farm
// Bureau": unattested. Key B, whose own disclosure lists it, attests A
// for it until 2027-12-31: attested_by B. B revokes: unattested again, on
// every node.
func s21(s *sc) {
	r := s.r
	members := map[string]any{}
	var keys []*Signer
	for i := 0; i < 10; i++ {
		keys = append(keys, NewSigner(fmt.Sprintf("witan harness %s run %s %s member %d", r.cfg.Seed, r.cfg.RunID, "S21", i)))
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
	jCA := NewSigner(fmt.Sprintf("witan harness %s run %s S21 CA", r.cfg.Seed, r.cfg.RunID))
	jNY := NewSigner(fmt.Sprintf("witan harness %s run %s S21 NY", r.cfg.Seed, r.cfg.RunID))
	juris := []any{map[string]any{"code": "CA", "name": "California", "key": jCA.Key}, map[string]any{"code": "NY", "name": "New York", "key": jNY.Key}}
	ss := s.newSession(SessionOpts{Label: "S21", KeySpace: "S21", Extra: map[string]any{"districts": Hash(table), "jurisdictions": juris}, Attach: [][]byte{table}})
	r.keep(ss)
	kA := NewSigner(fmt.Sprintf("witan harness %s run %s S21 affiliated", r.cfg.Seed, r.cfg.RunID))
	kB := NewSigner(fmt.Sprintf("witan harness %s run %s S21 attester", r.cfg.Seed, r.cfg.RunID))
	for _, k := range []*Signer{jCA, kA, kB} {
		ss.Accept(ss.TxBy(k, "key.register", map[string]any{"key": k.Key}))
	}
	ss.age(7)
	bad := MustCanon(map[string]any{"attributes": map[string]any{"religion": []string{"a", "b"}}, "members": map[string]any{keys[0].Key: map[string]any{"religion": "a"}}})
	body := map[string]any{"label": "witan harness " + r.cfg.Seed + " run " + r.cfg.RunID + " S21 religion (simulated)", "seed": ss.Seed.Hash(),
		"simulation": true, "education": false, "registrar": "group:registrar", "profile": "uslm-1", "roster": "group:roster",
		"root_rule": ss.Majority(RootNotice), "root_governance_rule": ss.TwoThirds(), "districts": Hash(bad)}
	create := Seal(keys[0], "session.create", ObjectID(body), []string{}, body, r.ts(), append(append(ss.Seed.Objects(), RuleText), bad)...)
	ss.Refuse(create, "district_attribute_invalid", "a district table with a religion column")

	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s2", "[[applies:CA]] Appeals lie to the state board (simulated)."}, Edit{"/us/t1/s3", "[[opt_in:medicaid-x]] The period is 60 days."})
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
	a, ok := s.waitFinalityAll("/merge-requests/"+mr, ss)
	s.must("the merge is checkpointed on every node", ok, a, "finality %q", Str(a.JSON, "finality"))
	cp := ss.Get("/checkpoint")
	day, err := time.Parse("2006-01-02", firstN(Str(cp.JSON, "checkpoint", "ts"), 10))
	s.must("the checkpoint including the determination dates the merge", err == nil, cp, "ts %q", Str(cp.JSON, "checkpoint", "ts"))
	optIn := day.AddDate(0, 0, 10).Format("2006-01-02")
	choice := func(c, eff string) map[string]any {
		return onSubject("advisor", "session", ss.ID, map[string]any{"jurisdiction_choice": map[string]any{"program": "medicaid-x", "choice": c, "effective": eff}})
	}
	ss.Accept(ss.TxBy(jCA, "opinion.publish", choice("opt_in", optIn)))
	s21Attest(s, ss, kA, kB)
	s.converge(ss)
	ca := ss.Get("/law?jurisdiction=CA")
	ny := ss.Get("/law?jurisdiction=NY")
	s.check("/law?jurisdiction=CA applies the [[applies:CA]] node", Str(ca.JSON, "root", "children", 0, "children", 1, "text") == "[[applies:CA]] Appeals lie to the state board (simulated).", ca, "section 2 %q", Str(ca.JSON, "root", "children", 0, "children", 1, "text"))
	s.check("/law?jurisdiction=NY shows section 2 as before the merge", Str(ny.JSON, "root", "children", 0, "children", 1, "text") == "The period is 30 days.", ny, "section 2 %q", Str(ny.JSON, "root", "children", 0, "children", 1, "text"))
	for _, c := range r.clients {
		for _, x := range []struct {
			date, j, want string
		}{
			{day.AddDate(0, 0, 9).Format("2006-01-02"), "CA", "The period is 30 days."},
			{optIn, "CA", "[[opt_in:medicaid-x]] The period is 60 days."},
			{optIn, "NY", "The period is 30 days."},
		} {
			l := c.Get(r.ctx, q("/law?date="+x.date+"&jurisdiction="+x.j, ss.ID))
			got := Str(l.JSON, "root", "children", 0, "children", 2, "text")
			s.check(fmt.Sprintf("/law?date=%s&jurisdiction=%s: section 3 %q (CA's opt-in effective %s): %s", x.date, x.j, x.want, optIn, c.URL), got == x.want, l, "section 3 %q", got)
		}
	}
	tx := ss.Get("/law?jurisdiction=TX")
	s.check("/law?jurisdiction=TX (undeclared) is jurisdiction_unknown", tx.Status >= http.StatusBadRequest && Str(tx.JSON, "code") == "jurisdiction_unknown", tx, "%d %q", tx.Status, Str(tx.JSON, "code"))
	s21Contest(s)
}

// s21Attest: the attestation part of s21 (D76); kA and kB are registered
// and aged.
func s21Attest(s *sc, ss *Session, kA, kB *Signer) {
	r := s.r
	disclosing := func(org string) map[string]any {
		d := fullDisclosure()
		d["affiliations"] = []any{org}
		return d
	}
	op := ss.Accept(ss.TxBy(kA, "opinion.publish", opinionBody("advisor", "An affiliated view (simulated)", disclosing("Farm Bureau"))))
	shown := func(c *Client) (*Answer, string) {
		a := c.Get(r.ctx, q("/opinions/"+op, ss.ID))
		return a, Str(a.JSON, "affiliations", 0, "attested_by")
	}
	attest := func(revoked bool) map[string]any {
		b := opinionBody("advisor", "An attestation (simulated)", disclosing("Farm Bureau"))
		b["attest"] = map[string]any{"key": kA.Key, "organization": "Farm Bureau", "role": "policy director", "expires": "2027-12-31", "revoked": revoked}
		return b
	}
	a, by := shown(ss.c)
	s.check("an opinion listing an organization shows unattested", by == "unattested" && Str(a.JSON, "affiliations", 0, "organization") == "Farm Bureau", a, "affiliations %v", Field(a.JSON, "affiliations"))
	ss.Accept(ss.TxBy(kB, "opinion.publish", attest(false)))
	a, by = shown(ss.c)
	s.check("with a valid attestation it shows attested_by the attesting key", by == kB.Key, a, "affiliations %v", Field(a.JSON, "affiliations"))
	ss.Accept(ss.TxBy(kB, "opinion.publish", attest(true)))
	s.converge(ss)
	for _, c := range r.clients {
		a, by := shown(c)
		s.check("after the revocation it shows unattested: "+c.URL, by == "unattested", a, "affiliations %v", Field(a.JSON, "affiliations"))
	}
}

// s21Contest: S21's contest parts on a session of 500 (s21Contest's
// arithmetic is fallbackContest's with a = 62, b = 189, c = 130: X over Y
// 192 to 189, Y over S 251 to 130, S over X 130 to 62, skipped; X has
// A = 62 and needs 251, short by 189; Y has A = 251, 502 > 500,
// approved). Before it, a contest.open whose deadline is 30 hours after
// its own time (its witnessed time) is refused deadline_too_short (D74:
// 72 hours).
func s21Contest(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S21 contest", Roster: 500, KeySpace: "S21c", RootRule: (&Session{TextRef: textRef()}).deadlineMajority()})
	r.keep(ss)
	rule := ss.deadlineMajority()
	var opts []string
	for i := 0; i < 2; i++ {
		tx, mr := ss.option(fmt.Sprintf("short%d", i), rule, "", Edit{"/us/t1/s2", fmt.Sprintf("The fee is %d dollars (simulated).", 10+i)})
		ss.Accept(tx)
		opts = append(opts, mr)
	}
	deadline := r.nextTS().Add(30 * time.Hour).Format(time.RFC3339)
	ss.Refuse(ss.Tx(3, "contest.open", map[string]any{"options": opts, "deadline": deadline}), "deadline_too_short", "a contest deadline 30 hours after its open")
	fallbackContest(s, ss, rule, 62, 189, 130, 5, 192, 189)
}
