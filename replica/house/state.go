package house

// This file turns a House into its derived State (canonical JSON with a
// state hash), answers the cheap per-MR queries, and derives a House from
// scratch from a set of entries.

import (
	"container/heap"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// State is the derived state of a session: a pure function of the set of
// admitted entries. Its canonical JSON is byte-identical on every replica
// that admitted the same entries, whatever their order; Hash names it.
// Per-replica facts (finality, checkpoint times) are not part of it.
type State struct {
	Session    dag.ID       `json:"session"`
	Label      string       `json:"label"`
	Simulation bool         `json:"simulation"`
	Education  bool         `json:"education"`
	Profile    string       `json:"profile"`
	Flags      []string     `json:"flags"`
	Groups     []GroupView  `json:"groups"`
	Branches   []BranchView `json:"branches"`
	MRs        []MRView     `json:"merge_requests"`
	Keys       []dag.Key    `json:"keys"`
	Entries    int          `json:"entries"`
	Ballots    int          `json:"ballots"`
	// Contests and applied emergency expiries (contest.go, expiry.go),
	// left out when there are none: contest and timing hooks.
	Contests []ContestView `json:"contests,omitempty"`
	Expiries []Expiry      `json:"expiries,omitempty"`
	// Admitted key rotations (rotate.go), left out when there are none: a
	// rotation hook.
	Rotations []RotationView `json:"rotations,omitempty"`
}

// GroupView is one group as derived.
type GroupView struct {
	ID      string    `json:"id"`
	Members []dag.Key `json:"members"` // empty when conflicted
	Admins  []dag.Key `json:"admins"`
	Flags   []string  `json:"flags"`
	// Current is the members' current keys, when a member's key was
	// rotated (rotate.go); left out otherwise.
	Current []dag.Key `json:"current,omitempty"`
}

// HeadView is an MR's source or target.
type HeadView struct {
	Branch string `json:"branch"`
	Head   dag.ID `json:"head"`
}

// BranchView is one branch as derived.
type BranchView struct {
	Name           string     `json:"name"`
	Owner          string     `json:"owner"`
	Protected      bool       `json:"protected"`
	Source         *HeadView  `json:"source"`
	Heads          []dag.ID   `json:"heads"`
	Snapshot       *dag.ID    `json:"snapshot"` // the head's snapshot; null with several heads
	MergeRule      *rules.Ref `json:"merge_rule"`
	GovernanceRule *rules.Ref `json:"governance_rule"`
	Flags          []string   `json:"flags"`
	// Visibility is "restricted" on a restricted branch (omitted on a
	// public one), and Commitments its commitments, by commitment: what
	// every peer learns of its unrevealed changes (restricted.go).
	Visibility  string           `json:"visibility,omitempty"`
	Commitments []CommitmentView `json:"commitments,omitempty"`
}

// DeterminationView is a determination re-evaluated over exactly its
// listed ballots.
type DeterminationView struct {
	Tx      dag.ID        `json:"tx"`
	Outcome rules.Outcome `json:"outcome"`
	Ballots int           `json:"ballots"`
	// Maximal is true when no later determination of the MR has this one in
	// its causal past; only maximal determinations decide.
	Maximal    bool         `json:"maximal"`
	Executed   bool         `json:"executed"`
	Evaluation rules.Result `json:"evaluation"`
}

// MRView is one merge request as derived.
type MRView struct {
	ID              dag.ID              `json:"id"`
	Kind            string              `json:"kind"`
	OpenedBy        []dag.ID            `json:"opened_by"`
	Source          *HeadView           `json:"source"`
	Target          HeadView            `json:"target"`
	Electorate      string              `json:"electorate"`
	Rule            rules.Ref           `json:"rule"`
	Summary         string              `json:"summary"` // the opener's own words, never an official summary
	Supersedes      *dag.ID             `json:"supersedes"`
	Status          string              `json:"status"`
	Reason          string              `json:"reason"`
	Flags           []string            `json:"flags"`
	StructureFailed bool                `json:"structure_failed"`
	Merge           *dag.ID             `json:"merge"`
	Live            rules.Result        `json:"live"` // the live tally over every counted ballot
	Determinations  []DeterminationView `json:"determinations"`
}

// global returns the governance state of everything admitted.
func (h *House) global() *govState {
	return h.globalDue(h.stateAt(h.intern(h.heads))) // timing hook (expiry.go)
}

// State derives the session's state. It costs O(groups' members + MRs +
// determinations): the polls are already folded.
func (h *House) State() *State {
	st := h.global()
	s := &State{Session: h.session, Flags: []string{}, Groups: []GroupView{}, Branches: []BranchView{}, MRs: []MRView{}, Keys: []dag.Key{},
		Entries: h.counts.Entries, Ballots: h.counts.Ballots}
	if h.body != nil {
		s.Label, s.Simulation, s.Education, s.Profile = h.body.Label, h.body.Simulation, h.body.Education, h.body.Profile
	}
	if st.session != nil && len(st.session.txs) > 1 {
		s.Flags = append(s.Flags, FlagRepeatedSessionCreate)
	}
	for _, id := range sortedKeys(st.groups) {
		s.Groups = append(s.Groups, groupView(id, st.groups[id]))
	}
	for _, name := range sortedKeys(st.branches) {
		s.Branches = append(s.Branches, h.branchView(name, st.branches[name]))
	}
	ids := make([]dag.ID, 0, len(st.mrs))
	for id := range st.mrs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, dag.ID.Compare)
	for _, id := range ids {
		s.MRs = append(s.MRs, h.mrView(st, id))
	}
	st.keys.each(func(k dag.Key, _ int32) { s.Keys = append(s.Keys, k) })
	slices.SortFunc(s.Keys, func(a, b dag.Key) int { return strings.Compare(a.String(), b.String()) })
	h.rotationViews(s)                // rotation hook (rotate.go)
	for _, id := range h.Contests() { // contest hook
		v, _ := h.Contest(id)
		s.Contests = append(s.Contests, v)
	}
	s.Expiries = slices.Clone(st.expired) // timing hook
	return s
}

// Branches returns State's branches, sorted by name, without deriving the
// rest of the state: O(branches).
func (h *House) Branches() []BranchView {
	st := h.global()
	out := make([]BranchView, 0, len(st.branches))
	for _, name := range sortedKeys(st.branches) {
		out = append(out, h.branchView(name, st.branches[name]))
	}
	return out
}

// Branch returns one of State's branches without deriving the rest.
func (h *House) Branch(name string) (BranchView, bool) {
	r, ok := h.global().branches[name]
	if !ok {
		return BranchView{}, false
	}
	return h.branchView(name, r), true
}

// Group returns one of State's groups, its members' rotated keys included,
// without deriving the rest: O(the group's members + rotations).
func (h *House) Group(id string) (GroupView, bool) {
	r, ok := h.global().groups[id]
	if !ok {
		return GroupView{}, false
	}
	s := &State{Groups: []GroupView{groupView(id, r)}}
	h.rotationViews(s) // rotation hook (rotate.go)
	return s.Groups[0], true
}

// Hash returns the state hash: the SHA-256 of the state's canonical JSON.
func (s *State) Hash() (dag.ID, error) {
	id, _, err := dag.HashJSON(s)
	return id, err
}

// Canonical returns the state's canonical JSON.
func (s *State) Canonical() ([]byte, error) { return dag.Marshal(s) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func groupView(id string, r *groupReg) GroupView {
	v := GroupView{ID: id, Members: []dag.Key{}, Admins: []dag.Key{}, Flags: []string{}}
	if len(r.creates) > 1 {
		v.Flags = append(v.Flags, FlagGroupConflict)
	} else if len(r.writes) > 1 {
		v.Flags = append(v.Flags, FlagGroupUpdateConflict)
	}
	if r.val != nil {
		v.Members = append(v.Members, r.val.Members...)
		v.Admins = append(v.Admins, r.val.Admins...)
	}
	return v
}

func (h *House) branchView(name string, r *branchReg) BranchView {
	v := BranchView{Name: name, Heads: append([]dag.ID{}, r.heads...), Flags: []string{}}
	if len(r.creates) > 1 {
		v.Flags = append(v.Flags, FlagBranchNameConflict)
	}
	if len(r.heads) > 1 {
		v.Flags = append(v.Flags, FlagConcurrentAppend)
	}
	if c := r.cfg; c != nil {
		v.Owner, v.Protected = "group:"+c.owner, c.protected
		mr, gr := c.mergeRule, c.governanceRule
		v.MergeRule, v.GovernanceRule = &mr, &gr
		if c.source.Branch != "" {
			v.Source = &HeadView{c.source.Branch, c.source.Head}
		}
		if c.restricted { // restricted hook
			v.Visibility, v.Commitments = "restricted", h.commitViews(r)
		}
	}
	if len(r.heads) == 1 {
		if t, err := h.tree(r.heads[0]); err == nil {
			id := t.Hash()
			v.Snapshot = &id
		}
	}
	return v
}

func (h *House) mrView(st *govState, id dag.ID) MRView {
	info, reg := h.mrs[id], st.mrs[id]
	m := info.body
	v := MRView{ID: id, Kind: m.Kind, OpenedBy: append([]dag.ID{}, info.opens...), Target: HeadView{m.Target.Branch, m.Target.Head},
		Electorate: "group:" + m.Group, Rule: m.Rule, Summary: m.Summary, Status: reg.status, Reason: reg.reason, Flags: []string{},
		StructureFailed: info.facts.StructureFailed, Determinations: []DeterminationView{}}
	if m.Kind == "merge" {
		v.Source = &HeadView{m.Source.Branch, m.Source.Head}
	}
	if m.Supersedes.Valid() {
		s := m.Supersedes
		v.Supersedes = &s
	}
	if len(info.opens) > 1 {
		v.Flags = append(v.Flags, FlagConcurrentOpen)
	}
	if reg.reason == FlagContradictory && reg.status == StatusOpen {
		v.Flags = append(v.Flags, FlagContradictory)
	}
	if reg.status == StatusOpen {
		switch {
		case reg.superseded:
			v.Status = StatusSuperseded
		case h.staleNow(st, info):
			v.Status, v.Reason = StatusStale, "the target head moved and the patch no longer applies"
		}
	}
	if reg.merge.Valid() {
		mc := reg.merge
		v.Merge = &mc
	}
	v.Live = info.poll.Result(rules.Context{Facts: info.facts})
	for _, tx := range h.detsOf(id) {
		d := h.dets[tx]
		v.Determinations = append(v.Determinations, DeterminationView{
			Tx: tx, Outcome: d.body.Outcome, Ballots: len(d.body.Ballots),
			Maximal:  slices.Contains(reg.dets, d.gov),
			Executed: reg.executedBy == d.gov, Evaluation: d.result,
		})
	}
	return v
}

// staleNow reports whether an open merge MR's patch no longer applies to
// its target's current head (30k §6 item 3, bait-and-switch).
func (h *House) staleNow(st *govState, info *mrInfo) bool {
	if info.body.Kind != "merge" {
		return false
	}
	tb := st.branch(info.body.Target.Branch)
	if tb == nil || len(tb.heads) != 1 {
		return true
	}
	if tb.heads[0] == info.body.Target.Head {
		return false
	}
	_, err := h.mergeChange(info, tb.heads[0])
	return err != nil
}

// detsOf lists the admitted determinations of an MR, sorted by tx id.
func (h *House) detsOf(mr dag.ID) []dag.ID {
	var out []dag.ID
	for tx, d := range h.dets {
		if d.body.MR == mr {
			out = append(out, tx)
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// RootMerges returns the executed merges into the root, in the order they
// were executed: the chain of root heads from the genesis change.
func (h *House) RootMerges() []Merge { return slices.Clone(h.global().rootMerges) }

// Merges returns the executed merges into every branch (the root's
// included, and the emergency expiries of D49), in the order they were
// executed.
func (h *House) Merges() []Merge { return slices.Clone(h.global().merges) }

// Genesis returns the session's genesis change id (zero before
// session.create).
func (h *House) Genesis() dag.ID { return h.genesis }

// Jurisdictions returns the codes the session declares (D73).
func (h *House) Jurisdictions() []string {
	if h.body == nil {
		return nil
	}
	out := make([]string, len(h.body.Jurisdictions))
	for i, j := range h.body.Jurisdictions {
		out[i] = j.Code
	}
	return out
}

// Simulation reports whether the session is a simulation (D54): every
// response about it must say so.
func (h *House) Simulation() bool { return h.body != nil && h.body.Simulation }

// MRs lists the ids of the MRs opened, sorted.
func (h *House) MRs() []dag.ID {
	out := make([]dag.ID, 0, len(h.mrs))
	for id := range h.mrs {
		out = append(out, id)
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// MR returns the derived view of one MR.
func (h *House) MR(id dag.ID) (MRView, bool) {
	st := h.global()
	if st.mrs[id] == nil {
		return MRView{}, false
	}
	return h.mrView(st, id), true
}

// Tally returns the live evaluation of an MR's poll in ctx (the caller's
// checkpoint time, for the advisory timing) in O(1) plus the voided list.
func (h *House) Tally(id dag.ID, ctx rules.Context) (rules.Result, bool) {
	info := h.mrs[id]
	if info == nil {
		return rules.Result{}, false
	}
	ctx.Facts = info.facts
	return info.poll.Result(ctx), true
}

// Evaluate re-evaluates determination tx over exactly its listed ballots in
// ctx: an eventual node records the advisory timing (notice, deadline)
// with the checkpoint times the caller passes.
func (h *House) Evaluate(tx dag.ID, ctx rules.Context) (rules.Result, bool) {
	d := h.dets[tx]
	if d == nil {
		return rules.Result{}, false
	}
	info := h.mrs[d.body.MR]
	p := rules.NewPoll(info.rule, d.el, info.id)
	for _, b := range d.body.Ballots {
		r := h.ballot(b)
		_ = p.Add(rules.Ballot{Tx: b, Author: r.author, BallotBody: r.body})
	}
	ctx.Facts = info.facts
	return p.Result(ctx), true
}

// Determination returns the MR a determination decides, for callers that
// need the MR's open to time it.
func (h *House) Determination(tx dag.ID) (mr dag.ID, ok bool) {
	d := h.dets[tx]
	if d == nil {
		return dag.ID{}, false
	}
	return d.body.MR, true
}

// Opens returns the mr.open tx ids of an MR.
func (h *House) Opens(mr dag.ID) []dag.ID {
	if info := h.mrs[mr]; info != nil {
		return slices.Clone(info.opens)
	}
	return nil
}

// Tree returns the snapshot of a change (a branch head) for /branches/{name}/tree.
func (h *House) Tree(change dag.ID) (*statute.Tree, bool) {
	t, err := h.tree(change)
	return t, err == nil
}

// Rejection is an entry refused at admission, with the code and detail of
// its refusal.
type Rejection struct {
	ID     dag.ID   `json:"id"`
	Code   dag.Code `json:"code"`
	Detail string   `json:"detail"`
}

// Input is one entry for Derive.
type Input struct {
	ID  dag.ID
	Env *dag.Envelope
}

// Derive is the full derivation: it admits the entries of one session,
// from nothing, in a causal order: as given when they already are in one
// (a store's log order is), else witan's deterministic topological order
// (Kahn, smallest id first; see topoOrder). An entry whose parent was
// refused is refused too (unknown_parent, "parent quarantined"); an entry
// whose parent is not among the inputs is left out and listed in pending.
// The result equals what Admit builds incrementally from the same set in
// any causal order.
func Derive(session dag.ID, in []Input, objs Objects) (h *House, refused []Rejection, pending []dag.ID, err error) {
	// The given order is tried first, without a pass to check it: Admit
	// itself finds a parent not admitted before, and then the derivation
	// starts again in topological order. Since the state is a function of
	// the set, both give the same House.
	h, refused, err = deriveIn(session, in, objs, len(in))
	if errors.Is(err, ErrNotAdmitted) {
		order := topoOrder(in)
		h, refused, err = deriveIn(session, order, objs, len(in))
		if err == nil && len(order) < len(in) {
			done := make(map[dag.ID]bool, len(order))
			for _, x := range order {
				done[x.ID] = true
			}
			for _, x := range in {
				if !done[x.ID] {
					pending = append(pending, x.ID)
				}
			}
			slices.SortFunc(pending, dag.ID.Compare)
			pending = slices.Compact(pending)
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	slices.SortFunc(refused, func(a, b Rejection) int { return a.ID.Compare(b.ID) })
	return h, refused, pending, nil
}

// deriveIn admits order into a new House. It returns an error wrapping
// ErrNotAdmitted when order is not causal.
func deriveIn(session dag.ID, order []Input, objs Objects, size int) (*House, []Rejection, error) {
	h := New(session, objs)
	// Sized with headroom: the entries that arrive after a derivation
	// should not start by copying every arena.
	n := size + size/4
	h.idx = newIDIndex(size) // at most half full: headroom of its own
	h.ents = make([]entry, 0, n)
	h.par = make([]int32, 0, n)
	h.ballots.reserve(n)
	ops := 0
	for _, x := range order {
		if x.Env.Type == dag.TxOpinionPublish {
			ops++
		}
	}
	if ops > 0 {
		h.ops.init(ops + ops/4)
	}
	var refused []Rejection
	bad := make(map[dag.ID]bool)
	for _, x := range order {
		var perr error
		if len(bad) > 0 {
			if bad[x.ID] {
				continue // listed twice
			}
			for _, p := range x.Env.Parents {
				if bad[p] {
					perr = &dag.ProtocolError{Code: dag.CodeUnknownParent, Detail: "parent quarantined: " + p.String()}
					break
				}
			}
		}
		if perr == nil {
			perr = h.Admit(x.ID, x.Env)
		}
		if perr != nil {
			c := dag.CodeOf(perr)
			if c == "" {
				return nil, nil, perr
			}
			bad[x.ID] = true
			refused = append(refused, Rejection{ID: x.ID, Code: c, Detail: perr.Error()})
		}
	}
	return h, refused, nil
}

// topoOrder returns the inputs, once each, in witan's deterministic
// topological order (Kahn, smallest id first). Inputs whose parents are
// missing from the set are left out.
func topoOrder(in []Input) []Input {
	byID := make(map[dag.ID]Input, len(in))
	for _, x := range in {
		byID[x.ID] = x
	}
	waiting := make(map[dag.ID]int, len(byID))
	children := make(map[dag.ID][]dag.ID, len(byID))
	ready := &idHeap{}
	for id, x := range byID {
		for _, p := range x.Env.Parents {
			children[p] = append(children[p], id)
		}
		waiting[id] = len(x.Env.Parents)
		if len(x.Env.Parents) == 0 {
			*ready = append(*ready, id)
		}
	}
	heap.Init(ready)
	out := make([]Input, 0, len(byID))
	for ready.Len() > 0 {
		id := heap.Pop(ready).(dag.ID)
		out = append(out, byID[id])
		for _, c := range children[id] {
			waiting[c]--
			if waiting[c] == 0 {
				heap.Push(ready, c)
			}
		}
	}
	return out
}

type idHeap []dag.ID

func (x idHeap) Len() int           { return len(x) }
func (x idHeap) Less(i, j int) bool { return x[i].Compare(x[j]) < 0 }
func (x idHeap) Swap(i, j int)      { x[i], x[j] = x[j], x[i] }
func (x *idHeap) Push(v any)        { *x = append(*x, v.(dag.ID)) }
func (x *idHeap) Pop() any {
	old := *x
	v := old[len(old)-1]
	*x = old[:len(old)-1]
	return v
}

// Summary is the part of State that does not grow with the session's
// traffic or membership: its scalars, its group ids, the applied
// expiries, and how many branches, merge requests, keys, contests and
// rotations State lists. GET /sessions/{id} serves it; the lists are
// read each on its own (docs/http-api.md).
type Summary struct {
	Session    dag.ID   `json:"session"`
	Label      string   `json:"label"`
	Simulation bool     `json:"simulation"`
	Education  bool     `json:"education"`
	Profile    string   `json:"profile"`
	Flags      []string `json:"flags"`
	Entries    int      `json:"entries"`
	Ballots    int      `json:"ballots"`
	// Groups are the group ids, sorted (the members are GET /groups/{id}'s).
	Groups    []string `json:"groups"`
	Branches  int      `json:"branches"`
	MRs       int      `json:"merge_requests"`
	Keys      int      `json:"keys"`
	Contests  int      `json:"contests"`
	Rotations int      `json:"rotations"`
	Expiries  []Expiry `json:"expiries,omitempty"`
}

// Summary derives the session's Summary: O(groups + expiries), the
// branches, merge requests, keys and contests only counted.
func (h *House) Summary() Summary {
	st := h.global()
	s := Summary{Session: h.session, Flags: []string{}, Groups: sortedKeys(st.groups),
		Entries: h.counts.Entries, Ballots: h.counts.Ballots,
		Branches: len(st.branches), MRs: len(st.mrs), Keys: st.keys.len(), Contests: len(st.contests), Rotations: len(h.rots)}
	if h.body != nil {
		s.Label, s.Simulation, s.Education, s.Profile = h.body.Label, h.body.Simulation, h.body.Education, h.body.Profile
	}
	if st.session != nil && len(st.session.txs) > 1 {
		s.Flags = append(s.Flags, FlagRepeatedSessionCreate)
	}
	s.Expiries = slices.Clone(st.expired) // timing hook
	return s
}
