package harness

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"
)

// Research mode (30k §10, D46, D55, D64, D65): sessions of programmed
// voters that differ only in their rules, with a declared preference
// model, a turnout model, constituent panels with a tracking report, a
// hypothetical second chamber and presentment, a sensitivity analysis,
// and replication.json. Everything it writes describes the programmed
// voters and the software, never real legislators (OQ-25), and is
// labelled hypothetical. The House side runs on the node, over
// /oth/v0 like every scenario; the second chamber, presentment and the
// sensitivity re-runs are computed by the harness (bicameralism stays
// outside the protocol core).

// ResearchNotice heads every research output.
const ResearchNotice = "HYPOTHETICAL. Results of programmed, synthetic voters under a declared preference model; they describe the model and the software, not real legislators, constituents or institutions. Not for use in real elections or governance."

// Bloc is a voting bloc of the preference model: its share of each
// chamber, its support (percent approving) per topic, and its turnout
// model.
type Bloc struct {
	ID           string         `json:"id"`
	SharePercent int            `json:"share_percent"`
	Support      map[string]int `json:"support_percent"`
	// AbstainPercent: present and abstaining ("declared conflict");
	// MissPercent: absent, casting nothing ("absent: travel or illness").
	AbstainPercent int `json:"abstain_percent"`
	MissPercent    int `json:"miss_percent"`
}

// PreferenceModel is the published model; its hash is recorded.
type PreferenceModel struct {
	Notice  string   `json:"notice"`
	Blocs   []Bloc   `json:"blocs"`
	Topics  []string `json:"topics"`
	House   int      `json:"house_size"`
	Senate  int      `json:"second_chamber_size"`
	Cloture [2]int   `json:"second_chamber_debate_closing"` // num, den of the chamber
	// Executive is the modeled executive's support per topic: it signs
	// when its support is at least 50, else vetoes.
	Executive map[string]int `json:"executive_support_percent"`
	// Panels: each House member's district panel approves a topic with
	// the support of the member's bloc shifted by PanelShift points
	// (declared, hashed with the model).
	PanelShift int `json:"panel_shift_points"`
}

// DefaultModel is the built-in model: three blocs, four topics.
func DefaultModel() PreferenceModel {
	return PreferenceModel{Notice: ResearchNotice, House: 30, Senate: 10, Cloture: [2]int{3, 5}, PanelShift: -15,
		Topics: []string{"transit", "water", "schools", "parks"},
		Blocs: []Bloc{
			{ID: "A", SharePercent: 45, Support: map[string]int{"transit": 95, "water": 80, "schools": 40, "parks": 60}, AbstainPercent: 5, MissPercent: 5},
			{ID: "B", SharePercent: 35, Support: map[string]int{"transit": 10, "water": 70, "schools": 90, "parks": 50}, AbstainPercent: 5, MissPercent: 10},
			{ID: "C", SharePercent: 20, Support: map[string]int{"transit": 60, "water": 30, "schools": 60, "parks": 90}, AbstainPercent: 10, MissPercent: 10},
		},
		Executive: map[string]int{"transit": 80, "water": 60, "schools": 30, "parks": 70}}
}

// RuleSets are the rule sets research sessions are assigned.
var RuleSets = []string{"majority", "two-thirds"}

// Replication is replication.json.
type Replication struct {
	Notice         string            `json:"notice"`
	HarnessVersion string            `json:"harness_version"`
	Seed           string            `json:"seed"`
	RunID          string            `json:"run_id"`
	ModelHash      string            `json:"preference_model_hash"`
	Model          PreferenceModel   `json:"preference_model"`
	RuleAssignment map[string]string `json:"rule_assignment"` // session label → rule set
	FinalLogRoots  map[string]string `json:"final_log_roots"` // session label → RFC 9162 root of the node's log
	Sessions       map[string]string `json:"sessions"`        // session label → session id
}

// ResearchReport is what a research run shows.
type ResearchReport struct {
	Notice      string            `json:"notice"`
	Replication Replication       `json:"replication"`
	Outcomes    []ResearchOutcome `json:"outcomes"`
	Turnout     []TurnoutLine     `json:"turnout"`
	Tracking    []TrackingLine    `json:"panel_tracking"`
	Sensitivity []SensitivityFlip `json:"sensitivity_flips"`
	Checks      []Check           `json:"checks"`
	Failed      bool              `json:"failed"`
}

// ResearchOutcome is one MR under one rule set: the House (on the node),
// then the hypothetical second chamber and presentment.
type ResearchOutcome struct {
	Session     string `json:"session"`
	RuleSet     string `json:"rule_set"`
	Topic       string `json:"topic"`
	MR          string `json:"mr"`
	House       string `json:"house"` // approved, rejected, pending (on the node)
	Approve     int    `json:"house_approve"`
	Reject      int    `json:"house_reject"`
	SecondCh    string `json:"second_chamber"` // passed, failed, debate_not_closed, not_reached
	Presentment string `json:"presentment"`    // signed, vetoed, overridden, not_reached
}

// TurnoutLine explains who did not vote and why, per bloc.
type TurnoutLine struct {
	Bloc      string `json:"bloc"`
	Cast      int    `json:"cast"`
	Abstained int    `json:"abstained"`
	Missed    int    `json:"missed"`
	Why       string `json:"why"`
}

// TrackingLine is how closely a member's votes track their panel.
type TrackingLine struct {
	Member  int    `json:"member"`
	Bloc    string `json:"bloc"`
	Matches int    `json:"matches"`
	Votes   int    `json:"votes"`
}

// SensitivityFlip is an outcome that changes when a bloc is 10 % larger
// or smaller (chamber size fixed).
type SensitivityFlip struct {
	Bloc     string `json:"bloc"`
	Change   string `json:"change"` // +10% or -10%
	RuleSet  string `json:"rule_set"`
	Topic    string `json:"topic"`
	Baseline string `json:"baseline"`
	Varied   string `json:"varied"`
}

// assign gives each of n seats a bloc: bloc sizes by share (largest
// remainder), seats shuffled by seed.
func (m PreferenceModel) assign(r *run, n int, shares []int, purpose string) []int {
	sizes := make([]int, len(shares))
	total, sum := 0, 0
	for _, s := range shares {
		sum += s
	}
	type rem struct{ i, r int }
	var rs []rem
	for i, s := range shares {
		sizes[i] = n * s / sum
		total += sizes[i]
		rs = append(rs, rem{i, n * s % sum})
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].r > rs[b].r })
	for k := 0; total < n; k++ {
		sizes[rs[k%len(rs)].i]++
		total++
	}
	seats := make([]int, 0, n)
	for b, s := range sizes {
		for j := 0; j < s; j++ {
			seats = append(seats, b)
		}
	}
	p := r.perm(purpose, n)
	out := make([]int, n)
	for i, s := range p {
		out[s] = seats[i]
	}
	return out
}

// choice is a programmed voter's act on a topic: "approve", "reject",
// "abstain" (present) or "" (missed).
func (r *run) choice(b Bloc, topic string, chamber string, member int) string {
	t := r.draw("turnout "+chamber+" "+topic, member)
	switch {
	case t < b.MissPercent:
		return ""
	case t < b.MissPercent+b.AbstainPercent:
		return "abstain"
	}
	if r.draw("choice "+chamber+" "+topic, member) < b.Support[topic] {
		return "approve"
	}
	return "reject"
}

// houseOutcome evaluates a rule set over counts, as §7 words
// threshold_vote on the electorate with quorum 1/2, on_threshold:
// approved when A·den cmp num·N and (A+R+B)·2 ≥ N; rejected when
// (N−R)·den cmp num·N fails; else pending.
func houseOutcome(rule string, n, a, rj, ab int) string {
	num, den, gte := 1, 2, false
	if rule == "two-thirds" {
		num, den, gte = 2, 3, true
	}
	cmp := func(x, y int) bool {
		if gte {
			return x >= y
		}
		return x > y
	}
	switch {
	case cmp(a*den, num*n) && (a+rj+ab)*2 >= n:
		return "approved"
	case !cmp((n-rj)*den, num*n):
		return "rejected"
	}
	return "pending"
}

// ResearchConfig shapes a research run.
type ResearchConfig struct {
	Node  string
	Seed  string
	RunID string
	Model *PreferenceModel
	Log   io.Writer
}

// Research runs one session per rule set on the node with the same
// programmed voters and MRs, and computes the rest.
func Research(ctx context.Context, rc ResearchConfig) (*ResearchReport, error) {
	if rc.Seed == "" {
		rc.Seed = "witan-research"
	}
	if rc.RunID == "" {
		rc.RunID = time.Now().UTC().Format("20060102T150405.000000000Z")
	}
	model := DefaultModel()
	if rc.Model != nil {
		model = *rc.Model
	}
	r := &run{cfg: Config{Nodes: []string{rc.Node}, Seed: rc.Seed, RunID: rc.RunID, Roster: model.House,
		ConvergeTimeout: 60 * time.Second, FinalityTimeout: 60 * time.Second, Log: rc.Log}, ctx: ctx}
	c := NewClient(rc.Node)
	a := c.Get(ctx, "/.well-known/oth")
	if !a.OK() {
		return nil, fmt.Errorf("harness: %s: capability document: %s", rc.Node, a)
	}
	r.clients, r.caps = []*Client{c}, []map[string]any{a.JSON}
	r.rep = &Report{Nodes: []NodeInfo{{URL: c.URL, Consistency: Str(a.JSON, "consistency")}}}
	out := &ResearchReport{Notice: ResearchNotice}
	rep := Replication{Notice: ResearchNotice, HarnessVersion: Version, Seed: rc.Seed, RunID: rc.RunID, Model: model,
		ModelHash: ObjectID(modelObject(model)), RuleAssignment: map[string]string{}, FinalLogRoots: map[string]string{}, Sessions: map[string]string{}}
	// Rule sets assigned to session labels by seed.
	order := r.perm("rule assignment", len(RuleSets))
	shares := make([]int, len(model.Blocs))
	for i, b := range model.Blocs {
		shares[i] = b.SharePercent
	}
	houseBloc := model.assign(r, model.House, shares, "house seats")
	e := &Entry{ID: "research", Checks: []Check{}}
	s := &sc{r: r, e: e}
	for i, k := range order {
		label := fmt.Sprintf("research session %d", i+1)
		rule := RuleSets[k]
		rep.RuleAssignment[label] = rule
		func() {
			defer func() {
				if v := recover(); v != nil {
					if _, ok := v.(abort); !ok {
						s.check("no harness panic", false, nil, "%v", v)
					}
				}
			}()
			researchSession(s, &model, label, rule, houseBloc, &rep, out)
		}()
	}
	out.Replication = rep
	// Turnout model and panel tracking (the same voters in every session).
	for bi, b := range model.Blocs {
		var tl TurnoutLine
		tl.Bloc = b.ID
		for m, mb := range houseBloc {
			if mb != bi {
				continue
			}
			for _, t := range model.Topics {
				switch r.choice(b, t, "house", m) {
				case "":
					tl.Missed++
				case "abstain":
					tl.Abstained++
				default:
					tl.Cast++
				}
			}
		}
		tl.Why = fmt.Sprintf("programmed: %d %% of this bloc's acts are absences (travel, illness), %d %% abstentions (declared conflicts)", b.MissPercent, b.AbstainPercent)
		out.Turnout = append(out.Turnout, tl)
	}
	for m, bi := range houseBloc {
		b := model.Blocs[bi]
		tl := TrackingLine{Member: m, Bloc: b.ID}
		for _, t := range model.Topics {
			ch := r.choice(b, t, "house", m)
			if ch != "approve" && ch != "reject" {
				continue
			}
			tl.Votes++
			panelApproves := b.Support[t]+model.PanelShift >= 50
			if (ch == "approve") == panelApproves {
				tl.Matches++
			}
		}
		out.Tracking = append(out.Tracking, tl)
	}
	// Sensitivity: each bloc 10 % larger and smaller, chamber size fixed.
	base := map[string]string{}
	for _, rule := range RuleSets {
		for _, t := range model.Topics {
			base[rule+"|"+t] = r.houseRun(&model, shares, rule, t)
		}
	}
	for bi, b := range model.Blocs {
		for _, d := range []int{10, -10} {
			v := append([]int(nil), shares...)
			v[bi] = shares[bi] * (100 + d) / 100
			for _, rule := range RuleSets {
				for _, t := range model.Topics {
					got := r.houseRun(&model, v, rule, t)
					if got != base[rule+"|"+t] {
						out.Sensitivity = append(out.Sensitivity, SensitivityFlip{Bloc: b.ID, Change: fmt.Sprintf("%+d%%", d), RuleSet: rule, Topic: t, Baseline: base[rule+"|"+t], Varied: got})
					}
				}
			}
		}
	}
	out.Checks = e.Checks
	for _, ch := range e.Checks {
		if !ch.OK {
			out.Failed = true
		}
	}
	return out, nil
}

// houseRun evaluates a topic under rule with bloc shares (the seats
// re-assigned by seed, the House size fixed), by the harness alone.
func (r *run) houseRun(m *PreferenceModel, shares []int, rule string, topic string) string {
	seats := m.assign(r, m.House, shares, "house seats")
	a, rj, ab := 0, 0, 0
	for mem, bi := range seats {
		switch r.choice(m.Blocs[bi], topic, "house", mem) {
		case "approve":
			a++
		case "reject":
			rj++
		case "abstain":
			ab++
		}
	}
	return houseOutcome(rule, m.House, a, rj, ab)
}

func modelObject(m PreferenceModel) map[string]any {
	blocs := []any{}
	for _, b := range m.Blocs {
		sup := map[string]any{}
		for k, v := range b.Support {
			sup[k] = v
		}
		blocs = append(blocs, map[string]any{"id": b.ID, "share_percent": b.SharePercent, "support_percent": sup,
			"abstain_percent": b.AbstainPercent, "miss_percent": b.MissPercent})
	}
	topics := []any{}
	for _, t := range m.Topics {
		topics = append(topics, t)
	}
	ex := map[string]any{}
	for k, v := range m.Executive {
		ex[k] = v
	}
	return map[string]any{"notice": m.Notice, "blocs": blocs, "topics": topics, "house_size": m.House,
		"second_chamber_size": m.Senate, "second_chamber_debate_closing": []any{m.Cloture[0], m.Cloture[1]},
		"executive_support_percent": ex, "panel_shift_points": m.PanelShift}
}

// researchSession runs one session on the node: one MR per topic (each
// editing its own section) into the root under rule, the programmed
// House voters' ballots in seat order, a determination when decided;
// then it checks the node's status against the harness's evaluation and
// computes the second chamber and presentment.
func researchSession(s *sc, m *PreferenceModel, label, rule string, seats []int, rep *Replication, out *ResearchReport) {
	r := s.r
	var rootRule func(ss *Session) map[string]any
	if rule == "two-thirds" {
		rootRule = func(ss *Session) map[string]any {
			return ss.ref("threshold_vote", map[string]any{"num": 2, "den": 3, "cmp": "gte", "basis": "electorate", "quorum_num": 1, "quorum_den": 2, "closing": "on_threshold"}, RootNotice)
		}
	} else {
		rootRule = func(ss *Session) map[string]any { return ss.Majority(RootNotice) }
	}
	tmp := &Session{TextRef: textRef()}
	ss := s.newSession(SessionOpts{Label: label, Roster: m.House, Sections: len(m.Topics), RootRule: rootRule(tmp)})
	rep.Sessions[label] = ss.ID
	ruleRef := rootRule(ss)
	// One branch per topic, then the MRs.
	type plan struct {
		topic, mr string
		ballots   []string
		a, rj, ab int
	}
	var plans []*plan
	for ti, t := range m.Topics {
		name := "topic-" + t
		ss.Branch(name, "root", ss.Genesis, ss.AlwaysAllow())
		c := ss.Amend(name, ss.Genesis, Edit{fmt.Sprintf("/us/t1/s%d", ti+1), fmt.Sprintf("The %s programme runs for 45 days (simulated).", t)})
		mr := ss.Open(MR{Source: name, SourceHead: c, TargetHead: ss.Genesis, Rule: ruleRef, Summary: "Simulated: " + t})
		plans = append(plans, &plan{topic: t, mr: mr})
	}
	for _, p := range plans {
		for mem, bi := range seats {
			ch := r.choice(m.Blocs[bi], p.topic, "house", mem)
			if ch == "" {
				continue
			}
			p.ballots = append(p.ballots, ss.Accept(ss.BallotTx(mem, p.mr, ch, "")))
			switch ch {
			case "approve":
				p.a++
			case "reject":
				p.rj++
			default:
				p.ab++
			}
		}
		want := houseOutcome(rule, m.House, p.a, p.rj, p.ab)
		if want != "pending" {
			ss.Accept(ss.DetermineTx(0, p.mr, p.ballots, want))
		}
		a, st := ss.Status(p.mr)
		wantStatus := map[string]string{"approved": "merged", "rejected": "rejected", "pending": "open"}[want]
		s.check(fmt.Sprintf("%s, %s: the node's status is the harness's evaluation (%s: A=%d R=%d B=%d of %d)", label, p.topic, want, p.a, p.rj, p.ab, m.House),
			st == wantStatus, a, "status %q, want %q", st, wantStatus)
		o := ResearchOutcome{Session: label, RuleSet: rule, Topic: p.topic, MR: p.mr, House: want, Approve: p.a, Reject: p.rj,
			SecondCh: "not_reached", Presentment: "not_reached"}
		if want == "approved" {
			o.SecondCh, o.Presentment = r.bicameral(m, p.topic, p.a)
		}
		out.Outcomes = append(out.Outcomes, o)
	}
	// The final log root: the harness's own RFC 9162 root of the node's
	// log of the session, in the node's order.
	ids, ok := s.readLog(ss.c, ss)
	if ok {
		root, err := MerkleRoot(ids)
		if err == nil {
			rep.FinalLogRoots[label] = root
		}
	}
}

// bicameral computes the hypothetical second chamber and presentment for
// a topic the House approved with houseYes approvals: the chamber's
// programmed voters (blocs in the same shares) must close debate (yes ≥
// num/den of the chamber) and pass by a majority of votes cast; the
// modeled executive signs when its support is at least 50, else vetoes;
// a veto is overridden when at least two thirds of each chamber approve.
func (r *run) bicameral(m *PreferenceModel, topic string, houseYes int) (string, string) {
	shares := make([]int, len(m.Blocs))
	for i, b := range m.Blocs {
		shares[i] = b.SharePercent
	}
	seats := m.assign(r, m.Senate, shares, "second chamber seats")
	yes, no := 0, 0
	for mem, bi := range seats {
		switch r.choice(m.Blocs[bi], topic, "second chamber", mem) {
		case "approve":
			yes++
		case "reject":
			no++
		}
	}
	if yes*m.Cloture[1] < m.Cloture[0]*m.Senate {
		return "debate_not_closed", "not_reached"
	}
	if yes <= no {
		return "failed", "not_reached"
	}
	if m.Executive[topic] >= 50 {
		return "passed", "signed"
	}
	if houseYes*3 >= 2*m.House && yes*3 >= 2*m.Senate {
		return "passed", "overridden"
	}
	return "passed", "vetoed"
}

// WriteSummary writes the research report for people.
func (o *ResearchReport) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", ResearchNotice)
	fmt.Fprintf(w, "seed %s, run %s, preference model %s\n", o.Replication.Seed, o.Replication.RunID, o.Replication.ModelHash)
	for _, l := range sortedLabels(o.Replication.RuleAssignment) {
		fmt.Fprintf(w, "  %s: %s, final log root %s\n", l, o.Replication.RuleAssignment[l], o.Replication.FinalLogRoots[l])
	}
	fmt.Fprintln(w, "\noutcomes (House on the node; second chamber and presentment hypothetical):")
	for _, x := range o.Outcomes {
		fmt.Fprintf(w, "  %-10s %-8s House %-8s (%d–%d)  second chamber %-17s presentment %s\n", x.RuleSet, x.Topic, x.House, x.Approve, x.Reject, x.SecondCh, x.Presentment)
	}
	fmt.Fprintln(w, "\nturnout model:")
	for _, t := range o.Turnout {
		fmt.Fprintf(w, "  bloc %s: %d cast, %d abstained, %d missed — %s\n", t.Bloc, t.Cast, t.Abstained, t.Missed, t.Why)
	}
	fmt.Fprintln(w, "\nsensitivity (each bloc ±10 %, House size fixed), outcomes that flip:")
	if len(o.Sensitivity) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, f := range o.Sensitivity {
		fmt.Fprintf(w, "  bloc %s %s: %s %s: %s → %s\n", f.Bloc, f.Change, f.RuleSet, f.Topic, f.Baseline, f.Varied)
	}
	matches, votes := 0, 0
	for _, t := range o.Tracking {
		matches += t.Matches
		votes += t.Votes
	}
	fmt.Fprintf(w, "\npanel tracking: %d of %d votes match the member's district panel\n", matches, votes)
	for _, c := range o.Checks {
		if !c.OK {
			fmt.Fprintf(w, "FAILED %s: %s\n", c.Check, c.Detail)
		}
	}
}

func sortedLabels(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Replicate re-runs a research session from its replication.json on a
// node: the same seed, run id and preference model give the same
// envelopes, so a node that holds none of them yet logs them in the same
// order and the final log roots are equal byte for byte.
func Replicate(ctx context.Context, node string, rep Replication, log io.Writer) (*ResearchReport, error) {
	if h := ObjectID(modelObject(rep.Model)); h != rep.ModelHash {
		return nil, fmt.Errorf("harness: replication.json: the preference model hashes to %s, not %s", h, rep.ModelHash)
	}
	if rep.HarnessVersion != Version {
		return nil, fmt.Errorf("harness: replication.json was written by harness %s, this is %s", rep.HarnessVersion, Version)
	}
	m := rep.Model
	return Research(ctx, ResearchConfig{Node: node, Seed: rep.Seed, RunID: rep.RunID, Model: &m, Log: log})
}
