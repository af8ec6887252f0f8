package harness

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// evaluation reads an opinion's evaluation on node c: its "resolution"
// part, its results by kind ({result, finality}) and its finality.
func (ss *Session) evaluation(c *Client, id string) (a *Answer, res map[string]any, results map[string][2]string, fin string) {
	a = c.Get(ss.s.r.ctx, q("/opinions/"+id+"/evaluation", ss.ID))
	res, _ = Field(a.JSON, "resolution").(map[string]any)
	results = map[string][2]string{}
	list, _ := Field(a.JSON, "results").([]any)
	for _, x := range list {
		results[Str(x, "kind")] = [2]string{Str(x, "result"), Str(x, "finality")}
	}
	return a, res, results, Str(a.JSON, "finality")
}

// poll calls f until it reports done or the finality timeout passes; it
// returns whether f finished.
func (s *sc) poll(f func() bool) bool {
	deadline := time.Now().Add(s.r.cfg.FinalityTimeout)
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// onSubject is a member opinion on subject (type, id) with extra members.
func onSubject(kind, typ, id string, extra map[string]any) map[string]any {
	var d map[string]any
	if kind != "member" {
		d = fullDisclosure()
	}
	b := opinionBody(kind, "A view (simulated)", d)
	b["subject"] = map[string]any{"type": typ, "id": id}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// s15: markets and rankings (D32–D35, D54), on a session with a roster
// of its own keys (the node's per-key opinion limit is S8's to spend).
//
// By hand: MR 1 (section 1 to 45 days) gets 6 approvals (members 0–5)
// and 1 rejection (member 6) of an electorate of 10: approve_share 6/7;
// it is determined approved. MR 2 (the same change asked again) gets 2
// approvals (0, 1) and 3 rejections (2, 3, 4): 2/5, left open. A
// resolution spec "approved", finality final_advisory, listing every
// node's key with min_agree = the number of nodes, is unresolved while
// any listed node's report is provisional (before the determination every
// report is), then resolved_true, final_advisory, on every node once each
// node has checkpointed the determination. The same assertion asked at
// finality final of eventual nodes is unsatisfiable (no eventual node
// reports final, §5). A resolution question without the word
// "simulated" (D54), min_agree above the number of listed nodes, and a
// node listed twice are resolution_invalid. An advisor (non-member)
// opinion whose disclosure lacks stakes is disclosure_missing (§8, D32:
// disclosure is judged before key aging). Member 5's stake on MR 1
// ("yes") is listed beside their approving ballot in /tally's stakes. A
// forecast of "approved" holds and one of "rejected" fails; both are
// undetermined before the determination; p 5/4 is schema. A ranking of
// [MR 1 6/7, MR 2 2/5] by approve_share as of the determination holds on
// every node, the swapped one fails; metric "popularity" is
// metric_unknown. No MR view, tally or /stats answer carries odds:
// /stats?metric=odds is metric_unknown and /stats approve_share of MR 1
// is 6/7.
func s15(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S15", KeySpace: "S15"})
	r.keep(ss)
	var nodes []string
	for _, n := range r.rep.Nodes {
		if n.NodeKey == "" {
			s.must("every node declares its node_key", false, nil, "%s declares none", n.URL)
		}
		nodes = append(nodes, n.NodeKey)
	}
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	change := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."})
	mr := ss.Open(MR{Source: "draft", SourceHead: change, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice), Summary: "Extends the period to 45 days"})
	mr2 := ss.Open(MR{Source: "draft", SourceHead: change, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice), Summary: "The same change, asked again"})
	approved := map[string]any{"kind": "mr_outcome", "mr": mr, "outcome": "approved"}
	spec := func(question, finality string, nodes []string, minAgree int) map[string]any {
		return onSubject("member", "mr", mr, map[string]any{"resolution": map[string]any{"question": question, "assertion": approved,
			"finality": finality, "nodes": nodes, "min_agree": minAgree}})
	}
	ss.Refuse(ss.Tx(4, "opinion.publish", spec("Will the MR be approved?", "final_advisory", nodes, len(nodes))), "resolution_invalid", "a resolution question without the word simulated")
	ss.Refuse(ss.Tx(4, "opinion.publish", spec("Will the simulated MR pass?", "final_advisory", nodes, len(nodes)+1)), "resolution_invalid", "min_agree above the listed nodes")
	ss.Refuse(ss.Tx(4, "opinion.publish", spec("Will the simulated MR pass?", "final_advisory", []string{nodes[0], nodes[0]}, 1)), "resolution_invalid", "a node listed twice")
	adv := NewSigner(fmt.Sprintf("witan harness %s run %s S15 advisor", r.cfg.Seed, r.cfg.RunID))
	ss.Accept(ss.TxBy(adv, "key.register", map[string]any{"key": adv.Key}))
	noStakes := onSubject("advisor", "mr", mr, nil)
	delete(noStakes["disclosure"].(map[string]any), "stakes")
	ss.Refuse(ss.TxBy(adv, "opinion.publish", noStakes), "disclosure_missing", "a non-member opinion without stakes")

	both := ss.Accept(ss.Tx(3, "opinion.publish", spec("Will the simulated MR be approved?", "final_advisory", nodes, len(nodes))))
	finalAll := ss.Accept(ss.Tx(3, "opinion.publish", spec("Simulated: approved with final finality?", "final", nodes, 1)))
	stake := map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{}, "ai_assistance": "none",
		"stakes": []any{map[string]any{"subject": mr, "direction": "yes", "venue": "a simulated market", "size_band": "<1k"}}, "foreign_principal": nil}
	ss.Accept(ss.Tx(5, "opinion.publish", onSubject("member", "mr", mr, map[string]any{"disclosure": stake, "stance": "support"})))
	forecast := func(outcome string, num, den int) map[string]any {
		return onSubject("member", "mr", mr, map[string]any{"forecast": map[string]any{"assertion": map[string]any{"kind": "mr_outcome", "mr": mr, "outcome": outcome},
			"p_num": num, "p_den": den, "as_of": Hash([]byte("a root"))}})
	}
	fcYes := ss.Accept(ss.Tx(6, "opinion.publish", forecast("approved", 3, 4)))
	fcNo := ss.Accept(ss.Tx(7, "opinion.publish", forecast("rejected", 1, 3)))
	ss.Refuse(ss.Tx(7, "opinion.publish", forecast("approved", 5, 4)), "schema", "a forecast above 1")
	a, _, res, _ := ss.evaluation(ss.c, fcYes)
	s.check("a forecast is undetermined before the determination", res["forecast"][0] == "undetermined", a, "results %v", res)
	a, rs, _, _ := ss.evaluation(ss.c, both)
	s.check("the resolution spec is unresolved while the MR is open (every report provisional)", Str(rs, "result") == "unresolved", a, "resolution %v", rs)

	var ballots []string
	for i := 0; i < 7; i++ {
		choice := "approve"
		if i == 6 {
			choice = "reject"
		}
		ballots = append(ballots, ss.Accept(ss.BallotTx(i, mr, choice, "")))
	}
	for i := 0; i < 5; i++ {
		choice := "approve"
		if i >= 2 {
			choice = "reject"
		}
		ss.Accept(ss.BallotTx(i, mr2, choice, ""))
	}
	a, _, _, _ = ss.Tally(mr)
	st, _ := Field(a.JSON, "stakes").([]any)
	s.check("member 5's stake is listed beside their approving ballot in /tally", len(st) == 1 && Str(st[0], "member") == ss.Members[5].Key && Str(st[0], "choice") == "approve", a, "stakes %v", Field(a.JSON, "stakes"))
	det := ss.Accept(ss.DetermineTx(0, mr, ballots, "approved"))
	ranking := func(metric string, items ...any) map[string]any {
		return onSubject("member", "session", ss.ID, map[string]any{"ranking": map[string]any{"metric": metric, "scope_type": "mr",
			"filter": map[string]any{"session": ss.ID}, "as_of": det, "order": "desc", "items": items}})
	}
	item := func(id, v string) any { return map[string]any{"id": id, "value": v} }
	good := ss.Accept(ss.Tx(8, "opinion.publish", ranking("approve_share", item(mr, "6/7"), item(mr2, "2/5"))))
	swapped := ss.Accept(ss.Tx(8, "opinion.publish", ranking("approve_share", item(mr2, "2/5"), item(mr, "6/7"))))
	ss.Refuse(ss.Tx(8, "opinion.publish", ranking("popularity", item(mr, "1/2"))), "metric_unknown", "a ranking by an unknown metric")
	s.converge(ss)

	// Every observation of the spec on every node, until it resolves:
	// unresolved while a listed node's report is provisional.
	var last *Answer
	var bad []string
	done := s.poll(func() bool {
		all := true
		for _, c := range r.clients {
			a, rs, _, _ := ss.evaluation(c, both)
			last = a
			reps, _ := Field(rs, "reports").([]any)
			prov := len(reps) != len(nodes)
			for _, x := range reps {
				prov = prov || Str(x, "finality") != "final_advisory"
			}
			if prov && Str(rs, "result") != "unresolved" {
				bad = append(bad, fmt.Sprintf("%s: %v", c.URL, rs))
			}
			all = all && Str(rs, "result") == "resolved_true"
		}
		return all
	})
	s.check("the spec stays unresolved on every node while a listed node's report is provisional", len(bad) == 0, last, "%v", bad)
	s.check("the spec resolves resolved_true on every node once every listed node has checkpointed", done, last, "not within %s", r.cfg.FinalityTimeout)
	var answers []string
	for _, c := range r.clients {
		a, rs, _, fin := ss.evaluation(c, both)
		ok := Str(rs, "result") == "resolved_true" && Str(rs, "finality") == "final_advisory" && fin == "final_advisory"
		for _, x := range Field(rs, "reports").([]any) {
			ok = ok && Str(x, "assertion") == "holds" && Str(x, "finality") == "final_advisory"
		}
		s.check("resolved_true, final_advisory, every listed report holds: "+c.URL, ok, a, "resolution %v finality %q", rs, fin)
		answers = append(answers, Str(rs, "result"))
		a, rs, _, _ = ss.evaluation(c, finalAll)
		s.check("a spec requiring final of eventual nodes is unsatisfiable: "+c.URL, Str(rs, "result") == "unsatisfiable", a, "resolution %v", rs)
		for _, x := range []struct{ id, kind, want, what string }{
			{fcYes, "forecast", "holds", "the forecast of approved holds"},
			{fcNo, "forecast", "fails", "the forecast of rejected fails"},
			{good, "ranking", "holds", "the ranking by approve_share holds"},
			{swapped, "ranking", "fails", "the ranking with two items swapped fails"},
		} {
			// The opinions came after the determination the spec waited
			// for: a node answers final_advisory for one once a checkpoint
			// of its own covers it, which may be its next. Until then the
			// result must already be the right one, provisional.
			var a *Answer
			var res map[string][2]string
			wrong := false
			final := s.poll(func() bool {
				a, _, res, _ = ss.evaluation(c, x.id)
				wrong = wrong || res[x.kind][0] != x.want
				return res[x.kind][1] == "final_advisory"
			})
			s.check(x.what+": "+c.URL, final && !wrong && res[x.kind] == [2]string{x.want, "final_advisory"}, a, "results %v (another result seen on the way: %v)", res, wrong)
		}
	}
	same := true
	for _, x := range answers {
		same = same && x == answers[0]
	}
	s.check("every listed node resolves the spec identically", same, last, "%v", answers)

	// No endpoint returns aggregate odds.
	for _, p := range []string{"/merge-requests/" + mr, "/merge-requests/" + mr + "/tally", "/opinions/" + fcYes + "/evaluation"} {
		a := ss.Get(p)
		low := strings.ToLower(string(a.Body))
		s.check(p+" carries no odds", a.OK() && !strings.Contains(low, "odds") && (strings.Contains(p, "evaluation") || !strings.Contains(low, "p_num")), a, "odds or forecasts in the answer")
	}
	a = ss.Get("/stats?metric=odds")
	s.check("/stats?metric=odds is metric_unknown", a.Status >= http.StatusBadRequest && Str(a.JSON, "code") == "metric_unknown", a, "%d %q", a.Status, Str(a.JSON, "code"))
	a = ss.Get("/stats?metric=approve_share&scope=" + mr)
	s.check("/stats approve_share of MR 1 is 6/7", Str(a.JSON, "value") == "6/7", a, "value %v", Field(a.JSON, "value"))
}
