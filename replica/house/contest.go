package house

// This file holds contests (30k §7, D47, D68, D71, D77): contest.open,
// contest.rank and contest.determine, and variants (MRs with variant_of),
// which group themselves with their base. Shared files reach it through
// small hooks marked "contest hook".
//
// A contest's id is the tx id of its contest.open; the contest a variant
// makes for a base that is in none has the base MR's id, so that
// concurrent variants of one base join one contest (their options are a
// grow-only set). An MR in two contests at once (concurrent groupings)
// is flagged contest_conflict and neither contest can be determined.

import (
	"bytes"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Contest statuses and flags.
const (
	ContestOpen         = "open"
	ContestDecided      = "decided"
	FlagContestConflict = "contest_conflict"
)

// contestReg is a contest as one causal past sees it.
type contestReg struct {
	options    []dag.ID // sorted
	status     string
	reason     string
	dets       []int32 // maximal decisive determinations
	executedBy int32
}

// contestInfo is what the House keeps of a contest whatever the causal
// past: its rule, electorate and deadline (fixed by its first option) and
// its rankings.
type contestInfo struct {
	id       dag.ID
	rule     *rules.Rule
	el       *rules.Electorate
	deadline time.Time
	ranks    []int32 // indexes in contestState.ranks, admission order
}

type rankRec struct {
	ent     int32
	author  dag.Key
	body    rules.RankBody
	ignored bool // cast after the contest was decided in its causal past
}

type contestDet struct {
	tx      dag.ID
	gov     int32
	body    *ContestDetermination
	result  rules.ContestResult
	options []dag.ID
	// emergency: the approved option is a designated emergency (D49),
	// judged at admission (contestEmergency).
	emergency bool
}

// contestState is the House's contest bookkeeping.
type contestState struct {
	contests map[dag.ID]*contestInfo
	ranks    []rankRec
	rankIdx  map[dag.ID]int32
	dets     map[dag.ID]*contestDet
	// byGov: the contest a governance entry opens, extends (a variant's
	// mr.open) or determines.
	byGov map[int32]dag.ID
	// openOpts: the options each contest.open lists.
	openOpts map[int32][]dag.ID
	// expMemo: derived expiry changes by (emergency merge, head).
	expMemo map[mergeKey]mergeResult
	// maxWit is the largest witnessed time of any admitted entry (the
	// smallest tx id among ties): what the global view has witnessed.
	maxWit   int64
	maxWitTx dag.ID
	// the global view with due expiries, memoised.
	globalIn  *govState
	globalWit int64
	globalOut *govState
	// live: each live contest's result over every ranking admitted, with
	// no clock (liveResult).
	live map[dag.ID]liveMemo
}

// liveMemo is a live contest's result and what it was computed from: the
// number of governance entries admitted (contest.open and a variant's
// mr.open change the options, an mr.open the options' facts, a
// contest.determine the status) and of the contest's rankings (each
// ranking's ignored flag is fixed at its admission). Nothing else the
// result reads can change, so equal counts give the same result.
type liveMemo struct {
	gov, ranks int
	res        rules.ContestResult
}

// contestAdm is what admission carries for contests (embedded in
// admission: a contest hook).
type contestAdm struct {
	wit            int64 // witnessed time at the entry (docs/deviations.md)
	contest        *contestInfo
	contestOptions []dag.ID
	contestOf      dag.ID // a variant: the contest it joins
	rank           *rankRec
	cdet           *contestDet
}

// witnessed returns the entry's witnessed time in Unix seconds.
func (v *admission) witnessed() int64 { return v.wit }

func (h *House) cs() *contestState {
	if h.ct == nil {
		h.ct = &contestState{contests: map[dag.ID]*contestInfo{}, rankIdx: map[dag.ID]int32{},
			dets: map[dag.ID]*contestDet{}, byGov: map[int32]dag.ID{}}
	}
	return h.ct
}

// ContestDetermination is the body of contest.determine (witan's reading;
// §7 names the type only):
//
//	{"contest":"sha256:...","rankings":["sha256:<rank>",...],"outcome":"approved|rejected|pending","winner":"sha256:<mr>"|"status_quo"|null}
//
// winner is required with approved (the approved MR) and may be given
// otherwise; every node re-runs the method over exactly the listed
// rankings.
type ContestDetermination struct {
	Contest  dag.ID
	Rankings []dag.ID
	Outcome  rules.Outcome
	Winner   string // "" for null
}

// DecodeContestDetermination decodes the body of contest.determine.
func DecodeContestDetermination(b []byte) (*ContestDetermination, error) {
	var w struct {
		Contest  *string   `json:"contest"`
		Rankings *[]string `json:"rankings"`
		Outcome  *string   `json:"outcome"`
		Winner   *string   `json:"winner"`
	}
	if err := strict(b, &w, "contest.determine"); err != nil {
		return nil, err
	}
	if w.Rankings == nil || w.Outcome == nil {
		return nil, schemaf("contest.determine: contest, rankings and outcome are required")
	}
	d := &ContestDetermination{Outcome: rules.Outcome(*w.Outcome)}
	var err error
	if d.Contest, err = parseID(w.Contest, "contest", true); err != nil {
		return nil, err
	}
	switch d.Outcome {
	case rules.Approved, rules.Rejected, rules.Pending:
	default:
		return nil, schemaf("contest.determine: outcome %q is not approved, rejected or pending", dag.Trunc(*w.Outcome))
	}
	if w.Winner != nil {
		d.Winner = *w.Winner
		if d.Winner != rules.StatusQuo {
			if _, err := dag.ParseID(d.Winner); err != nil {
				return nil, schemaf("contest.determine: winner: %v", err)
			}
		}
	}
	if d.Outcome == rules.Approved && (d.Winner == "" || d.Winner == rules.StatusQuo) {
		return nil, schemaf("contest.determine: an approved outcome names the approved MR as winner")
	}
	seen := make(map[dag.ID]struct{}, len(*w.Rankings))
	for i, s := range *w.Rankings {
		id, err := dag.ParseID(s)
		if err != nil {
			return nil, schemaf("contest.determine: rankings[%d]: %v", i, err)
		}
		if _, dup := seen[id]; dup {
			return nil, schemaf("contest.determine: ranking %s listed twice", id)
		}
		seen[id] = struct{}{}
		d.Rankings = append(d.Rankings, id)
	}
	return d, nil
}

func contestInvalid(format string, args ...any) error {
	return dag.Errorf(dag.CodeContestInvalid, "house: "+format, args...)
}

func variantInvalid(format string, args ...any) error {
	return dag.Errorf(dag.CodeVariantInvalid, "house: "+format, args...)
}

// touched returns the nids a merge MR's derived patch touches: the
// structural diff between its open-time target snapshot and the merged
// snapshot.
func (h *House) touched(info *mrInfo) ([]string, error) {
	if info.patch == nil {
		return nil, nil
	}
	t, err := h.tree(info.body.Target.Head)
	if err != nil {
		return nil, err
	}
	return statute.Compare(t, info.patch.Result).Touched(), nil
}

// sameFooting checks what every option of one contest must share: a merge
// MR, open and not superseded in st, on one target branch, under one rule
// and one electorate.
func (v *admission) sameFooting(first, o *mrInfo) string {
	reg := v.st.mrs[o.id]
	switch {
	case reg == nil:
		return "is not open in the causal past"
	case reg.status != StatusOpen:
		return "is " + reg.status + ", not open"
	case reg.superseded:
		return "is superseded"
	case o.body.Kind != "merge":
		return "is a governance MR"
	case o.body.Target.Branch != first.body.Target.Branch:
		return "targets another branch"
	case !bytes.Equal(ruleBytes(o.body.Rule), ruleBytes(first.body.Rule)):
		return "is under another rule"
	case o.body.Group != first.body.Group || o.body.Snapshot != first.body.Snapshot:
		return "has another electorate"
	}
	return ""
}

// contestOpen judges contest.open: a roster member groups 2–9 open merge
// MRs on one branch, under one rule that is not capital_vote, with one
// electorate, whose touched nodes overlap, none already in a contest
// (contest_invalid); a ranking deadline at least 72 hours of witnessed
// time after the open (deadline_too_short, D74).
func (v *admission) contestOpen() error {
	h, st := v.h, v.st
	if roster := st.roster(h); roster == nil || !roster.isMember(v.env.Author) {
		return notAuth("%s is not a roster member", v.env.Author)
	}
	body, err := rules.DecodeContestOpen(v.env.Body)
	if err != nil {
		return err
	}
	var infos []*mrInfo
	for _, o := range body.Options {
		info := h.mrs[o]
		if info == nil || st.mrs[o] == nil {
			return contestInvalid("option %s is not an MR in the causal past", o)
		}
		infos = append(infos, info)
	}
	for _, info := range infos {
		if why := v.sameFooting(infos[0], info); why != "" {
			return contestInvalid("option %s %s", info.id, why)
		}
		if len(st.inContest[info.id]) > 0 {
			return contestInvalid("option %s is already in contest %s", info.id, st.inContest[info.id][0])
		}
	}
	if infos[0].rule.Kind() == rules.KindCapitalVote {
		return contestInvalid("a contest may not use capital_vote")
	}
	// Touched nodes overlap: the options form one connected group.
	sets := make([][]string, len(infos))
	for i, info := range infos {
		if sets[i], err = h.touched(info); err != nil {
			return err
		}
	}
	reached := []int{0}
	in := make([]bool, len(infos))
	in[0] = true
	for k := 0; k < len(reached); k++ {
		for j := range infos {
			if !in[j] && overlap(sets[reached[k]], sets[j]) {
				in[j] = true
				reached = append(reached, j)
			}
		}
	}
	if len(reached) != len(infos) {
		return contestInvalid("the options' touched nodes do not overlap")
	}
	wit := v.witnessed()
	if !body.Deadline.IsZero() && body.Deadline.Unix()-wit < rules.MinWindow {
		return dag.Errorf(dag.CodeDeadlineTooShort, "house: ranking deadline %s is less than 72 hours after the contest opened (witnessed time %s, D74)",
			body.Deadline.Format(time.RFC3339), time.Unix(wit, 0).UTC().Format(time.RFC3339))
	}
	if err := infos[0].rule.CheckWindow(time.Unix(wit, 0).UTC()); err != nil {
		return err
	}
	v.contest = &contestInfo{id: v.id, rule: infos[0].rule, el: infos[0].el, deadline: body.Deadline}
	v.contestOptions = sortedIDs(slices.Clone(body.Options))
	return nil
}

func overlap(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			return true
		}
	}
	return false
}

// checkVariant judges an MR with variant_of (D68): its base is an open
// merge MR in the causal past that is not itself a variant, on the same
// branch, under the same rule and electorate; the variant changes only
// nodes the base's derived patch touches; and the contest it joins has
// room (9 options). Else variant_invalid.
func (v *admission) checkVariant(info *mrInfo) error {
	h, st := v.h, v.st
	base := info.body.VariantOf
	bi := h.mrs[base]
	if bi == nil || st.mrs[base] == nil {
		return variantInvalid("base %s is not an MR in the causal past", base)
	}
	if bi.body.VariantOf.Valid() {
		return variantInvalid("base %s is itself a variant", base)
	}
	if info.body.Kind != "merge" {
		return variantInvalid("a governance MR cannot be a variant")
	}
	if why := v.sameFooting(bi, bi); why != "" {
		return variantInvalid("base %s %s", base, why)
	}
	if why := v.sameFooting(bi, info); why != "" && why != "is not open in the causal past" {
		return variantInvalid("the variant %s", why)
	}
	bt, err := h.touched(bi)
	if err != nil {
		return err
	}
	vt, err := h.touched(info)
	if err != nil {
		return err
	}
	for _, nid := range vt {
		if _, ok := slices.BinarySearch(bt, nid); !ok {
			return variantInvalid("the variant changes %s, which its base's patch does not touch", nid)
		}
	}
	cid := base
	switch cs := st.inContest[base]; len(cs) {
	case 0:
	case 1:
		cid = cs[0]
		if c := st.contests[cid]; c != nil && (c.status != ContestOpen || len(c.options) >= rules.MaxContestOptions) {
			return variantInvalid("the base's contest %s is decided or already has 9 options", cid)
		}
	default:
		return variantInvalid("the base is in two contests (%s)", FlagContestConflict)
	}
	// D74: the ranking deadline must be 72 hours after the later of the
	// contest's open and this variant's open (witnessed time).
	if ci := h.cs().contests[cid]; ci != nil && !ci.deadline.IsZero() && ci.deadline.Unix()-v.witnessed() < rules.MinWindow {
		return dag.Errorf(dag.CodeDeadlineTooShort, "house: the variant joins contest %s, whose ranking deadline %s is less than 72 hours after the variant's open (witnessed time %s, D74)",
			cid, ci.deadline.Format(time.RFC3339), time.Unix(v.witnessed(), 0).UTC().Format(time.RFC3339))
	}
	v.contestOf = cid
	return nil
}

// contestRank judges contest.rank: the contest is in the causal past, the
// author is in its electorate, every ranked option is one of its options
// there, and a superseded ranking is the same member's ranking on the same
// contest in the causal past (else ballot_invalid).
func (v *admission) contestRank() error {
	h, st := v.h, v.st
	body, err := rules.DecodeRankBody(v.env.Body)
	if err != nil {
		return err
	}
	reg := st.contests[body.Contest]
	ci := h.cs().contests[body.Contest]
	if reg == nil || ci == nil {
		return dag.Errorf(dag.CodeBallotInvalid, "house: contest %s is not in the ranking's causal past", body.Contest)
	}
	if !ci.el.Has(v.env.Author) {
		return dag.Errorf(dag.CodeBallotInvalid, "house: %s is not in the contest's electorate", v.env.Author)
	}
	for _, o := range body.Ranking {
		if o.Valid() {
			if _, ok := slices.BinarySearchFunc(reg.options, o, dag.ID.Compare); !ok {
				return dag.Errorf(dag.CodeBallotInvalid, "house: %s is not an option of contest %s in the ranking's causal past", o, body.Contest)
			}
		}
	}
	if s := body.Supersedes; s.Valid() {
		ri, ok := h.cs().rankIdx[s]
		if !ok || h.ct.ranks[ri].author != v.env.Author || h.ct.ranks[ri].body.Contest != body.Contest ||
			len(h.ancestorsMissing(v.parents, []int32{h.ct.ranks[ri].ent})) > 0 {
			return dag.Errorf(dag.CodeBallotInvalid, "house: superseded ranking %s is not the same member's ranking on this contest in the causal past", s)
		}
	}
	v.rank = &rankRec{author: v.env.Author, body: body, ignored: reg.status != ContestOpen}
	return nil
}

// commitRank records an admitted ranking (a contest hook of judge).
func (v *admission) commitRank(ei int32) {
	cs := v.h.cs()
	r := *v.rank
	r.ent = ei
	ri := int32(len(cs.ranks))
	cs.ranks = append(cs.ranks, r)
	cs.rankIdx[v.id] = ri
	ci := cs.contests[r.body.Contest]
	ci.ranks = append(ci.ranks, ri)
}

// contestDetermine judges contest.determine: the contest is open and not
// conflicted in the causal past, every listed ranking is a ranking on it
// in the causal past, and re-running the method over exactly them gives
// the claimed outcome and winner.
func (v *admission) contestDetermine() error {
	h, st := v.h, v.st
	d, err := DecodeContestDetermination(v.env.Body)
	if err != nil {
		return err
	}
	if roster := st.roster(h); roster == nil || !roster.isMember(v.env.Author) {
		return notAuth("%s is not a roster member", v.env.Author)
	}
	reg, ci := st.contests[d.Contest], h.cs().contests[d.Contest]
	if reg == nil || ci == nil {
		return notAuth("contest %s is not in the determination's causal past", d.Contest)
	}
	if reg.status != ContestOpen {
		return notAuth("contest %s is already %s in the causal past", d.Contest, reg.status)
	}
	for _, o := range reg.options {
		if len(st.inContest[o]) > 1 {
			return notAuth("option %s is in two contests (%s)", o, FlagContestConflict)
		}
	}
	res, targets, err := h.evalContest(d, reg.options, ci, rules.ContestContext{})
	if err != nil {
		return err
	}
	if miss := h.ancestorsMissing(v.parents, targets); len(miss) > 0 {
		return dag.Errorf(dag.CodeBallotInvalid, "house: ranking %s is not in the determination's causal past", h.ents[miss[0]].id)
	}
	if res.IfClosed != d.Outcome || (d.Winner != "" && d.Winner != res.Winner) {
		return notAuth("determination says %s (winner %q); re-running ranked pairs over its %d rankings gives %s (winner %q)",
			d.Outcome, d.Winner, len(d.Rankings), res.IfClosed, res.Winner)
	}
	if err := v.checkContestFiscal(res); err != nil { // D53 (estimates.go)
		return err
	}
	v.cdet = &contestDet{tx: v.id, body: d, result: res, options: reg.options}
	if res.IfClosed == rules.Approved {
		if id, err := dag.ParseID(res.Winner); err == nil && h.mrs[id] != nil {
			v.cdet.emergency = v.contestEmergency(h.mrs[id])
		}
	}
	return nil
}

// contestEmergency judges D49's designation of an emergency MR that a
// contest approves. §7 ignores plain ballots on a grouped MR for its
// outcome, but designation is "independent of their choice" and only
// ballots carry emergency answers, so it is judged over every ballot on
// the MR in the determination's causal past (cast before or after the
// contest's open), folded as mr.determine folds its ballots (supersedes,
// equivocation, rotations in that past): designated when yes*3 >= 2*N.
// A fact of the causal past, so every replica judges it alike.
func (v *admission) contestEmergency(info *mrInfo) bool {
	h := v.h
	reg := v.st.mrs[info.id]
	if !info.facts.Emergency || reg == nil || len(info.cast) == 0 {
		return false
	}
	targets := make([]int32, len(info.cast))
	for i, ri := range info.cast {
		targets[i] = h.ballots.at(ri).ent
	}
	missing := h.ancestorsMissing(v.parents, targets) // sorted
	poll := rules.NewPoll(info.rule, h.electorateAt(info, reg), info.id)
	front := v.detFront()
	for _, ri := range info.cast {
		rec := h.ballots.at(ri)
		if _, out := slices.BinarySearch(missing, rec.ent); out || h.rotIgnoredAt(front, ri) {
			continue
		}
		_ = poll.Add(rules.Ballot{Tx: h.ents[rec.ent].id, Author: rec.author, BallotBody: rec.body})
	}
	return poll.Result(rules.Context{Facts: info.facts}).EmergencyDesignated
}

// evalContest re-runs the method over exactly the listed rankings.
func (h *House) evalContest(d *ContestDetermination, options []dag.ID, ci *contestInfo, ctx rules.ContestContext) (rules.ContestResult, []int32, error) {
	c, err := rules.NewContest(ci.rule, ci.el, ci.id, rules.ContestOpenBody{Options: options, Deadline: ci.deadline})
	if err != nil {
		return rules.ContestResult{}, nil, err
	}
	var targets []int32
	for _, tx := range d.Rankings {
		ri, ok := h.cs().rankIdx[tx]
		if !ok || h.ct.ranks[ri].body.Contest != d.Contest {
			return rules.ContestResult{}, nil, dag.Errorf(dag.CodeBallotInvalid, "house: %s is not a ranking on contest %s", tx, d.Contest)
		}
		r := &h.ct.ranks[ri]
		if err := c.Add(rules.Ranking{Tx: tx, Author: r.author, RankBody: r.body}); err != nil {
			return rules.ContestResult{}, nil, err
		}
		targets = append(targets, r.ent)
	}
	ctx.Facts = h.optionFacts(options)
	return c.Result(ctx), targets, nil
}

func (h *House) optionFacts(options []dag.ID) map[dag.ID]rules.Facts {
	f := make(map[dag.ID]rules.Facts, len(options))
	for _, o := range options {
		if info := h.mrs[o]; info != nil {
			f[o] = info.facts
		}
	}
	return f
}

// commitContest records a contest.open or contest.determine (a contest
// hook of commitStatic).
func (v *admission) commitContest(g int32) {
	cs := v.h.cs()
	switch {
	case v.contest != nil:
		if cs.contests[v.id] == nil {
			cs.contests[v.id] = v.contest
		}
		cs.byGov[g] = v.id
		cs.opts(g, v.contestOptions)
	case v.cdet != nil:
		v.cdet.gov = g
		cs.dets[v.id] = v.cdet
		cs.byGov[g] = v.cdet.body.Contest
	}
}

// optsByGov: the options a contest.open lists (kept beside byGov).
func (cs *contestState) opts(g int32, o []dag.ID) {
	if cs.openOpts == nil {
		cs.openOpts = map[int32][]dag.ID{}
	}
	cs.openOpts[g] = o
}

// commitVariant records the contest a variant's mr.open joins (a contest
// hook of commitStatic for mr.open).
func (v *admission) commitVariant(g int32) {
	if !v.contestOf.Valid() {
		return
	}
	cs := v.h.cs()
	cs.byGov[g] = v.contestOf
	if cs.contests[v.contestOf] == nil {
		bi := v.h.mrs[v.mr.body.VariantOf]
		cs.contests[v.contestOf] = &contestInfo{id: v.contestOf, rule: bi.rule, el: bi.el}
	}
}

// applyContest folds contest entry g (contest.open, contest.determine, or
// a variant's mr.open) into st: a contest hook of apply.
func (h *House) applyContest(st *govState, g int32, final map[dag.ID][]int32) {
	cs := h.cs()
	cid, ok := cs.byGov[g]
	if !ok {
		return
	}
	switch h.gd[g].typ {
	case dag.TxContestOpen:
		h.addOptions(st, cid, cs.openOpts[g])
	case dag.TxMROpen:
		info := h.mrs[h.gd[g].mr]
		h.addOptions(st, cid, []dag.ID{info.body.VariantOf, info.id})
	case dag.TxContestDetermine:
		d := cs.dets[h.ents[h.gov[g]].id]
		if d.body.Outcome == rules.Pending {
			return
		}
		old := st.contests[cid]
		if old == nil {
			return
		}
		r := *old
		r.dets = h.maximal(r.dets, g)
		st.contests[cid] = &r
		max := r.dets
		if final != nil {
			max = final[cid]
		}
		for _, x := range max {
			if cs.dets[h.ents[h.gov[x]].id].result.Winner != d.result.Winner || cs.dets[h.ents[h.gov[x]].id].body.Outcome != d.body.Outcome {
				if r.executedBy < 0 && r.status == ContestOpen {
					r.reason = FlagContradictory
				}
				return
			}
		}
		if r.executedBy >= 0 || r.status != ContestOpen || !slices.Contains(max, g) {
			return
		}
		r.executedBy, r.status, r.reason = g, ContestDecided, ""
		for _, dec := range d.result.Decisions {
			id, _ := dag.ParseID(dec.Option)
			mr := st.mrs[id]
			if mr == nil || mr.status != StatusOpen {
				continue
			}
			m := *mr
			st.mrs[id] = &m
			switch dec.Outcome {
			case rules.Approved:
				h.execute(st, &m, g, &detRec{tx: d.tx, body: &Determination{MR: id, Outcome: rules.Approved},
					result: rules.Result{EmergencyDesignated: d.emergency}}) // D49: schedules its expiry
			case rules.Rejected:
				m.executedBy, m.status, m.reason = g, StatusRejected, string(dec.Reason)
			}
		}
	}
}

func (h *House) addOptions(st *govState, cid dag.ID, opts []dag.ID) {
	r := &contestReg{status: ContestOpen, executedBy: -1}
	if old := st.contests[cid]; old != nil {
		*r = *old
	}
	r.options = sortedIDs(append(slices.Clone(r.options), opts...))
	st.contests[cid] = r
	for _, o := range opts {
		if !slices.Contains(st.inContest[o], cid) {
			st.inContest[o] = sortedIDs(append(slices.Clone(st.inContest[o]), cid))
		}
	}
}

// finalContests adds each contest's maximal decisive determinations over
// a from-scratch fold to final, keyed by contest id (a contest hook of
// fold; contest and MR ids never collide).
func (h *House) finalContests(order []int32, final map[dag.ID][]int32) {
	if h.ct == nil {
		return
	}
	for _, g := range order {
		d := h.ct.dets[h.ents[h.gov[g]].id]
		if d == nil || d.body.Outcome == rules.Pending {
			continue
		}
		final[d.body.Contest] = h.maximal(final[d.body.Contest], g)
	}
}

// ContestView is a contest as derived (GET /contests/{id}).
type ContestView struct {
	ID       dag.ID     `json:"id"`
	Options  []dag.ID   `json:"options"`
	Status   string     `json:"status"`
	Reason   string     `json:"reason"`
	Flags    []string   `json:"flags"`
	Deadline *time.Time `json:"deadline"`
	Rankings int        `json:"rankings"`
	// Determinations lists the contest's determinations, by tx id.
	Determinations []ContestDeterminationView `json:"determinations"`
	// Result is the executed determination's evaluation, or while none
	// is executed the live evaluation over every ranking admitted.
	Result rules.ContestResult `json:"result"`
}

// ContestDeterminationView is one contest.determine.
type ContestDeterminationView struct {
	Tx       dag.ID        `json:"tx"`
	Outcome  rules.Outcome `json:"outcome"`
	Winner   string        `json:"winner"`
	Rankings int           `json:"rankings"`
	Executed bool          `json:"executed"`
	// EmergencyDesignated: the approved option is an emergency MR
	// designated by the ballots in the determination's causal past (D49);
	// executing the determination schedules its expiry.
	EmergencyDesignated bool `json:"emergency_designated"`
}

// Contests returns the ids of the contests in the session, sorted.
func (h *House) Contests() []dag.ID {
	var out []dag.ID
	for id := range h.global().contests {
		out = append(out, id)
	}
	return sortedIDs(out)
}

// ContestOf returns the contests MR mr is in (more than one is a
// contest_conflict).
func (h *House) ContestOf(mr dag.ID) []dag.ID { return slices.Clone(h.global().inContest[mr]) }

// Contest returns the derived view of contest id, with no clock: its
// result's timing is unknown (as in the session state).
func (h *House) Contest(id dag.ID) (ContestView, bool) {
	return h.ContestAt(id, rules.ContestContext{})
}

// ContestAt is Contest with the clock inputs of an evaluation (ctx.At, the
// checkpoint time of the executed determination; ctx.NoticeStart, that of
// the latest option's open): the result's outcome and timing honour them,
// as advisory on an eventual node. ctx.Facts is ignored.
func (h *House) ContestAt(id dag.ID, ctx rules.ContestContext) (ContestView, bool) {
	st := h.global()
	reg := st.contests[id]
	ci := h.cs().contests[id]
	if reg == nil || ci == nil {
		return ContestView{}, false
	}
	v := ContestView{ID: id, Options: slices.Clone(reg.options), Status: reg.status, Reason: reg.reason, Flags: []string{},
		Rankings: len(ci.ranks), Determinations: []ContestDeterminationView{}}
	if !ci.deadline.IsZero() {
		d := ci.deadline
		v.Deadline = &d
	}
	for _, o := range reg.options {
		if len(st.inContest[o]) > 1 && !slices.Contains(v.Flags, FlagContestConflict) {
			v.Flags = append(v.Flags, FlagContestConflict)
		}
	}
	if reg.reason == FlagContradictory && reg.status == ContestOpen {
		v.Flags = append(v.Flags, FlagContradictory)
	}
	var txs []dag.ID
	for tx, d := range h.ct.dets {
		if d.body.Contest == id {
			txs = append(txs, tx)
		}
	}
	executed := false
	for _, tx := range sortedIDs(txs) {
		d := h.ct.dets[tx]
		ex := reg.executedBy == d.gov
		v.Determinations = append(v.Determinations, ContestDeterminationView{Tx: tx, Outcome: d.body.Outcome,
			Winner: d.result.Winner, Rankings: len(d.body.Rankings), Executed: ex, EmergencyDesignated: d.emergency})
		if ex {
			v.Result, executed = d.result, true
			if !ctx.At.IsZero() {
				if res, _, err := h.evalContest(d.body, d.options, h.ct.contests[id], ctx); err == nil {
					v.Result = res
				}
			}
		}
	}
	if !executed {
		v.Result = h.liveResult(id, reg, ci, ctx)
	}
	return v, true
}

// liveResult evaluates a contest no determination has decided over every
// ranking admitted (not ignored). Without a clock (the session state,
// every call of State) it is memoised in cs.live until a governance entry
// or a ranking on this contest is admitted; each evaluation costs
// O(rankings + members·k²) (rules.Contest.Result).
func (h *House) liveResult(id dag.ID, reg *contestReg, ci *contestInfo, ctx rules.ContestContext) rules.ContestResult {
	cs := h.cs()
	clockless := ctx.At.IsZero() && ctx.NoticeStart.IsZero()
	if m, ok := cs.live[id]; ok && clockless && m.gov == len(h.gov) && m.ranks == len(ci.ranks) {
		return m.res
	}
	c, err := rules.NewContest(ci.rule, ci.el, id, rules.ContestOpenBody{Options: reg.options, Deadline: ci.deadline})
	if err != nil {
		return rules.ContestResult{}
	}
	for _, ri := range ci.ranks {
		r := &h.ct.ranks[ri]
		if !r.ignored {
			_ = c.Add(rules.Ranking{Tx: h.ents[r.ent].id, Author: r.author, RankBody: r.body})
		}
	}
	ctx.Facts = h.optionFacts(reg.options)
	res := c.Result(ctx)
	if clockless {
		if cs.live == nil {
			cs.live = map[dag.ID]liveMemo{}
		}
		cs.live[id] = liveMemo{gov: len(h.gov), ranks: len(ci.ranks), res: res}
	}
	return res
}

// RankedAboveWinner returns D77's list for MR mr when it was approved by
// an executed contest determination as a fallback winner, else nil.
func (h *House) RankedAboveWinner(mr dag.ID) []rules.AboveWinner {
	st := h.global()
	for _, cid := range st.inContest[mr] {
		reg := st.contests[cid]
		if reg == nil || reg.executedBy < 0 || h.ct == nil {
			continue
		}
		d := h.ct.dets[h.ents[h.gov[reg.executedBy]].id]
		if d != nil && d.result.Winner == mr.String() {
			return slices.Clone(d.result.RankedAboveWinner)
		}
	}
	return nil
}

// shortNotice judges a variant (D68) and gives the MRs that need only
// min(min_notice, 86400) of notice their fact: a variant, and an
// amendment whose touched nodes are all among those of the MR it
// supersedes (D48). (A contest hook of mrOpen.)
func (v *admission) shortNotice(info *mrInfo) error {
	m := info.body
	if m.VariantOf.Valid() {
		if err := v.checkVariant(info); err != nil {
			return err
		}
		info.facts.ShortNotice = true
	}
	if old := v.h.mrs[m.Supersedes]; m.Supersedes.Valid() && old != nil && old.patch != nil && info.patch != nil {
		ot, err := v.h.touched(old)
		if err != nil {
			return err
		}
		nt, err := v.h.touched(info)
		if err != nil {
			return err
		}
		within := true
		for _, nid := range nt {
			if _, ok := slices.BinarySearch(ot, nid); !ok {
				within = false
			}
		}
		if within {
			info.facts.ShortNotice = true
		}
	}
	return nil
}
