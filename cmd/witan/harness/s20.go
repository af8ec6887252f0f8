package harness

import (
	"fmt"
	"sort"
	"strconv"
)

// deadlineMajority is threshold_vote: more than half of the electorate,
// no quorum, closing on a deadline far ahead (D74 wants 72 hours of
// witnessed time before it), with the root's notice floor.
func (ss *Session) deadlineMajority() map[string]any {
	return ss.ref("threshold_vote", map[string]any{"num": 1, "den": 2, "cmp": "gt", "basis": "electorate", "quorum_num": 0, "quorum_den": 1,
		"closing": "on_deadline", "deadline": "2099-12-01T00:00:00Z"}, RootNotice)
}

// option drafts edits on a branch of its own forked at the seed and opens
// an MR of it against the root under rule, a variant of variantOf when
// that is set; it returns the mr.open and the MR id.
func (ss *Session) option(name string, rule map[string]any, variantOf string, edits ...Edit) (Tx, string) {
	ss.Branch(name, "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend(name, ss.Genesis, edits...)
	body := ss.Body(MR{Source: name, SourceHead: c, TargetHead: ss.Genesis, Rule: rule})
	if variantOf != "" {
		body["variant_of"] = variantOf
	}
	return ss.Tx(1, "mr.open", body), ObjectID(body)
}

// rank submits member m's contest ranking ("" is the status quo).
func (ss *Session) rank(contest string, m int, order ...string) string {
	names := []string{}
	for _, o := range order {
		if o == "" {
			o = "status_quo"
		}
		names = append(names, o)
	}
	return ss.Accept(ss.Tx(m, "contest.rank", map[string]any{"contest": contest, "ranking": names, "supersedes": nil}))
}

// years is an estimate's by_year series: n years from first, outlays
// step·(i+1) whole dollars, ranges ±10.
func years(first, n, step int) []any {
	var out []any
	for i := 0; i < n; i++ {
		v := step * (i + 1)
		out = append(out, map[string]any{"year": first + i, "outlays": strconv.Itoa(v), "range_low": strconv.Itoa(v - 10), "range_high": strconv.Itoa(v + 10)})
	}
	return out
}

// fallbackContest runs S20's and S21's contest on ss (roster n): options
// X, Y and extra ones nobody ranks; a members rank X > Y > S, the next b
// rank only Y, the next c rank S > X > Y (S the status quo; unranked
// options rank below every ranked one). Pairwise: X over Y a+c to b, Y
// over S a+b to c, S over X c to a. With a+c > b, a+b > c and c the
// weakest winning side, ranked pairs locks X > Y and Y > S and skips
// S > X (it would close the cycle). X wins round 1 with A = a and fails
// a majority of n unless 2a > n (contest_rule_failed); round 2 without X
// elects Y with A = a+b, approved and merged; the extra options are
// rejected contest_lost. ranked_above_winner lists X above Y by a+c and
// below by b, in /contests/{id} and in Y's fact sheet. Every node shows
// the same result.
func fallbackContest(s *sc, ss *Session, rule map[string]any, a, b, c, extra int, above, below int64) {
	r := s.r
	var opts []string
	for i := 0; i < 2+extra; i++ {
		tx, mr := ss.option(fmt.Sprintf("d%d", i), rule, "", Edit{"/us/t1/s1", fmt.Sprintf("The period is %d days.", 40+i)})
		ss.Accept(tx)
		opts = append(opts, mr)
	}
	cid := ss.Accept(ss.Tx(3, "contest.open", map[string]any{"options": opts}))
	x, y := opts[0], opts[1]
	var ranks []string
	m := 0
	for ; m < a; m++ {
		ranks = append(ranks, ss.rank(cid, m, x, y, ""))
	}
	for ; m < a+b; m++ {
		ranks = append(ranks, ss.rank(cid, m, y))
	}
	for ; m < a+b+c; m++ {
		ranks = append(ranks, ss.rank(cid, m, "", x, y))
	}
	ss.Accept(ss.Tx(4, "contest.determine", map[string]any{"contest": cid, "rankings": ranks, "outcome": "approved", "winner": y}))
	s.converge(ss)
	var first []byte
	for i, cl := range r.clients {
		ans := cl.Get(r.ctx, q("/contests/"+cid, ss.ID))
		rounds, _ := Field(ans.JSON, "result", "rounds").([]any)
		s.check(fmt.Sprintf("two rounds in /contests/{id}: X wins round 1 with A = %d and is rejected, Y wins round 2 and is approved: %s", a, cl.URL),
			len(rounds) == 2 && Str(rounds[0], "winner") == x && Str(rounds[0], "outcome") == "rejected" && Int(rounds[0], "tally", "approve") == int64(a) &&
				Str(rounds[1], "winner") == y && Str(rounds[1], "outcome") == "approved", ans, "rounds %v", rounds)
		want := fmt.Sprint([]any{map[string]any{"option": x, "above_winner": above, "below_winner": below}})
		got := func(v any) string {
			l, _ := v.([]any)
			var out []any
			for _, e := range l {
				out = append(out, map[string]any{"option": Str(e, "option"), "above_winner": Int(e, "above_winner"), "below_winner": Int(e, "below_winner")})
			}
			return fmt.Sprint(out)
		}
		s.check(fmt.Sprintf("ranked_above_winner lists X above Y by %d, below by %d: %s", above, below, cl.URL), got(Field(ans.JSON, "ranked_above_winner")) == want, ans, "%v", Field(ans.JSON, "ranked_above_winner"))
		f := cl.Get(r.ctx, q("/merge-requests/"+y+"/facts", ss.ID))
		s.check("Y's fact sheet shows the same ranked_above_winner: "+cl.URL, got(Field(f.JSON, "facts", "ranked_above_winner")) == want, f, "%v", Field(f.JSON, "facts", "ranked_above_winner"))
		// The rounds and the winner, identical; timing (and the live
		// outcome, which waits for notice) reads each node's checkpoints.
		b, _ := Canon(map[string]any{"rounds": Field(ans.JSON, "result", "rounds"), "winner": Field(ans.JSON, "result", "winner"),
			"if_closed": Field(ans.JSON, "result", "if_closed"), "ranked_above_winner": Field(ans.JSON, "ranked_above_winner")})
		if i == 0 {
			first = b
		} else {
			s.check("the contest's rounds, winner and ranked_above_winner are identical on every node", string(b) == string(first), ans, "differs from the first node's")
		}
		for j, o := range opts {
			ans := cl.Get(r.ctx, q("/merge-requests/"+o, ss.ID))
			want, why := "rejected", "contest_lost"
			switch j {
			case 0:
				why = "contest_rule_failed"
			case 1:
				want, why = "merged", ""
			}
			s.check(fmt.Sprintf("option %d is %s %s: %s", j, want, why, cl.URL), Str(ans.JSON, "status") == want && (why == "" || Str(ans.JSON, "reason") == why), ans,
				"status %q reason %q", Str(ans.JSON, "status"), Str(ans.JSON, "reason"))
		}
	}
}

// s20: Simulation 4.
//
// Contest (D47, D71), by hand: N = 100, six options X, Y and four nobody
// ranks. 17 members rank X > Y > S, 34 rank only Y, 35 rank S > X > Y
// (S the status quo; unranked options rank below). Pairwise: X over Y
// 17+35 = 52 to 34; Y over S 17+34 = 51 to 35; S over X 35 to 17.
// Ranked pairs locks by the winning side's votes: X>Y (52), Y>S (51), and
// S>X (35) would close the cycle X>Y>S>X, so it is skipped. X wins
// round 1 with A = 17 (its rankers above the status quo); it needs more
// than half of 100, i.e. 51: short by 34, rejected contest_rule_failed.
// Round 2 without X: Y over S 51 to 35; Y wins with A = 51 (102 > 100),
// approved and merged. ranked_above_winner lists X, above Y by 52, below
// by 34. The four others are rejected contest_lost.
//
// Variants (D68): a base MR changes sections 1 and 2; a variant of it
// changing section 3 (a node the base does not touch) is variant_invalid;
// one changing section 1 only is accepted and grouped with its base: the
// contest with the base's id lists both.
//
// Estimates (D69): a fiscal MR whose text carries [[sunset:90]] gets an
// estimate without if_permanent: estimate_incomplete; with an
// if_permanent series over the same years it is accepted (so the sunset
// was the reason).
//
// Effective dates (D70): in a second session an MR sets section 2 to
// "[[effective:2099-01-01]] …" and merges; /law?date=2098-12-31 shows
// section 2's prior text and 2099-01-01 the new one. A feasibility opinion
// (an aged advisor) naming section 2 with earliest 2098-12-01 raises
// nothing; one with earliest 2099-06-01 raises effective_before_feasible
// on section 2 in /checks, without blocking.
func s20(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S20", Roster: 100, KeySpace: "S20", RootRule: (&Session{TextRef: textRef()}).deadlineMajority()})
	r.keep(ss)
	rule := ss.deadlineMajority()

	// Variants.
	tx, base := ss.option("package", rule, "", Edit{"/us/t1/s1", "The period is 50 days."}, Edit{"/us/t1/s2", "The fee is 10 dollars (simulated)."})
	ss.Accept(tx)
	tx, _ = ss.option("wide", rule, base, Edit{"/us/t1/s3", "Something else (simulated)."})
	ss.Refuse(tx, "variant_invalid", "a variant touching a node its base does not touch")
	tx, variant := ss.option("narrow", rule, base, Edit{"/us/t1/s1", "The period is 55 days."})
	ss.Accept(tx)
	want := []string{base, variant}
	sort.Strings(want)
	a := ss.Get("/contests/" + base)
	got := fmt.Sprint(Field(a.JSON, "options"))
	s.check("the valid variant is grouped with its base: /contests/{base} lists both", got == fmt.Sprint([]any{want[0], want[1]}), a, "options %s", got)

	// Estimates.
	ss.Branch("fiscal", "root", ss.Genesis, ss.AlwaysAllow())
	cf := ss.Amend("fiscal", ss.Genesis, Edit{"/us/t1/s3", "[[sunset:90]] $5000 is appropriated (simulated)."})
	fb := ss.Body(MR{Source: "fiscal", SourceHead: cf, TargetHead: ss.Genesis, Rule: rule})
	fb["fiscal"] = true
	ss.Accept(ss.Tx(1, "mr.open", fb))
	fmr := ObjectID(fb)
	estimate := func(extra map[string]any) map[string]any {
		e := map[string]any{"mr": fmr, "baseline": "current law", "by_year": years(2026, 10, 1000), "assumptions": "simulated uptake"}
		for k, v := range extra {
			e[k] = v
		}
		return onSubject("member", "mr", fmr, map[string]any{"estimate": e, "method": map[string]any{"inputs": []any{}}})
	}
	ss.Refuse(ss.Tx(5, "opinion.publish", estimate(nil)), "estimate_incomplete", "an estimate on an MR with a sunset and no if_permanent")
	ss.Accept(ss.Tx(5, "opinion.publish", estimate(map[string]any{"if_permanent": years(2026, 10, 1500)})))

	// The contest last: its merge moves the root's head, against which
	// the MRs above were opened.
	fallbackContest(s, ss, rule, 17, 34, 35, 4, 52, 34)
	s20Effective(s)
}

// s20Effective: the effective-date and feasibility parts (see s20).
func s20Effective(s *sc) {
	r := s.r
	ss := s.newSession(SessionOpts{Label: "S20 effective", KeySpace: "S20e"})
	r.keep(ss)
	adv := NewSigner(fmt.Sprintf("witan harness %s run %s S20 advisor", r.cfg.Seed, r.cfg.RunID))
	ss.Accept(ss.TxBy(adv, "key.register", map[string]any{"key": adv.Key}))
	ss.age(4)
	ss.Branch("draft", "root", ss.Genesis, ss.AlwaysAllow())
	c := ss.Amend("draft", ss.Genesis, Edit{"/us/t1/s1", "The period is 45 days."}, Edit{"/us/t1/s2", "[[effective:2099-01-01]] The period is 60 days."})
	mr := ss.Open(MR{Source: "draft", SourceHead: c, TargetHead: ss.Genesis, Rule: ss.Majority(RootNotice)})
	feas := func(earliest string) map[string]any {
		return onSubject("advisor", "mr", mr, map[string]any{"feasibility": map[string]any{"mr": mr, "implementer": "A simulated agency",
			"nodes": []any{"/us/t1/s2"}, "earliest": earliest, "depends_on": []any{"a simulated system upgrade"}, "notes": "simulated"}})
	}
	effCheck := func() (*Answer, map[string]any) {
		a := ss.Get("/merge-requests/" + mr + "/checks")
		list, _ := Field(a.JSON, "checks", "checks").([]any)
		for _, x := range list {
			if Str(x, "name") == "effective_before_feasible" {
				m, _ := x.(map[string]any)
				return a, m
			}
		}
		return a, nil
	}
	ss.Accept(ss.TxBy(adv, "opinion.publish", feas("2098-12-01")))
	a, ch := effCheck()
	s.check("a feasibility date before the [[effective:]] marker raises nothing", Str(ch, "status") == "pass", a, "check %v", ch)
	ss.Accept(ss.TxBy(adv, "opinion.publish", feas("2099-06-01")))
	a, ch = effCheck()
	msgs, _ := Field(ch, "messages").([]any)
	s.check("a feasibility date later than the marker raises effective_before_feasible on section 2", Str(ch, "status") == "warn" && len(msgs) == 1 && Str(msgs[0], "nids", 0) == "/us/t1/s2", a, "check %v", ch)
	s.check("the warning does not block", Field(a.JSON, "checks", "blocked") == false, a, "blocked %v", Field(a.JSON, "checks", "blocked"))
	ss.Accept(ss.DetermineTx(0, mr, ss.Vote(mr, "approve", 0, 6), "approved"))
	a, ok := s.waitFinalityAll("/merge-requests/"+mr, ss)
	s.must("the merge is checkpointed on every node", ok, a, "finality %q", Str(a.JSON, "finality"))
	s.converge(ss)
	for _, c := range r.clients {
		for _, x := range []struct{ date, s1, s2 string }{
			{"2098-12-31", "The period is 45 days.", "The period is 30 days."},
			{"2099-01-01", "The period is 45 days.", "[[effective:2099-01-01]] The period is 60 days."},
		} {
			l := c.Get(r.ctx, q("/law?date="+x.date, ss.ID))
			s1, s2 := Str(l.JSON, "root", "children", 0, "children", 0, "text"), Str(l.JSON, "root", "children", 0, "children", 1, "text")
			s.check("/law?date="+x.date+": section 2 "+map[bool]string{true: "before", false: "from"}[x.date < "2099"]+" its [[effective:]] marker: "+c.URL,
				s1 == x.s1 && s2 == x.s2, l, "sections 1, 2: %q, %q", s1, s2)
		}
	}
}
