package house

// The emergency expiry change of D49 on an eventual node. A designated
// emergency MR that merges is restored by a derived change (author
// oth:system) once 30 days have passed after its merge, "except for
// nodes changed by a later non-emergency MR". Time here is witnessed time
// (witness.go), never a replica's clock: the expiry is due at the
// witnessed time of the executing determination plus 30 days, and it
// applies in the state of every causal past that holds an entry whose
// witnessed time has reached that, so every replica holding the same
// entries derives the same change at the same place in the Change DAG
// (docs/deviations.md, "Time on an eventual node").

import (
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
)

// ExpiryDelay is D49's 30 days, in seconds of witnessed time.
const ExpiryDelay = 30 * 86400

// expiry is a pending emergency expiry.
type expiry struct {
	mr     dag.ID
	branch string
	due    int64  // witnessed Unix seconds
	before dag.ID // the target head before the emergency merge
	after  dag.ID // the emergency merge change
}

// Expiry is an applied emergency expiry change.
type Expiry struct {
	MR     dag.ID `json:"mr"`
	Change dag.ID `json:"change"`
	Due    int64  `json:"due"`
	// Trigger is the entry whose witnessed time reached Due in the state
	// that applied it.
	Trigger dag.ID `json:"trigger"`
}

// scheduleExpiry records the expiry of an emergency MR that merge c just
// executed (a contest hook of execute: timing rules).
func (h *House) scheduleExpiry(st *govState, info *mrInfo, g int32, d *detRec, before, c dag.ID) {
	if !info.body.Emergency || !d.result.EmergencyDesignated {
		return
	}
	st.expiries = append(slices.Clip(st.expiries), expiry{mr: info.id, branch: info.body.Target.Branch,
		due: h.ents[h.gov[g]].wit + ExpiryDelay, before: before, after: c})
}

// applyDue applies, in st, every pending expiry whose due time the
// witnessed time wit has reached, trigger being the entry that brings
// wit. It reports whether anything changed.
func (h *House) applyDue(st *govState, wit int64, trigger dag.ID) bool {
	changed := false
	var keep []expiry
	for _, e := range st.expiries {
		if e.due > wit {
			keep = append(keep, e)
			continue
		}
		tb := st.branch(e.branch)
		if tb == nil || len(tb.heads) != 1 {
			keep = append(keep, e) // retried once the branch has one head
			continue
		}
		head := tb.heads[0]
		id, err := h.expiryChange(e, head)
		changed = true
		if err != nil || id == head {
			continue // nothing left to restore
		}
		nb := *tb
		nb.heads = []dag.ID{id}
		st.branches[e.branch] = &nb
		m := Merge{MR: e.mr, Branch: e.branch, Change: id, Before: head, Determination: trigger}
		if e.branch == RootBranch {
			st.rootMerges = append(slices.Clip(st.rootMerges), m)
		}
		st.merges = append(slices.Clip(st.merges), m)
		st.expired = append(slices.Clip(st.expired), Expiry{MR: e.mr, Change: id, Due: e.due, Trigger: trigger})
	}
	if changed {
		st.expiries = keep
	}
	return changed
}

// withDue returns st with the expiries due at wit applied: st itself when
// none is due, else a copy.
func (h *House) withDue(st *govState, wit int64, trigger dag.ID) *govState {
	due := false
	for _, e := range st.expiries {
		due = due || e.due <= wit
	}
	if !due {
		return st
	}
	c := st.clone()
	h.applyDue(c, wit, trigger)
	return c
}

// expiryChange derives (once per expiry and head) the change restoring
// the pre-merge text of every node the emergency merge modified, added or
// removed, except nodes changed since (deriveExpiry).
func (h *House) expiryChange(e expiry, head dag.ID) (dag.ID, error) {
	cs := h.cs()
	key := mergeKey{e.after, head}
	if m, ok := cs.expMemo[key]; ok {
		return m.id, m.err
	}
	id, err := h.deriveExpiry(e, head)
	if cs.expMemo == nil {
		cs.expMemo = map[mergeKey]mergeResult{}
	}
	cs.expMemo[key] = mergeResult{id, err}
	return id, err
}

// deriveExpiry derives the expiry change on top of head. Over the
// structural diff from the pre-merge snapshot (before) to the merge's
// (after), in nid order, a node inside a subtree already restored is
// skipped, and:
//   - a node the merge modified or added whose subtree is still as the
//     merge left it is restored (replace with its pre-merge subtree) or
//     deleted; one whose subtree differs was changed since and is left;
//   - a node the merge removed is reinserted with its pre-merge subtree
//     under its pre-merge parent, after the nearest pre-merge preceding
//     sibling that is there, when the parent is there and no nid of the
//     subtree is (a node added again since was changed since);
//   - a node the merge moved (to another parent, or out of order among
//     its siblings) is moved back the same way, in pre-merge document
//     order, unless it was changed since: the structural diff from the
//     merge's snapshot to head flags it moved, or its subtree differs, or
//     its parent differs.
func (h *House) deriveExpiry(e expiry, head dag.ID) (dag.ID, error) {
	before, err := h.tree(e.before)
	if err != nil {
		return dag.ID{}, err
	}
	after, err := h.tree(e.after)
	if err != nil {
		return dag.ID{}, err
	}
	cur, err := h.tree(head)
	if err != nil {
		return dag.ID{}, err
	}
	d := statute.Compare(before, after)
	work := cur.Clone()
	var ops []statute.Op
	var done []string
	covered := func(nid string) bool {
		for _, p := range done {
			if strings.HasPrefix(nid, p+"/") {
				return true
			}
		}
		return false
	}
	add := func(op statute.Op, nid string) error {
		if err := statute.ApplyInPlace(work, []statute.Op{op}); err != nil {
			return err
		}
		ops = append(ops, op)
		done = append(done, nid)
		return nil
	}
	nids := append(slices.Clone(d.Modified), d.Added...)
	slices.Sort(nids)
	for _, nid := range nids {
		if covered(nid) {
			continue
		}
		ah, _ := after.NodeHash(nid)
		ch, ok := work.NodeHash(nid)
		if !ok || ch != ah {
			continue // changed since the emergency merge
		}
		op := statute.Op{Op: statute.OpDelete, NID: nid, Pre: ch}
		if spec, ok := before.Spec(nid); ok {
			op = statute.Op{Op: statute.OpReplace, NID: nid, Pre: ch, Node: spec}
		}
		if err := add(op, nid); err != nil {
			return dag.ID{}, err
		}
	}
	for _, nid := range d.Removed { // sorted
		if covered(nid) {
			continue
		}
		bn, _ := before.Get(nid)
		spec, _ := before.Spec(nid)
		if !work.Has(bn.Parent) || anyPresent(work, spec) {
			continue // its place is gone, or it was added again since
		}
		pn, _ := before.Get(bn.Parent)
		afterNID := ""
		for i := slices.Index(pn.Children, nid) - 1; i >= 0; i-- {
			if sib, ok := work.Get(pn.Children[i]); ok && sib.Parent == bn.Parent {
				afterNID = sib.NID
				break
			}
		}
		if err := add(statute.Op{Op: statute.OpInsert, ParentNID: bn.Parent, AfterNID: afterNID, Node: spec}, nid); err != nil {
			return dag.ID{}, err
		}
	}
	if len(d.Moved) > 0 {
		moved := make(map[string]bool, len(d.Moved))
		for _, nid := range d.Moved {
			moved[nid] = true
		}
		since := statute.Compare(after, cur).Moved // sorted
		for _, nid := range before.Order() {
			if !moved[nid] || covered(nid) {
				continue
			}
			an, ok1 := after.Get(nid)
			cn, ok2 := cur.Get(nid)
			wn, ok3 := work.Get(nid)
			bn, _ := before.Get(nid)
			ah, _ := after.NodeHash(nid)
			ch, _ := cur.NodeHash(nid)
			wh, _ := work.NodeHash(nid) // differs from ch when restored above
			_, movedSince := slices.BinarySearch(since, nid)
			if !ok1 || !ok2 || !ok3 || cn.Parent != an.Parent || wn.Parent != an.Parent || ch != ah || movedSince || !work.Has(bn.Parent) {
				continue // moved or changed since, or its place is gone
			}
			pn, _ := before.Get(bn.Parent)
			afterNID := ""
			for i := slices.Index(pn.Children, nid) - 1; i >= 0; i-- {
				if sib, ok := work.Get(pn.Children[i]); ok && sib.Parent == bn.Parent {
					afterNID = sib.NID
					break
				}
			}
			// Not added to done: a move does not restore what is inside.
			op := statute.Op{Op: statute.OpMove, NID: nid, Pre: wh, ParentNID: bn.Parent, AfterNID: afterNID}
			if err := statute.ApplyInPlace(work, []statute.Op{op}); err != nil {
				return dag.ID{}, err
			}
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return head, nil
	}
	c := &statute.Change{Base: cur.Hash(), Ops: ops, Result: work.Hash(), Parents: []dag.ID{head},
		Message: "Expiry of emergency MR " + e.mr.String() + " (D49)", Author: dag.SystemAuthor}
	id, err := c.ID()
	if err != nil {
		return dag.ID{}, err
	}
	if _, ok := h.changes[id]; !ok {
		h.changes[id] = &changeRec{c: c, tree: work}
	}
	return id, nil
}

// anyPresent reports whether t has any nid of the subtree spec.
func anyPresent(t *statute.Tree, spec *statute.NodeSpec) bool {
	stack := []*statute.NodeSpec{spec}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.Has(n.NID) {
			return true
		}
		for i := range n.Children {
			stack = append(stack, &n.Children[i])
		}
	}
	return false
}

// Expiries returns the emergency expiry changes applied in the session's
// current state, in the order they were applied.
func (h *House) Expiries() []Expiry { return slices.Clone(h.global().expired) }

func (h *House) noteWitnessed(id dag.ID, wit int64) {
	cs := h.cs()
	if wit > cs.maxWit || (wit == cs.maxWit && (!cs.maxWitTx.Valid() || id.Compare(cs.maxWitTx) < 0)) {
		cs.maxWit, cs.maxWitTx = wit, id
	}
}

// globalDue is the global state with the expiries due at the largest
// witnessed time of anything admitted (ballots and rankings included).
func (h *House) globalDue(st *govState) *govState {
	cs := h.cs()
	if cs.globalIn == st && cs.globalWit == cs.maxWit {
		return cs.globalOut
	}
	out := h.withDue(st, cs.maxWit, cs.maxWitTx)
	cs.globalIn, cs.globalWit, cs.globalOut = st, cs.maxWit, out
	return out
}
