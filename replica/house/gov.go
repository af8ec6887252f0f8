package house

// This file is the governance state: what a causal past says about the
// session, groups, branches, MRs and keys, and apply, the fold step of one
// governance entry. Every register that concurrent entries may write is a
// multi-value register (the maximal writes are kept), so the state is a
// function of the set of entries, never of the order they arrived in; a
// register with more than one maximal write is flagged, never silently
// resolved.

import (
	"maps"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// The named flags of concurrent conflicts the spec leaves open
// (docs/wire-format.md, open points 3, 8, 9; docs/deviations.md).
const (
	FlagGroupConflict         = "group_conflict"        // two concurrent group.create of one id: neither applies
	FlagGroupUpdateConflict   = "group_update_conflict" // concurrent group.update: the intersection applies
	FlagBranchNameConflict    = "branch_name_conflict"  // two concurrent branch.create of one name: neither applies
	FlagConcurrentAppend      = "concurrent_append"     // a branch with several heads
	FlagContradictory         = "contradictory_determination"
	FlagRepeatedSessionCreate = "repeated_session_create" // several signed session.create of one body
	FlagConcurrentOpen        = "concurrent_open"         // one MR body opened by several transactions
)

// MR statuses (30k §5, /merge-requests).
const (
	StatusOpen       = "open"
	StatusMerged     = "merged"
	StatusRejected   = "rejected"
	StatusSuperseded = "superseded"
	StatusStale      = "stale"
)

type govState struct {
	session  *sessionReg
	groups   map[string]*groupReg
	branches map[string]*branchReg
	mrs      map[dag.ID]*mrReg
	keys     *keyIndex
	// observers is the value of the session's observers group.
	observers *groupVal
	// rootMerges are the executed merges into the root, in the order they
	// were executed (each one's target head is the previous one's change).
	rootMerges []Merge
	// merges are the executed merges into every branch, the root's
	// included, in the order they were executed (D44's merge order).
	merges []Merge
	// contests and the contests each MR is in (contest.go): contest hooks.
	contests  map[dag.ID]*contestReg
	inContest map[dag.ID][]dag.ID
	// pending and applied emergency expiries (expiry.go): timing hooks.
	expiries []expiry
	expired  []Expiry
}

// Merge is an executed merge into a branch (RootMerges: into the root).
type Merge struct {
	MR            dag.ID
	Branch        string // the target branch
	Change        dag.ID // the merge change: the branch's head after it
	Before        dag.ID // the branch's head before it
	Determination dag.ID // the executed determination
	Effective     statute.Effective
}

// RootBranch is the name of the session's root branch, which
// session.create creates (protected, owned by the roster, with the
// session's root rules, at the genesis change).
const RootBranch = "root"

type sessionReg struct {
	txs     []int32 // governance indexes of the session.create entries
	authors []dag.Key
}

type groupVal struct {
	*Group
	members map[dag.Key]struct{}
	admins  map[dag.Key]struct{}
}

func newGroupVal(g *Group) *groupVal {
	v := &groupVal{Group: g, members: make(map[dag.Key]struct{}, len(g.Members)), admins: make(map[dag.Key]struct{}, len(g.Admins))}
	for _, k := range g.Members {
		v.members[k] = struct{}{}
	}
	for _, k := range g.Admins {
		v.admins[k] = struct{}{}
	}
	return v
}

func (v *groupVal) isMember(k dag.Key) bool { _, ok := v.members[k]; return ok }
func (v *groupVal) isAdmin(k dag.Key) bool  { _, ok := v.admins[k]; return ok }

type groupWrite struct {
	gov int32
	val *groupVal
}

type groupReg struct {
	creates []int32
	writes  []groupWrite // maximal writes, by governance index
	val     *groupVal    // nil when concurrent creates conflict
}

type branchCfg struct {
	owner          string
	protected      bool
	mergeRule      rules.Ref
	governanceRule rules.Ref
	source         HeadRef
	version        int32 // governance index of the last change of this config
	restricted     bool  // visibility "restricted" (restricted.go)
}

type branchReg struct {
	creates []int32
	cfg     *branchCfg  // nil when concurrent creates conflict
	heads   []dag.ID    // change ids, sorted; of a restricted branch, the revealed ones
	commits []commitRec // a restricted branch's commitments, by commitment (restricted.go)
}

type mrReg struct {
	status     string
	reason     string
	dets       []int32 // maximal decisive determinations
	merge      dag.ID  // the merge change, once merged
	executedBy int32   // governance index of the executing determination, or -1
	superseded bool
	opens      []int32
}

func emptyState() *govState {
	return &govState{
		groups:    map[string]*groupReg{},
		branches:  map[string]*branchReg{},
		mrs:       map[dag.ID]*mrReg{},
		keys:      &keyIndex{},
		contests:  map[dag.ID]*contestReg{},
		inContest: map[dag.ID][]dag.ID{},
	}
}

// clone is a shallow copy: registers are copied when they are written.
func (s *govState) clone() *govState {
	return &govState{
		session:   s.session,
		groups:    maps.Clone(s.groups),
		branches:  maps.Clone(s.branches),
		mrs:       maps.Clone(s.mrs),
		keys:      s.keys.clone(),
		observers: s.observers,
		// Clipped, so that appending in one state never writes into another's.
		rootMerges: slices.Clip(s.rootMerges),
		merges:     slices.Clip(s.merges),
		contests:   maps.Clone(s.contests),
		inContest:  maps.Clone(s.inContest),
		expiries:   slices.Clip(s.expiries),
		expired:    slices.Clip(s.expired),
	}
}

func (s *govState) group(id string) *groupVal {
	if r := s.groups[id]; r != nil {
		return r.val
	}
	return nil
}

func (s *govState) roster(h *House) *groupVal { return s.group(h.body.Roster) }

func (s *govState) isObserver(k dag.Key) bool {
	if s.session == nil {
		return false
	}
	return s.observers != nil && s.observers.isMember(k)
}

func (s *govState) branch(name string) *branchReg {
	if r := s.branches[name]; r != nil && r.cfg != nil {
		return r
	}
	return nil
}

// apply folds governance entry g into st, in place. final, when not nil,
// holds each MR's maximal decisive determinations over the whole set being
// folded (a from-scratch fold); when nil, g is causally after everything
// in st (the incremental step), so g alone is maximal for its MR.
func (h *House) apply(st *govState, g int32, final map[dag.ID][]int32) {
	h.applyDue(st, h.ents[h.gov[g]].wit, h.ents[h.gov[g]].id) // timing hook: D49 expiries due at g's witnessed time
	typ := h.gd[g].typ
	switch typ {
	case dag.TxSessionCreate:
		r := &sessionReg{}
		if st.session != nil {
			*r = *st.session
		}
		r.txs = append(slices.Clone(r.txs), g)
		r.authors = append(slices.Clone(r.authors), h.gd[g].author)
		st.session = r
		if _, ok := st.branches[RootBranch]; !ok {
			b := h.body
			st.branches[RootBranch] = &branchReg{creates: []int32{g}, heads: []dag.ID{h.genesis}, cfg: &branchCfg{
				owner: b.Roster, protected: true, mergeRule: b.RootRule, governanceRule: b.RootGovernanceRule, version: -1,
			}}
		}
	case dag.TxGroupCreate, dag.TxGroupUpdate:
		val := h.gd[g].group
		r := &groupReg{}
		if old := st.groups[val.ID]; old != nil {
			*r = *old
		}
		if typ == dag.TxGroupCreate {
			r.creates = append(slices.Clone(r.creates), g)
		}
		var ws []groupWrite
		for _, w := range r.writes {
			if !h.govAncestor(w.gov, g) {
				ws = append(ws, w)
			}
		}
		r.writes = append(ws, groupWrite{g, val})
		slices.SortFunc(r.writes, func(a, b groupWrite) int { return int(a.gov) - int(b.gov) })
		r.val = nil
		if len(r.creates) == 1 {
			r.val = r.writes[0].val
			for _, w := range r.writes[1:] {
				r.val = intersect(r.val, w.val)
			}
		}
		st.groups[val.ID] = r
		if h.body != nil && val.ID == h.body.Observers {
			st.observers = r.val
		}
	case dag.TxBranchCreate:
		br := h.gd[g].branch
		r := &branchReg{}
		if old := st.branches[br.Name]; old != nil {
			*r = *old
		}
		r.creates = append(slices.Clone(r.creates), g)
		if len(r.creates) == 1 {
			r.cfg = &branchCfg{owner: br.Owner, protected: br.Protected, mergeRule: br.MergeRule, governanceRule: br.GovernanceRule,
				source: HeadRef{Branch: br.SourceBranch, Head: br.SourceChange}, version: g, restricted: br.Restricted}
			r.heads = []dag.ID{br.Head}
		} else {
			r.cfg, r.heads = nil, nil
		}
		st.branches[br.Name] = r
	case dag.TxBranchAppend:
		a := h.gd[g].app
		if a.Commitment.Valid() { // restricted hook (restricted.go)
			h.applyCommit(st, g, a)
			return
		}
		old := st.branches[a.Branch]
		if old == nil || old.cfg == nil {
			return // the branch is conflicted in this wider state
		}
		r := *old
		c := h.changes[a.Change].c
		heads := make([]dag.ID, 0, len(r.heads))
		for _, x := range r.heads {
			if !slices.Contains(c.Parents, x) {
				heads = append(heads, x)
			}
		}
		r.heads = sortedIDs(append(heads, a.Change))
		st.branches[a.Branch] = &r
	case dag.TxMROpen:
		info := h.mrs[h.gd[g].mr]
		r := &mrReg{status: StatusOpen, executedBy: -1}
		if old := st.mrs[info.id]; old != nil {
			*r = *old
		}
		r.opens = append(slices.Clone(r.opens), g)
		st.mrs[info.id] = r
		if sup := info.body.Supersedes; sup.Valid() {
			if old := st.mrs[sup]; old != nil && old.status == StatusOpen {
				c := *old
				c.superseded = true
				st.mrs[sup] = &c
			}
		}
		h.applyContest(st, g, final) // contest hook: a variant joins its base's contest
	case dag.TxMRDetermine:
		d := h.dets[h.ents[h.gov[g]].id]
		if d.body.Outcome == rules.Pending {
			return
		}
		old := st.mrs[d.body.MR]
		if old == nil {
			return
		}
		r := *old
		r.dets = h.maximal(r.dets, g)
		st.mrs[d.body.MR] = &r
		var max []int32
		if final != nil {
			max = final[d.body.MR]
		} else {
			max = r.dets
		}
		if h.contradicted(max) {
			if r.executedBy < 0 && r.status == StatusOpen {
				r.reason = FlagContradictory
			}
			return
		}
		if r.executedBy >= 0 || r.status != StatusOpen || !slices.Contains(max, g) {
			return
		}
		r.reason = ""
		h.execute(st, &r, g, d)
	case dag.TxBranchReveal: // restricted hook (restricted.go)
		h.applyReveal(st, h.gd[g].reveal)
	case dag.TxKeyRegister:
		st.keys.set(h.gd[g].key, g)
	case dag.TxContestOpen, dag.TxContestDetermine: // contest hook
		h.applyContest(st, g, final)
	}
}

// contradicted reports whether the maximal decisive determinations of an
// MR disagree on the outcome.
func (h *House) contradicted(max []int32) bool {
	for _, g := range max[min(1, len(max)):] {
		if h.dets[h.ents[h.gov[g]].id].body.Outcome != h.dets[h.ents[h.gov[max[0]]].id].body.Outcome {
			return true
		}
	}
	return false
}

// execute carries out a verified, uncontradicted determination d of the MR
// whose register is r (already copied into st).
func (h *House) execute(st *govState, r *mrReg, g int32, d *detRec) {
	r.executedBy = g
	info := h.mrs[d.body.MR]
	switch d.body.Outcome {
	case rules.Rejected:
		r.status, r.reason = StatusRejected, string(rules.Rejected)
		return
	case rules.Expired:
		r.status, r.reason = StatusRejected, string(rules.Expired)
		return
	}
	tb := st.branch(info.body.Target.Branch)
	if tb == nil {
		r.status, r.reason = StatusStale, "target branch is conflicted"
		return
	}
	if info.body.Kind == "governance" {
		// Stale unless one of the MR's opens in this state saw the target's
		// current rules and owner (a function of the set, not of which open
		// arrived first).
		current := false
		for _, o := range r.opens {
			current = current || h.gd[o].cfgAt == tb.cfg.version
		}
		if !current {
			r.status, r.reason = StatusStale, "the target branch's rules or owner changed since the MR opened"
			return
		}
		nb := *tb
		cfg := *tb.cfg
		if s := info.body.Set; s.MergeRule != nil {
			cfg.mergeRule = *s.MergeRule
		}
		if s := info.body.Set; s.GovernanceRule != nil {
			cfg.governanceRule = *s.GovernanceRule
		}
		if o := info.body.Set.Owner; o != "" {
			cfg.owner = o
		}
		cfg.version = g
		nb.cfg = &cfg
		st.branches[info.body.Target.Branch] = &nb
		r.status = StatusMerged
		return
	}
	if len(tb.heads) != 1 {
		r.status, r.reason = StatusStale, FlagConcurrentAppend
		return
	}
	head := tb.heads[0]
	c, err := h.mergeChange(info, head)
	if err != nil {
		r.status, r.reason = StatusStale, err.Error()
		return
	}
	nb := *tb
	nb.heads = []dag.ID{c}
	st.branches[info.body.Target.Branch] = &nb
	r.status, r.merge = StatusMerged, c
	m := Merge{MR: info.id, Branch: info.body.Target.Branch, Change: c, Before: head, Determination: d.tx, Effective: info.body.Effective}
	if m.Branch == RootBranch {
		st.rootMerges = append(st.rootMerges, m)
	}
	st.merges = append(st.merges, m)
	h.scheduleExpiry(st, info, g, d, head, c) // timing hook (D49, expiry.go)
}

// mergeChange derives (once per MR and target head) the merge change of
// 30k §6 item 4 and records it in the Change DAG.
func (h *House) mergeChange(info *mrInfo, head dag.ID) (dag.ID, error) {
	key := mergeKey{info.id, head}
	if m, ok := h.merges[key]; ok {
		return m.id, m.err
	}
	t, err := h.tree(head)
	var id dag.ID
	if err == nil {
		var c *statute.Change
		var res *statute.Tree
		c, res, err = statute.MergeChange(info.id, head, info.body.Source.Head, t, info.patch.Ops)
		if err == nil {
			id, err = c.ID()
			if err == nil {
				h.changes[id] = &changeRec{c: c, tree: res}
			}
		}
	}
	h.merges[key] = mergeResult{id, err}
	return id, err
}

type mergeKey struct{ mr, head dag.ID }

type mergeResult struct {
	id  dag.ID
	err error
}

// intersect is the reading of a group with concurrent updates: only what
// every maximal version agrees on.
func intersect(a, b *groupVal) *groupVal {
	g := &Group{ID: a.ID}
	for _, k := range a.Members {
		if b.isMember(k) {
			g.Members = append(g.Members, k)
		}
	}
	for _, k := range a.Admins {
		if b.isAdmin(k) {
			g.Admins = append(g.Admins, k)
		}
	}
	return newGroupVal(g)
}

func sortedIDs(ids []dag.ID) []dag.ID {
	slices.SortFunc(ids, dag.ID.Compare)
	return slices.Compact(ids)
}
