package house

// This file judges one entry against the governance state of its causal
// past (validate) and records what it carries (commit). Nothing here looks
// at entries outside the causal past, so every replica admits or refuses
// the same entries whatever order they arrive in.

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

type admission struct {
	h       *House
	id      dag.ID
	env     *dag.Envelope
	st      *govState
	parents []int32

	session    *SessionBody
	seed       *statute.Tree
	profile    *statute.Profile
	group      *Group
	branch     *Branch
	app        Append
	change     *changeRec
	mr         *mrInfo
	ballot     ballotRec // ballot.cast
	info       *mrInfo   // ballot.cast: the ballot's MR
	at         int       // ballot.cast: the author's position in the electorate at the MR's open
	det        *detRec
	key        dag.Key
	cfgAt      int32
	el         *rules.Electorate // mr.open: the electorate frozen at this open
	apw        []dag.ID          // mr.open under designated_approvers: the approvers group's maximal writes here
	contestAdm                   // contests and variants (contest.go): a contest hook
	rotAdm                       // key.rotate (rotate.go): a rotation hook
	rsAdm                        // branch.reveal (restricted.go): a restricted hook

	opn         *opinion.Opinion // opinion.publish (opinion.go)
	opnMember   bool             // opinion.publish: signed by a roster member
	opnObserver bool             // opinion.publish: signed by an observer (D78)
}

func notAuth(format string, args ...any) error {
	return dag.Errorf(dag.CodeNotAuthorized, "house: "+format, args...)
}

func (v *admission) validate() error {
	switch v.env.Type {
	case dag.TxSessionCreate:
		return v.sessionCreate()
	case dag.TxGroupCreate:
		return v.groupCreate()
	case dag.TxGroupUpdate:
		return v.groupUpdate()
	case dag.TxBranchCreate:
		return v.branchCreate()
	case dag.TxBranchAppend:
		return v.branchAppend()
	case dag.TxBranchReveal: // restricted hook (restricted.go)
		return v.branchReveal()
	case dag.TxMROpen:
		return v.mrOpen()
	case dag.TxBallotCast:
		return v.ballotCast()
	case dag.TxMRDetermine:
		return v.mrDetermine()
	case dag.TxOpinionPublish:
		return v.opinionPublish() // opinion.go
	case dag.TxContestOpen: // contest hooks
		return v.contestOpen()
	case dag.TxContestRank:
		return v.contestRank()
	case dag.TxContestDetermine:
		return v.contestDetermine()
	case dag.TxKeyRotate: // rotation hook (rotate.go)
		return v.keyRotate()
	case dag.TxKeyRegister:
		k, err := DecodeKeyRegister(v.env.Body)
		if err != nil {
			return err
		}
		if k != v.env.Author {
			return notAuth("key.register must be signed by the key it registers")
		}
		v.key = k
		return nil
	}
	return unsupported(v.env.Type)
}

func (v *admission) sessionCreate() error {
	s, err := DecodeSessionBody(v.env.Body)
	if err != nil {
		return err
	}
	if err := CheckSession(s); err != nil {
		return err
	}
	v.session = s
	if v.h.body != nil {
		return nil // a repeated session.create of the same body
	}
	if v.profile, err = statute.LoadProfile(s.Profile); err != nil {
		return err
	}
	if v.seed, err = v.h.loadTree(s.Seed); err != nil {
		return err
	}
	if msgs := statute.Structure(v.seed, v.env0(s, v.profile)); len(msgs) > 0 {
		return dag.Errorf(dag.CodeSchema, "house: the seed snapshot fails structure: %s", msgs[0].Detail)
	}
	if err := v.h.checkDistricts(s); err != nil { // D72 at admission (causal_checks.go)
		return err
	}
	return v.h.checkRuleTexts(&s.RootRule, &s.RootGovernanceRule)
}

func (v *admission) env0(s *SessionBody, p *statute.Profile) statute.Env {
	env := statute.Env{Profile: p}
	for _, j := range s.Jurisdictions {
		env.Jurisdictions = append(env.Jurisdictions, j.Code)
	}
	return env
}

// checkObservers enforces D78 on a group's new membership.
func (v *admission) checkObservers(g *Group) error {
	b := v.h.body
	var other *groupVal
	switch g.ID {
	case b.Observers:
		other = v.st.group(b.Roster)
	case b.Roster:
		other = v.st.observers
	default:
		return nil
	}
	if other == nil {
		return nil
	}
	for _, k := range g.Members {
		if other.isMember(k) {
			return dag.Errorf(dag.CodeObserverNotAllowed, "house: %s may not be both an observer and in the roster", k)
		}
	}
	return nil
}

func (v *admission) groupCreate() error {
	g, err := DecodeGroup(v.env.Body)
	if err != nil {
		return err
	}
	if v.st.groups[g.ID] != nil {
		return notAuth("group %q already exists in the causal past", g.ID)
	}
	b := v.h.body
	if g.ID == b.Roster || g.ID == b.Registrar || (b.Observers != "" && g.ID == b.Observers) {
		if !slices.Contains(v.st.session.authors, v.env.Author) {
			return notAuth("only the session's author may create group %q", g.ID)
		}
	}
	if err := v.checkObservers(g); err != nil {
		return err
	}
	v.group = g
	return nil
}

func (v *admission) groupUpdate() error {
	ref, err := DecodeObjectRef(v.env.Body, "group")
	if err != nil {
		return err
	}
	raw, err := v.h.object(ref.ID, "group object")
	if err != nil {
		return err
	}
	g, err := DecodeGroup(raw)
	if err != nil {
		return err
	}
	cur := v.st.group(g.ID)
	if cur == nil {
		return notAuth("group %q does not exist (or is conflicted) in the causal past", g.ID)
	}
	if !cur.isAdmin(v.env.Author) {
		return notAuth("%s is not an admin of group %q", v.env.Author, g.ID)
	}
	if err := v.checkObservers(g); err != nil {
		return err
	}
	v.group = g
	return nil
}

func (v *admission) branchCreate() error {
	ref, err := DecodeObjectRef(v.env.Body, "branch")
	if err != nil {
		return err
	}
	raw, err := v.h.object(ref.ID, "branch object")
	if err != nil {
		return err
	}
	br, err := DecodeBranch(raw)
	if err != nil {
		return err
	}
	switch {
	case br.Session != v.h.session:
		return dag.Errorf(dag.CodeSchema, "house: branch object of session %s", br.Session)
	case v.st.branches[br.Name] != nil:
		return notAuth("branch %q already exists in the causal past", br.Name)
	case br.Head != br.SourceChange:
		return dag.Errorf(dag.CodeSchema, "house: a new branch's head must be its source change")
	}
	owner := v.st.group(br.Owner)
	if owner == nil || !owner.isAdmin(v.env.Author) {
		return notAuth("%s is not an admin of owner group %q", v.env.Author, br.Owner)
	}
	src := v.st.branch(br.SourceBranch)
	if src == nil {
		return notAuth("source branch %q does not exist in the causal past", br.SourceBranch)
	}
	found := false
	for _, hd := range src.heads {
		if hd == br.SourceChange {
			found = true
			break
		}
		if ok, err := dag.IsAncestor(context.Background(), v.h.changeParents(), br.SourceChange, hd); err == nil && ok {
			found = true
			break
		}
	}
	if !found {
		return notAuth("change %s is not on source branch %q", br.SourceChange, br.SourceBranch)
	}
	if _, err := rules.Compile(br.MergeRule); err != nil {
		return err
	}
	if _, err := rules.Compile(br.GovernanceRule); err != nil {
		return err
	}
	if err := v.h.checkRuleTexts(&br.MergeRule, &br.GovernanceRule); err != nil {
		return err
	}
	v.branch = br
	return nil
}

func (v *admission) branchAppend() error {
	a, err := DecodeAppend(v.env.Body)
	if err != nil {
		return err
	}
	if a.Commitment.Valid() { // restricted hook (restricted.go)
		return v.restrictedAppend(a)
	}
	if br := v.st.branch(a.Branch); br != nil && br.cfg.restricted {
		return dag.Errorf(dag.CodeSchema, "house: branch %q is restricted: its appends carry a commitment and a size, never the change", a.Branch)
	}
	raw, err := v.h.object(a.Change, "change")
	if err != nil {
		return err
	}
	c, _, id, err := statute.DecodeChange(raw)
	if err != nil {
		return err
	}
	if id != a.Change {
		return dag.Errorf(dag.CodeSchema, "house: change object is not canonical")
	}
	br := v.st.branch(a.Branch)
	switch {
	case br == nil:
		return notAuth("branch %q does not exist (or is conflicted) in the causal past", a.Branch)
	case br.cfg.protected:
		return notAuth("branch %q is protected: only approved MRs change its head", a.Branch)
	case c.Author != v.env.Author.String():
		return notAuth("change %s is authored by %s, not the signer", id, c.Author)
	}
	owner := v.st.group(br.cfg.owner)
	if owner == nil || !owner.isMember(v.env.Author) {
		return notAuth("%s is not a member of owner group %q", v.env.Author, br.cfg.owner)
	}
	if !slices.Equal(sortedIDs(slices.Clone(c.Parents)), br.heads) {
		return dag.Errorf(dag.CodeStaleMR, "house: change %s does not follow exactly the heads of branch %q", id, a.Branch)
	}
	base, err := v.h.tree(c.Parents[0])
	if err != nil {
		return err
	}
	out, err := c.Verify(base)
	if err != nil {
		return err
	}
	v.app, v.change = a, &changeRec{c: c, tree: out}
	return nil
}

func ruleBytes(r rules.Ref) []byte {
	b, _ := r.MarshalJSON()
	return b
}

func (v *admission) mrOpen() error {
	h, st := v.h, v.st
	m, err := DecodeMR(v.env.Body)
	if err != nil {
		return err
	}
	id := dag.Sum(v.env.Body)
	if m.Session != h.session {
		return dag.Errorf(dag.CodeSchema, "house: MR of session %s", m.Session)
	}
	roster := st.roster(h)
	if roster == nil || !roster.isMember(v.env.Author) {
		return notAuth("%s is not a roster member", v.env.Author)
	}
	if st.mrs[id] != nil {
		return notAuth("MR %s is already open in the causal past", id)
	}
	if m.Emergency && m.Kind == "governance" {
		return &dag.ProtocolError{Code: dag.CodeEmergencyInvalid, Detail: "house: a governance MR cannot be an emergency"}
	}
	if m.Effective.Dated {
		open, err := statute.ParseDate(v.env.TS[:10])
		if err == nil && m.Effective.Date < open {
			return &dag.ProtocolError{Code: dag.CodeEffectiveInvalid, Detail: "house: effective date before the MR's open date"}
		}
	}
	if m.Supersedes.Valid() && st.mrs[m.Supersedes] == nil {
		return notAuth("superseded MR %s is not in the causal past", m.Supersedes)
	}
	tb := st.branch(m.Target.Branch)
	if tb == nil {
		return notAuth("target branch %q does not exist (or is conflicted) in the causal past", m.Target.Branch)
	}
	if !slices.Contains(tb.heads, m.Target.Head) || (m.Kind == "merge" && len(tb.heads) != 1) {
		return dag.Errorf(dag.CodeStaleMR, "house: target.head %s is not the head of %q", m.Target.Head, m.Target.Branch)
	}
	want := tb.cfg.mergeRule
	if m.Kind == "governance" {
		want = tb.cfg.governanceRule
	}
	if !bytes.Equal(ruleBytes(m.Rule), ruleBytes(want)) {
		return notAuth("the MR's rule is not the target branch's %s rule", m.Kind)
	}
	rule, err := rules.Compile(m.Rule)
	if err != nil {
		return err
	}
	// D74 in witnessed time (docs/deviations.md): every replica refuses alike.
	if err := rule.CheckWindow(time.Unix(v.witnessed(), 0).UTC()); err != nil {
		return err
	}
	elg := st.group(m.Group)
	if elg == nil {
		return notAuth("electorate group %q does not exist (or is conflicted) in the causal past", m.Group)
	}
	el, err := h.electorate(elg)
	if err != nil {
		return err
	}
	if snap := h.snapshot(el); snap != m.Snapshot {
		return dag.Errorf(dag.CodeSchema, "house: electorate snapshot %s is not group %q at open (%s)", m.Snapshot, m.Group, snap)
	}
	if a, ok := rule.Approvers(); ok {
		gid, err := ParseGroupRef(a.Group)
		if err != nil {
			return err
		}
		ag := st.group(gid)
		if ag == nil {
			return notAuth("approvers group %q does not exist in the causal past", gid)
		}
		if el, err = h.electorate(ag); err != nil {
			return err
		}
	}
	info := &mrInfo{id: id, body: m, rule: rule, el: el, els: map[int32]*rules.Electorate{}}
	if a, ok := rule.Approvers(); ok {
		gid, _ := ParseGroupRef(a.Group) // parsed above
		for _, w := range st.groups[gid].writes {
			v.apw = append(v.apw, h.ents[h.gov[w.gov]].id)
		}
	}
	v.cfgAt, v.el = tb.cfg.version, el
	info.facts.Emergency = m.Emergency
	if m.Kind == "governance" {
		if err := v.checkGovernance(m, tb); err != nil {
			return err
		}
	} else {
		sb := st.branch(m.Source.Branch)
		if sb != nil && sb.cfg.restricted { // restricted hook (restricted.go)
			if err := sb.checkRevealedSource(m.Source); err != nil {
				return err
			}
		}
		if sb == nil || !slices.Contains(sb.heads, m.Source.Head) {
			return dag.Errorf(dag.CodeStaleMR, "house: source.head %s is not a head of %q", m.Source.Head, m.Source.Branch)
		}
		op, err := statute.Open(h.changeParents(), h, statute.MergeRequest{SourceHead: m.Source.Head, TargetHead: m.Target.Head, Resolutions: m.Resolutions})
		if err != nil {
			if dag.CodeOf(err) != "" {
				return err
			}
			return dag.Errorf(dag.CodeSchema, "house: %v", err)
		}
		info.patch = op.Patch
		env := v.env0(h.body, h.profile)
		env.MR, env.Fiscal, env.Effective = id, m.Fiscal, m.Effective
		env.Published = v.publishedRecorder(info) // D56 from the causal past (causal_checks.go)
		info.checks = statute.Structure(op.Patch.Result, env)
		info.facts.StructureFailed = len(info.checks) > 0
		if th, ok := rule.Threshold(); ok && th.Reversion != nil {
			if err := v.revertFacts(info, m); err != nil { // D41 (causal_checks.go)
				return err
			}
		}
	}
	if err := v.shortNotice(info); err != nil { // contest hook (D48, D68)
		return err
	}
	if old := h.mrs[id]; old != nil {
		v.mergeOpen(old, info) // published: what every open's past publishes (causal_checks.go)
		info = old             // the same body opened again concurrently: same patch and facts
	}
	v.mr = info
	return nil
}

// checkGovernance enforces D38 and D42 on a governance MR.
func (v *admission) checkGovernance(m *MR, tb *branchReg) error {
	for _, r := range []*rules.Ref{m.Set.MergeRule, m.Set.GovernanceRule} {
		if r != nil {
			if _, err := rules.Compile(*r); err != nil {
				return err
			}
		}
	}
	if err := v.h.checkRuleTexts(m.Set.MergeRule, m.Set.GovernanceRule); err != nil {
		return err
	}
	if m.Set.Owner != "" && v.st.group(m.Set.Owner) == nil {
		return notAuth("owner group %q does not exist in the causal past", m.Set.Owner)
	}
	if m.Target.Branch != RootBranch {
		return nil
	}
	if m.Set.GovernanceRule != nil {
		return notAuth("the root branch's governance rule is entrenched for the session (D38)")
	}
	if r := m.Set.MergeRule; r != nil {
		if err := CheckRootNotice(*r); err != nil {
			return err
		}
		if cur := tb.cfg.mergeRule.MinNotice; cur != nil && *r.MinNotice < *cur {
			return notAuth("a governance MR may not lower the root merge rule's notice (D42)")
		}
	}
	return nil
}

func (v *admission) ballotCast() error {
	body, err := decodeBallot(v.env.Body)
	if err != nil {
		return err
	}
	h := v.h
	reg, info := h.lastReg, h.lastInfo
	if h.lastSt != v.st || h.lastMR != body.MR {
		reg, info = v.st.mrs[body.MR], h.mrs[body.MR]
		if reg == nil || info == nil {
			return dag.Errorf(dag.CodeBallotInvalid, "house: MR %s is not in the ballot's causal past", body.MR)
		}
		h.lastMR, h.lastSt, h.lastReg, h.lastInfo = body.MR, v.st, reg, info
	}
	el := v.h.electorateAt(info, reg)
	member, rotIgnored := v.ballotMember(v.env.Author, el) // rotation hook (rotate.go): §7 (a)
	at, ok := el.Index(member)
	if !ok {
		return dag.Errorf(dag.CodeBallotInvalid, "house: %s is not in the electorate frozen at the MR's open", v.env.Author)
	}
	if s := body.Supersedes; s.Valid() {
		prev := v.h.ballot(s)
		if prev == nil || prev.author != member || prev.body.MR != body.MR || len(v.h.ancestorsMissing(v.parents, []int32{prev.ent})) > 0 {
			return dag.Errorf(dag.CodeBallotInvalid, "house: superseded ballot %s is not the same member's ballot on this MR in the causal past", s)
		}
	}
	v.ballot = ballotRec{author: member, body: body, rotIgnored: rotIgnored,
		ignored: reg.status != StatusOpen || reg.superseded || len(v.st.inContest[body.MR]) > 0} // contest hook: grouped MRs ignore plain ballots
	v.info, v.at = info, at
	return nil
}

func (v *admission) mrDetermine() error {
	h := v.h
	d, err := decodeDetermination(v.env.Body)
	if err != nil {
		return err
	}
	reg, info := v.st.mrs[d.MR], h.mrs[d.MR]
	if reg == nil || info == nil {
		return notAuth("MR %s is not in the determination's causal past", d.MR)
	}
	switch {
	case len(v.st.inContest[d.MR]) > 0: // contest hook
		return notAuth("MR %s is in contest %s: it is decided only through the contest", d.MR, v.st.inContest[d.MR][0])
	case reg.status != StatusOpen:
		return notAuth("MR %s is already %s in the causal past", d.MR, reg.status)
	case reg.superseded:
		return notAuth("MR %s is superseded in the causal past", d.MR)
	}
	// The listed ballots, found in the order the MR received them before
	// the id index is asked. notBallot is the first listed id that is not
	// a ballot on the MR.
	el := h.electorateAt(info, reg)
	recs := make([]int32, 0, len(d.Ballots)) // indexes in h.ballots
	targets := make([]int32, 0, len(d.Ballots))
	var notBallot error
	ignored := false
	next := 0 // in info.cast: the ballot after the last one found
	for _, b := range d.Ballots {
		ri := int32(-1)
		if next < len(info.cast) {
			if c := info.cast[next]; h.ents[h.ballots.at(c).ent].id == b {
				ri = c
			}
		}
		if ri < 0 {
			if i, ok := h.idx.get(b, h.ents); ok {
				ri = h.ents[i].bal
			}
		}
		if ri < 0 || h.ballots.at(ri).body.MR != d.MR {
			notBallot = dag.Errorf(dag.CodeBallotInvalid, "house: %s is not a ballot on MR %s", b, d.MR)
			break
		}
		rec := h.ballots.at(ri)
		next = int(rec.pos) + 1
		ignored = ignored || rec.ignored || rec.rotIgnored
		recs = append(recs, ri)
		targets = append(targets, rec.ent)
	}
	// Re-evaluated over exactly the listed ballots. When they are the
	// ballots the MR's live poll folded — every ballot it was cast, none
	// ignored or refused, the ids distinct (the decoder checked) — and the
	// electorate is the live poll's, that poll already is their fold: a
	// Poll depends only on its rule, electorate, MR and set of ballots.
	// Otherwise they are folded again, in the listed order, so that the
	// first listed ballot the rule refuses is the one reported.
	var res rules.Result
	ctx := rules.Context{Facts: info.facts}
	if live := info.poll; notBallot == nil && !ignored && len(recs) == len(info.cast) && live.Len() == len(recs) && live.Electorate() == el {
		res = live.Result(ctx)
		h.liveDets++
	} else {
		poll := rules.NewPoll(info.rule, el, d.MR)
		front := v.detFront() // rotation hook (rotate.go)
		for _, ri := range recs {
			rec := h.ballots.at(ri)
			if h.rotIgnoredAt(front, ri) { // invalid by a rotation in the determination's causal past
				continue
			}
			if err := poll.Add(rules.Ballot{Tx: h.ents[rec.ent].id, Author: rec.author, BallotBody: rec.body}); err != nil {
				return err
			}
		}
		if notBallot != nil {
			return notBallot
		}
		res = poll.Result(ctx)
		h.foldedDets++
	}
	if miss := h.ancestorsMissing(v.parents, targets); len(miss) > 0 {
		return dag.Errorf(dag.CodeBallotInvalid, "house: ballot %s is not in the determination's causal past", h.ents[miss[0]].id)
	}
	if reason := reg.reason; reason == FlagContradictory {
		// OQ-3 (docs/deviations.md): a determination whose causal past holds
		// the contradiction settles it only by counting every ballot the
		// contradicting determinations counted.
		listed := make(map[dag.ID]bool, len(d.Ballots))
		for _, b := range d.Ballots {
			listed[b] = true
		}
		for _, g := range reg.dets {
			for _, b := range h.dets[h.ents[h.gov[g]].id].body.Ballots {
				if !listed[b] {
					return notAuth("MR %s has contradictory determinations: a settling determination must list every ballot they listed (missing %s)", d.MR, b)
				}
			}
		}
	}
	if res.IfClosed != d.Outcome {
		return notAuth("determination says %s; re-evaluating its %d ballots gives %s", d.Outcome, len(d.Ballots), res.IfClosed)
	}
	if err := v.checkFiscal(info, d); err != nil { // D53 (causal_checks.go)
		return err
	}
	v.det = &detRec{tx: v.id, body: d, result: res, el: el}
	return nil
}

// commitStatic records what governance entry g carries, before apply.
func (v *admission) commitStatic(g int32) {
	h := v.h
	gs := govStatic{typ: v.env.Type, author: v.env.Author}
	var det *Determination
	if v.env.Type == dag.TxMRDetermine {
		det = v.det.body
	}
	h.recordNamed(h.gov[g], v.env.Type, v.env.Body, det) // what it publishes (causal_checks.go)
	switch v.env.Type {
	case dag.TxSessionCreate:
		if h.body == nil {
			h.body, h.profile = v.session, v.profile
			gen := Genesis(v.session.Seed)
			id, _ := gen.ID()
			h.genesis = id
			h.changes[id] = &changeRec{c: gen, tree: v.seed}
		}
	case dag.TxGroupCreate, dag.TxGroupUpdate:
		gs.group = newGroupVal(v.group)
	case dag.TxBranchCreate:
		gs.branch = v.branch
	case dag.TxBranchAppend:
		gs.app = v.app
		if _, ok := h.changes[v.app.Change]; !ok && v.change != nil {
			h.changes[v.app.Change] = v.change
		}
	case dag.TxBranchReveal: // restricted hook
		v.commitReveal(&gs)
	case dag.TxMROpen:
		info := v.mr
		if h.mrs[info.id] == nil {
			info.poll = rules.NewPoll(info.rule, info.el, info.id)
			info.openGov = g
			h.mrs[info.id] = info
		}
		info.els[g] = v.el
		info.approverWrites = slices.Compact(slices.SortedFunc(slices.Values(append(info.approverWrites, v.apw...)), dag.ID.Compare))
		if all := intersectElectorates(info.el, v.el); all != info.el {
			info.el = all
			h.refoldPoll(info)
		}
		info.opens = sortedIDs(append(info.opens, v.id))
		gs.mr, gs.cfgAt = info.id, v.cfgAt
		v.commitVariant(g) // contest hook
	case dag.TxMRDetermine:
		v.det.gov = g
		h.dets[v.id] = v.det
	case dag.TxKeyRegister:
		gs.key = v.key
	case dag.TxKeyRotate: // rotation hook
		v.commitRotate(g)
	case dag.TxContestOpen, dag.TxContestDetermine: // contest hook
		v.commitContest(g)
	}
	h.gd = append(h.gd, gs)
}

// commitBallot records an admitted ballot and folds it into its MR's poll:
// O(1), the session is never refolded.
func (v *admission) commitBallot(ei int32) {
	h, b := v.h, &v.ballot
	b.ent = ei
	b.pos = int32(len(v.info.cast))
	v.info.cast = append(v.info.cast, h.ballots.len())
	h.ents[ei].bal = h.ballots.len()
	if v.env.Author != b.author { // rotation hook: cast with a rotated-in key
		if h.signers == nil {
			h.signers = make(map[int32]dag.Key)
		}
		h.signers[h.ballots.len()] = v.env.Author
	}
	h.ballots.push(b)
	h.counts.Ballots++
	if b.ignored || b.rotIgnored {
		h.counts.IgnoredBallots++
		return
	}
	_ = v.info.poll.AddAt(v.at, rules.Ballot{Tx: v.id, Author: b.author, BallotBody: b.body})
}

// electorateAt is an MR's electorate as a causal past sees it: what the
// opens in that past agree on.
func (h *House) electorateAt(info *mrInfo, reg *mrReg) *rules.Electorate {
	var el *rules.Electorate
	for _, o := range reg.opens {
		e := info.els[o]
		if e == nil {
			continue
		}
		if el == nil {
			el = e
		} else {
			el = intersectElectorates(el, e)
		}
	}
	if el == nil {
		return info.el
	}
	return el
}

// intersectElectorates returns a when b has the same members, else the
// members both have.
func intersectElectorates(a, b *rules.Electorate) *rules.Electorate {
	if a == b || (a.Len() == b.Len() && a.Snapshot() == b.Snapshot()) {
		return a
	}
	var common []dag.Key
	for _, k := range a.Members() {
		if b.Has(k) {
			common = append(common, k)
		}
	}
	el, err := rules.NewElectorate(common)
	if err != nil {
		panic(err) // members of an electorate are valid and distinct
	}
	return el
}

// refoldPoll rebuilds an MR's poll after its electorate narrowed (a
// concurrent open): rare, and the only refold of ballots.
func (h *House) refoldPoll(info *mrInfo) {
	info.poll = rules.NewPoll(info.rule, info.el, info.id)
	for i := range h.ballots.len() {
		if b := h.ballots.at(i); b.body.MR == info.id && !b.ignored && !b.rotIgnored {
			_ = info.poll.Add(rules.Ballot{Tx: h.ents[b.ent].id, Author: b.author, BallotBody: b.body})
		}
	}
}

// snapshot returns an electorate's snapshot hash, once per electorate.
func (h *House) snapshot(el *rules.Electorate) dag.ID {
	if h.snaps == nil {
		h.snaps = make(map[*rules.Electorate]dag.ID)
	}
	s, ok := h.snaps[el]
	if !ok {
		s = el.Snapshot()
		h.snaps[el] = s
	}
	return s
}

// electorate freezes a group's members, once per group version.
func (h *House) electorate(g *groupVal) (*rules.Electorate, error) {
	if h.els == nil {
		h.els = make(map[*groupVal]*rules.Electorate)
	}
	if el, ok := h.els[g]; ok {
		return el, nil
	}
	el, err := rules.NewElectorate(g.Members)
	if err != nil {
		return nil, err
	}
	h.els[g] = el
	return el, nil
}
