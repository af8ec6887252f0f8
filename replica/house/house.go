package house

// This file holds the House: the per-session record of admitted entries,
// their governance frontiers, and Admit, which judges one entry against the
// state of its causal past and folds it in.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Objects gives the content-addressed objects that bodies refer to
// (attachments: changes, node objects, branch and group objects).
type Objects interface {
	// Object returns the data of object id, or an error wrapping
	// dag.ErrNotFound. The House, a pure evaluator with no caller context,
	// passes context.Background(): a store-backed Objects takes the ctx
	// here rather than keeping one (a kept request ctx is cancelled once
	// its request ends, and the House outlives it).
	Object(ctx context.Context, id dag.ID) ([]byte, error)
}

// ObjectMap is an in-memory Objects.
type ObjectMap map[dag.ID][]byte

// Object returns m[id] or an error wrapping dag.ErrNotFound.
func (m ObjectMap) Object(_ context.Context, id dag.ID) ([]byte, error) {
	b, ok := m[id]
	if !ok {
		return nil, fmt.Errorf("house: object %s: %w", id, dag.ErrNotFound)
	}
	return b, nil
}

// MissingObject is wrapped (inside a *dag.ProtocolError with code
// unknown_parent) when a body names an object the Objects source does not
// hold. A client's submission is refused for it; a peer's entry may wait
// for the object like for a missing parent (see replica).
type MissingObject struct{ ID dag.ID }

func (e *MissingObject) Error() string { return "house: missing object " + e.ID.String() }

// ErrNotAdmitted is wrapped when Admit is given an entry whose parent it has
// not admitted: a caller's bug (the store admits entries in causal order).
var ErrNotAdmitted = errors.New("house: parent not admitted")

// House is the derived state of one 30k session (one space), built entry by
// entry. It is not safe for concurrent use.
type House struct {
	session dag.ID
	body    *SessionBody
	profile *statute.Profile
	genesis dag.ID

	idx  idIndex // tx id → index in ents
	ents []entry
	par  []int32 // the parents of every entry, back to back

	// Governance entries, by governance index.
	gov      []int32  // entry index
	govAnc   []ancSet // ancestors-or-self among governance entries
	govPast  []int32  // frontier index of the causal past, without the entry
	after    []*govState
	fronts   [][]int32 // frontier index → sorted governance indexes
	frontKey map[string]int32
	memo     map[int32]*govState
	heads    []int32 // maximal governance entries of everything admitted
	gd       []govStatic
	merges   map[mergeKey]mergeResult
	els      map[*groupVal]*rules.Electorate
	snaps    map[*rules.Electorate]dag.ID

	mrs     map[dag.ID]*mrInfo
	ballots ballotArena // by entry.bal
	dets    map[dag.ID]*detRec
	changes map[dag.ID]*changeRec
	objs    Objects
	ct      *contestState // contests (contest.go); a contest hook
	// Key rotations and the signing keys of ballots cast with a
	// rotated-in key, by index in ballots (rotate.go): rotation hooks.
	rots    []rotRec
	signers map[int32]dag.Key

	// named maps an object id to the governance entries (entry indexes)
	// whose bodies name it: what they publish in the session (causal_checks.go).
	named map[dag.ID][]int32
	// estimateInPast reports whether an accepted opinion with an estimate
	// on mr is in the causal past of an entry with these parents (D53).
	// Nil until the House accepts opinions: no estimate exists.
	estimateInPast func(mr dag.ID, parents []int32) bool

	counts Counts
	ops    opinionState // opinions (opinion.go)
	past   pastRecord   // the causal past opinion.Check reads (opinionPublish)
	parts  partsState   // estimates, ... (opinion_members.go)
	// The MR of the last ballot judged and the governance state it was
	// judged in (states are never changed once made): ballots come in
	// runs on one MR.
	lastMR   dag.ID
	lastSt   *govState
	lastReg  *mrReg
	lastInfo *mrInfo

	// Determinations evaluated by reading their MR's live poll, and by
	// folding their ballots again (for tests).
	liveDets, foldedDets int

	// Scratch for ancestorsMissing: an entry x is seen in the current walk
	// when seen[x] == walk, wanted when want[x] == walk. Stamps instead of
	// maps: a determination's walk touches hundreds of entries.
	seen, want []uint32
	walk       uint32
}

// Counts are running totals of what a House admitted.
type Counts struct {
	Entries        int `json:"entries"`
	Governance     int `json:"governance"`
	Ballots        int `json:"ballots"`
	IgnoredBallots int `json:"ignored_ballots"`
	Refolds        int `json:"refolds"` // governance folds from scratch (concurrent governance)
}

// entry is one admitted entry. It holds no pointer (parents live in the
// House's flat parent arena), so a million of them cost the collector
// nothing to scan.
type entry struct {
	id    dag.ID
	pOff  int32 // parents: h.par[pOff : pOff+pLen]
	pLen  int32
	depth int32
	front int32 // governance frontier of the causal past, the entry included
	gov   int32 // governance index, or -1
	bal   int32 // index in House.ballots, or -1
	wit   int64 // witnessed time, Unix seconds (contest hook; witness.go)
}

type mrInfo struct {
	id      dag.ID
	body    *MR
	opens   []dag.ID // mr.open tx ids, sorted
	openGov int32    // governance index of the first admitted open
	rule    *rules.Rule
	// els is the electorate frozen at each open (by governance index).
	// They are equal unless one body was opened concurrently under
	// different memberships of a designated_approvers group; then the
	// electorate is what every open agrees on (their intersection).
	els    map[int32]*rules.Electorate
	el     *rules.Electorate // the electorate of all opens: the poll's
	poll   *rules.Poll
	facts  rules.Facts
	patch  *statute.Patch // merge only
	checks []statute.Message
	// published records, for each sha256 reference in the merged text,
	// whether it was published in the causal past of the open (causal_checks.go).
	published map[dag.ID]bool
	// cast lists the MR's ballots (indexes in House.ballots) in the order
	// they were admitted, which is the order a determination usually lists
	// them in: mrDetermine tries the next one before the index.
	cast []int32
	// approverWrites are, for a designated_approvers rule, the group.create
	// and group.update entries whose group objects defined the approvers
	// group at the opens (each open's maximal writes, sorted: the
	// intersection of all their members is the group every open agrees
	// on, el): what an MR extract carries (D45).
	approverWrites []dag.ID
}

// govStatic is what a governance entry carries, decoded once.
type govStatic struct {
	typ    dag.TxType
	author dag.Key
	group  *groupVal  // group.create, group.update
	branch *Branch    // branch.create
	app    Append     // branch.append
	mr     dag.ID     // mr.open
	cfgAt  int32      // mr.open of a governance MR: the target's config version at this open
	key    dag.Key    // key.register
	reveal *revealRec // branch.reveal (restricted.go)
}

// ballotRec is an admitted ballot; its tx id is h.ents[ent].id.
type ballotRec struct {
	ent     int32
	author  dag.Key
	body    rules.BallotBody
	ignored bool // cast after the MR closed in its causal past
	// rotIgnored: signed by a rotated key, invalid by §7 (a) (rotate.go)
	rotIgnored bool
	pos        int32 // position in its MR's mrInfo.cast
}

type detRec struct {
	tx     dag.ID
	gov    int32
	el     *rules.Electorate // the electorate at the determination's causal past
	body   *Determination
	result rules.Result
}

type changeRec struct {
	c    *statute.Change
	tree *statute.Tree
}

// New returns an empty House for the session whose id is session. objs
// resolves the objects bodies refer to; the caller supplies each entry's
// attachments through it before calling Admit.
func New(session dag.ID, objs Objects) *House {
	if objs == nil {
		objs = ObjectMap{}
	}
	h := &House{
		session:  session,
		idx:      newIDIndex(0),
		frontKey: make(map[string]int32),
		memo:     make(map[int32]*govState),
		mrs:      make(map[dag.ID]*mrInfo),
		dets:     make(map[dag.ID]*detRec),
		changes:  make(map[dag.ID]*changeRec),
		merges:   make(map[mergeKey]mergeResult),
		objs:     objs,
	}
	h.intern(nil) // frontier 0 is the empty one
	return h
}

// Session returns the session id.
func (h *House) Session() dag.ID { return h.session }

// Counts returns the running totals.
func (h *House) Counts() Counts { return h.counts }

// Has reports whether the entry id was admitted.
func (h *House) Has(id dag.ID) bool { _, ok := h.idx.get(id, h.ents); return ok }

// SetObjects replaces the object source (the store, plus a batch's
// attachments).
func (h *House) SetObjects(objs Objects) { h.objs = objs }

// isGov reports whether entries of type t change what decides the validity
// of other entries: their state is memoised per governance frontier.
func isGov(t dag.TxType) bool {
	return t != dag.TxBallotCast && t != dag.TxContestRank && t != dag.TxOpinionPublish
}

// Admit judges the envelope env with tx id id against the state of its
// causal past and, if it is valid, folds it in. The caller has already
// checked env's signature and that every parent was admitted. A
// *dag.ProtocolError means env is invalid and nothing changed; any other
// error is the caller's (ErrNotAdmitted) or the object source's.
// Admitting an entry again is a no-op.
func (h *House) Admit(id dag.ID, env *dag.Envelope) error {
	if _, ok := h.idx.get(id, h.ents); ok {
		return nil
	}
	if env.Session != h.session {
		return dag.Errorf(dag.CodeSchema, "house: envelope of session %s in session %s", env.Session, h.session)
	}
	// The parents go straight into the arena and are taken back if env
	// is refused.
	pOff := len(h.par)
	var depth int32
	for _, p := range env.Parents {
		pi, ok := h.parent(p)
		if !ok {
			h.par = h.par[:pOff]
			return fmt.Errorf("%w: %s lists %s", ErrNotAdmitted, id, p)
		}
		h.par = append(room(h.par, 1), pi)
		depth = max(depth, h.ents[pi].depth+1)
	}
	parents := h.par[pOff:len(h.par):len(h.par)]
	if err := h.judge(id, env, parents, depth); err != nil {
		h.par = h.par[:pOff]
		return err
	}
	return nil
}

// parent returns the entry index of the admitted entry p. An entry read
// in log order usually names the entry admitted just before it, which
// is checked before the index.
func (h *House) parent(p dag.ID) (int32, bool) {
	if n := len(h.ents); n > 0 && h.ents[n-1].id == p {
		return int32(n - 1), true
	}
	return h.idx.get(p, h.ents)
}

// judge is Admit once the parents are in the arena (parents).
func (h *House) judge(id dag.ID, env *dag.Envelope, parents []int32, depth int32) error {
	past := h.pastFrontier(parents)
	st := h.stateAt(past)
	if env.Type != dag.TxSessionCreate && st.session == nil {
		return dag.Errorf(dag.CodeNotAuthorized, "house: %s has no session.create in its causal past", env.Type)
	}
	// An observer's opinions are judged by opinion.CheckAuthor (D78).
	if env.Type != dag.TxKeyRegister && env.Type != dag.TxOpinionPublish && st.isObserver(env.Author) {
		return dag.Errorf(dag.CodeObserverNotAllowed, "house: %s is an observer and may not sign %s", env.Author, env.Type)
	}
	v := admission{h: h, id: id, env: env, st: st, parents: parents}
	v.wit = h.witness(env, st, parents) // contest hook
	if isGov(env.Type) {                // timing hook: expiries due at this entry (expiry.go); ballots and rankings read no branch
		st = h.withDue(st, v.wit, id)
		v.st = st
	}
	if err := v.validate(); err != nil {
		return err
	}
	// Valid: record and fold.
	ei := int32(len(h.ents))
	e := entry{id: id, pOff: int32(len(h.par) - len(parents)), pLen: int32(len(parents)), depth: depth, front: past, gov: -1, bal: -1, wit: v.wit}
	h.idx.put(id, ei, h.ents)
	h.counts.Entries++
	h.noteWitnessed(id, v.wit) // timing hook
	if !isGov(env.Type) {
		h.ents = append(room(h.ents, 1), e)
		if env.Type == dag.TxContestRank { // contest hook
			v.commitRank(ei)
			return nil
		}
		if v.opn != nil { // opinion.go
			v.commitOpinion(ei)
			return nil
		}
		v.commitBallot(ei)
		return nil
	}
	g := int32(len(h.gov))
	e.gov = g
	h.gov = append(h.gov, ei)
	fs := h.fronts[past]
	sets := make([]ancSet, len(fs))
	for i, f := range fs {
		sets[i] = h.govAnc[f]
	}
	h.govAnc = append(h.govAnc, ancWith(sets, g))
	h.govPast = append(h.govPast, past)
	e.front = h.intern([]int32{g})
	h.ents = append(room(h.ents, 1), e)
	h.counts.Governance++
	v.commitStatic(g)
	next := st.clone()
	h.apply(next, g, nil)
	h.after = append(h.after, next)
	// The governance heads of everything admitted.
	heads := h.heads[:0:0]
	for _, x := range h.heads {
		if !h.govAncestor(x, g) {
			heads = append(heads, x)
		}
	}
	h.heads = append(heads, g)
	return nil
}

// govAncestor reports whether governance entry a is an ancestor-or-self of b.
func (h *House) govAncestor(a, b int32) bool {
	return h.govAnc[b].has(a)
}

// intern returns the index of the frontier fs (sorted governance indexes).
func (h *House) intern(fs []int32) int32 {
	var sb strings.Builder
	for i, f := range fs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(int(f)))
	}
	k := sb.String()
	if i, ok := h.frontKey[k]; ok {
		return i
	}
	i := int32(len(h.fronts))
	h.fronts = append(h.fronts, slices.Clone(fs))
	h.frontKey[k] = i
	return i
}

// pastFrontier returns the governance frontier of the union of the
// parents' causal pasts: their frontiers' union, keeping only the maximal
// governance entries.
func (h *House) pastFrontier(parents []int32) int32 {
	if len(parents) == 0 {
		return 0
	}
	f0 := h.ents[parents[0]].front
	same := true
	for _, p := range parents[1:] {
		if h.ents[p].front != f0 {
			same = false
			break
		}
	}
	if same {
		return f0
	}
	var all []int32
	for _, p := range parents {
		all = append(all, h.fronts[h.ents[p].front]...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	out := all[:0:0]
	for _, a := range all {
		maximal := true
		for _, b := range all {
			if a != b && h.govAncestor(a, b) {
				maximal = false
				break
			}
		}
		if maximal {
			out = append(out, a)
		}
	}
	return h.intern(out)
}

// stateAt returns the governance state of the causal past whose frontier
// is f. A single-entry frontier is the state after that entry; a wider
// one is folded from scratch once and memoised.
func (h *House) stateAt(f int32) *govState {
	fs := h.fronts[f]
	switch len(fs) {
	case 0:
		return emptyState()
	case 1:
		return h.after[fs[0]]
	}
	if st, ok := h.memo[f]; ok {
		return st
	}
	set := make([]uint64, len(h.gov)/64+1)
	for _, g := range fs {
		h.govAnc[g].orInto(set)
	}
	st := h.fold(set)
	h.memo[f] = st
	return st
}

// fold derives the governance state of a causally closed set of governance
// entries from scratch: in the deterministic topological order of the
// governance DAG restricted to the set (ties by tx id), with every MR's
// maximal determinations known in advance, so that a determination
// contradicted by a concurrent one never executes.
func (h *House) fold(set []uint64) *govState {
	h.counts.Refolds++
	order := h.govOrder(set)
	final := make(map[dag.ID][]int32)
	for _, g := range order {
		d := h.dets[h.ents[h.gov[g]].id]
		if d == nil || d.body.Outcome == rules.Pending {
			continue
		}
		final[d.body.MR] = h.maximal(final[d.body.MR], g)
	}
	h.finalContests(order, final) // contest hook
	st := emptyState()
	for _, g := range order {
		h.apply(st, g, final)
	}
	return st
}

// govOrder lists the governance entries of set in deterministic
// topological order: Kahn's algorithm over the governance DAG, always
// taking the ready entry with the smallest tx id.
func (h *House) govOrder(set []uint64) []int32 {
	in := func(g int32) bool { w := int(g / 64); return w < len(set) && set[w]&(1<<(g%64)) != 0 }
	var members []int32
	for g := int32(0); g < int32(len(h.gov)); g++ {
		if in(g) {
			members = append(members, g)
		}
	}
	indeg := make(map[int32]int, len(members))
	children := make(map[int32][]int32, len(members))
	var ready []int32
	for _, g := range members {
		ps := h.fronts[h.govPast[g]]
		indeg[g] = len(ps)
		for _, p := range ps {
			children[p] = append(children[p], g)
		}
		if len(ps) == 0 {
			ready = append(ready, g)
		}
	}
	less := func(a, b int32) int { return h.ents[h.gov[a]].id.Compare(h.ents[h.gov[b]].id) }
	out := make([]int32, 0, len(members))
	for len(ready) > 0 {
		slices.SortFunc(ready, less)
		g := ready[0]
		ready = ready[1:]
		out = append(out, g)
		for _, c := range children[g] {
			indeg[c]--
			if indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	return out
}

// maximal adds g to the antichain xs (sorted), dropping every element that
// is an ancestor of g: a multi-value register's write.
func (h *House) maximal(xs []int32, g int32) []int32 {
	out := make([]int32, 0, len(xs)+1)
	for _, x := range xs {
		if !h.govAncestor(x, g) {
			out = append(out, x)
		}
	}
	out = append(out, g)
	slices.Sort(out)
	return out
}

// ancestorsMissing returns those of targets (entry indexes) that are not
// ancestors of an entry with the given parents, walking back no further
// than the shallowest target.
func (h *House) ancestorsMissing(parents []int32, targets []int32) []int32 {
	if len(targets) == 0 {
		return nil
	}
	if n := len(h.ents); len(h.seen) < n {
		h.seen = slices.Grow(h.seen[:0], n+n/4)[:n+n/4]
		h.want = slices.Grow(h.want[:0], n+n/4)[:n+n/4]
		clear(h.seen)
		clear(h.want)
		h.walk = 0
	}
	h.walk++
	if h.walk == 0 { // wrapped: old stamps could match again
		clear(h.seen)
		clear(h.want)
		h.walk = 1
	}
	w := h.walk
	wanted := 0
	minDepth := h.ents[targets[0]].depth
	for _, t := range targets {
		if h.want[t] != w {
			h.want[t] = w
			wanted++
		}
		minDepth = min(minDepth, h.ents[t].depth)
	}
	stack := slices.Clone(parents)
	for len(stack) > 0 && wanted > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h.seen[x] == w || h.ents[x].depth < minDepth {
			continue
		}
		h.seen[x] = w
		if h.want[x] == w {
			h.want[x] = 0
			wanted--
		}
		e := &h.ents[x]
		stack = append(stack, h.par[e.pOff:e.pOff+e.pLen]...)
	}
	if wanted == 0 {
		return nil
	}
	var out []int32
	for _, t := range targets {
		if h.want[t] == w {
			h.want[t] = 0
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// ballot returns the admitted ballot tx, or nil. The pointer is valid
// until the next ballot is admitted.
func (h *House) ballot(tx dag.ID) *ballotRec {
	i, ok := h.idx.get(tx, h.ents)
	if !ok || h.ents[i].bal < 0 {
		return nil
	}
	return h.ballots.at(h.ents[i].bal)
}

// tree returns the snapshot of change id.
func (h *House) tree(id dag.ID) (*statute.Tree, error) {
	c, ok := h.changes[id]
	if !ok {
		return nil, fmt.Errorf("house: change %s: %w", id, dag.ErrNotFound)
	}
	return c.tree, nil
}

// Snapshot implements statute.Snapshots over the Change DAG.
func (h *House) Snapshot(change dag.ID) (*statute.Tree, error) { return h.tree(change) }

// changeParents is the Change DAG as a dag.ParentSource.
func (h *House) changeParents() dag.ParentSource {
	return dag.ParentsFunc(func(_ context.Context, id dag.ID) ([]dag.ID, error) {
		c, ok := h.changes[id]
		if !ok {
			return nil, fmt.Errorf("house: change %s: %w", id, dag.ErrNotFound)
		}
		return c.c.Parents, nil
	})
}

// object reads an object a body refers to; a missing object is
// unknown_parent (30k §5: every reference must be resolvable).
func (h *House) object(id dag.ID, what string) ([]byte, error) {
	b, err := h.objs.Object(context.Background(), id)
	if errors.Is(err, dag.ErrNotFound) {
		return nil, &dag.ProtocolError{Code: dag.CodeUnknownParent, Detail: fmt.Sprintf("house: %s %s is neither known nor attached", what, id), Err: &MissingObject{ID: id}}
	}
	if err != nil {
		return nil, err
	}
	if dag.Sum(b) != id {
		return nil, dag.Errorf(dag.CodeSchema, "house: %s %s does not hash to its id", what, id)
	}
	return b, nil
}

// loadTree loads the snapshot root from node objects.
func (h *House) loadTree(root dag.ID) (*statute.Tree, error) {
	t, err := statute.LoadTree(root, nodeGetter{h})
	if err != nil {
		if dag.CodeOf(err) != "" {
			return nil, err
		}
		if errors.Is(err, dag.ErrNotFound) {
			return nil, dag.Errorf(dag.CodeUnknownParent, "house: snapshot %s: %v", root, err)
		}
		return nil, err
	}
	return t, nil
}

type nodeGetter struct{ h *House }

func (g nodeGetter) Node(id dag.ID) (*dag.Node, error) {
	b, err := g.h.object(id, "node")
	if err != nil {
		return nil, err
	}
	return DecodeNode(b)
}

// Genesis returns the derived genesis change of the session: base and
// result the seed snapshot, no ops, no parents, author oth:system. It is
// the root branch's first head and the Change DAG's root.
func Genesis(seed dag.ID) *statute.Change {
	return &statute.Change{Base: seed, Result: seed, Ops: []statute.Op{}, Parents: []dag.ID{}, Message: "seed", Author: dag.SystemAuthor}
}
