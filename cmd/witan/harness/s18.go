package harness

// s18: the parts of Simulation 1 that need no contest, emergency clock
// or aged keys. Every harness session is simulated (D54), so every JSON
// answer about S1's session carries "simulation": true, and its tally
// shows both shares (D50: approve_of_cast and approve_of_electorate with
// the rule's share named) on every node.
func s18(s *sc) {
	r := s.r
	s.notRun("a four-option contest electing status_quo, a superseding version's 24 hours of notice, an emergency MR and its 30-day expiry")
	if r.s1 == nil {
		s.e.Result = NotRun
		s.e.Reason = "needs S1"
		return
	}
	ss, mr := r.s1.ss, r.s1.mr
	for _, c := range r.clients {
		for _, path := range []string{"/sessions/" + ss.ID, "/log", "/heads", "/checkpoint", "/branches", "/branches/root", "/law",
			"/merge-requests", "/merge-requests/" + mr, "/merge-requests/" + mr + "/tally", "/merge-requests/" + mr + "/facts",
			"/merge-requests/" + mr + "/checks", "/merge-requests/" + mr + "/diff", "/objects/" + mr, "/export/popolo", "/export/rollcall"} {
			a := c.Get(r.ctx, q(path, ss.ID))
			s.check("simulation: true on "+path, a.OK() && Field(a.JSON, "simulation") == true, a, "status %d, simulation %v", a.Status, Field(a.JSON, "simulation"))
		}
		a := c.Get(r.ctx, q("/merge-requests/"+mr+"/tally", ss.ID))
		tl := Field(a.JSON, "result", "tally")
		s.check("the tally shows both shares and the rule's", Field(tl, "approve_of_cast") != nil && Field(tl, "approve_of_electorate") != nil && Field(tl, "rule_share") != nil, a, "tally %v", tl)
	}
}
