package statute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Resolution settles one conflict of a merge (30k §4, §6 item 2): the final
// NodeSpec of nid, or nil to delete it.
type Resolution struct {
	NID  string
	Node *NodeSpec
}

type wireResolution struct {
	NID  *string         `json:"nid"`
	Node json.RawMessage `json:"node"`
}

// UnmarshalJSON decodes {"nid":"...","node":NodeSpec|null} strictly.
func (r *Resolution) UnmarshalJSON(b []byte) error {
	var w wireResolution
	if err := strictUnmarshal(b, &w); err != nil {
		return schemaErr("resolution: %v", err)
	}
	if w.NID == nil || w.Node == nil {
		return schemaErr("resolution: nid and node are required")
	}
	if err := CheckNID(*w.NID); err != nil {
		return err
	}
	*r = Resolution{NID: *w.NID}
	if string(w.Node) != "null" {
		r.Node = new(NodeSpec)
		if err := r.Node.decode(w.Node, 1); err != nil {
			return err
		}
		if r.Node.NID != r.NID {
			return schemaErr("resolution for %q carries node %q", trunc(r.NID), trunc(r.Node.NID))
		}
	}
	return nil
}

// MarshalJSON writes {"nid":...,"node":...|null}.
func (r Resolution) MarshalJSON() ([]byte, error) {
	b := append([]byte(nil), `{"nid":`...)
	b = dag.AppendString(b, r.NID)
	b = append(b, `,"node":`...)
	if r.Node == nil {
		b = append(b, "null"...)
	} else {
		b = r.Node.appendJSON(b)
	}
	return append(b, '}'), nil
}

// DecodeResolutions decodes an MR's "resolutions" array from untrusted
// bytes. A nid resolved twice is a schema error.
func DecodeResolutions(b []byte) ([]Resolution, error) {
	canon, err := canonical(b)
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(canon, &raws); err != nil {
		return nil, schemaErr("resolutions: %v", err)
	}
	out := make([]Resolution, len(raws))
	seen := map[string]bool{}
	for i, raw := range raws {
		if err := out[i].UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		if seen[out[i].NID] {
			return nil, schemaErr("resolutions: %q resolved twice", trunc(out[i].NID))
		}
		seen[out[i].NID] = true
	}
	return out, nil
}

// Errors of deriving a merge.
var (
	// ErrConflict is wrapped by a *ConflictError.
	ErrConflict = errors.New("statute: unresolved conflict")
	// ErrStale is wrapped (inside a *dag.ProtocolError with code stale_mr)
	// when a patch no longer applies to the target head (§6 item 3).
	ErrStale = errors.New("statute: merge request is stale")
	// ErrResolution is wrapped when a resolution names a nid that is not in
	// conflict, or cannot be placed.
	ErrResolution = errors.New("statute: bad resolution")
)

// ConflictError lists the nids changed differently on both sides that
// have no resolution. The MR is rejected (30k §6 item 2); on the wire this
// is code schema (docs/statute.md).
type ConflictError struct {
	NIDs []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("statute: %d unresolved conflict(s): %s", len(e.NIDs), strings.Join(e.NIDs, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Patch is the derived patch of a merge: ops that take the target head's
// snapshot to the merged snapshot.
type Patch struct {
	// Ops apply in order to the target snapshot the patch was derived for.
	Ops []Op
	// Conflicts are the nids changed differently on both sides, sorted; each
	// was settled by a resolution.
	Conflicts []string
	// Result is the merged snapshot.
	Result *Tree
}

// side is one side's changes relative to the merge-base.
type side struct {
	t     *Tree
	flags map[string]uint8
}

func (s side) has(nid string, f uint8) bool {
	return s.flags[nid]&f != 0
}

// Derive computes the derived patch of §6 item 2: compare the merge-base
// snapshot to source and to target, take every nid changed on one side
// only, take identical changes once, and settle every nid changed
// differently on both sides from resolutions. The ops it returns apply to
// target, each pre computed against the tree as the ops before it leave it.
//
// Per nid, a node's content (kind, heading, text), its placement (parent,
// order) and its existence are compared separately, so one side's edit of
// a section's text and the other's insertion of a subsection do not
// conflict. See docs/statute.md for every case.
//
// A node one side adds or moves under a node the other side removes is a
// conflict of its own. A node source adds or moves under a conflicted node
// that is absent from the merged tree when it would be placed takes no
// resolution of its own: it follows its ancestor's (dropped when that is
// null or lists no children).
//
// Unresolved conflicts give a *ConflictError; a resolution for a nid that
// is not in conflict, or a null resolution of the root, gives an error
// wrapping ErrResolution.
func Derive(base, source, target *Tree, resolutions []Resolution) (*Patch, error) {
	S := side{source, diffFlags(base, source)}
	T := side{target, diffFlags(base, target)}

	conflicts := map[string]bool{}
	for nid, fs := range S.flags {
		ft := T.flags[nid]
		if ft == 0 {
			continue
		}
		if conflicting(nid, fs, ft, source, target) {
			conflicts[nid] = true
		}
	}
	// A node one side adds or moves under a node the other side removes.
	orphaned := func(a, b side) {
		for nid, f := range a.flags {
			if f&(diffAdded|diffMoved) == 0 || f&diffRemoved != 0 {
				continue
			}
			p := a.t.nodes[nid].parent
			if b.has(p, diffRemoved) && !conflicts[p] {
				conflicts[nid] = true
			}
		}
	}
	orphaned(S, T)
	orphaned(T, S)

	res := map[string]*Resolution{}
	for i := range resolutions {
		res[resolutions[i].NID] = &resolutions[i]
	}
	// Building may find more conflicts (two one-sided moves that together
	// would make a node its own ancestor); each is added and the build
	// restarts, so the outcome does not depend on which was found first.
	var b *builder
	for {
		var cyc string
		var err error
		b, cyc, err = build(base, source, target, S, T, conflicts, res)
		if err != nil {
			return nil, err
		}
		if cyc == "" {
			break
		}
		conflicts[cyc] = true
	}
	for _, r := range resolutions {
		if !conflicts[r.NID] {
			return nil, fmt.Errorf("%w: %s is not in conflict", ErrResolution, r.NID)
		}
	}
	var unresolved []string
	for _, nid := range sortedKeys(conflicts) {
		if res[nid] == nil {
			unresolved = append(unresolved, nid)
		}
	}
	if len(unresolved) > 0 {
		return nil, &ConflictError{NIDs: unresolved}
	}
	if b.ops == nil {
		b.ops = []Op{}
	}
	return &Patch{Ops: b.ops, Conflicts: sortedKeys(conflicts), Result: b.cur}, nil
}

// build applies the derived patch to a copy of target. It returns the nid
// of a one-sided move that would put a node under its own descendant, if
// it meets one, for Derive to treat as a conflict. Resolutions of nids not
// (yet) in conflict are ignored here and refused by Derive.
func build(base, source, target *Tree, S, T side, conflicts map[string]bool, res map[string]*Resolution) (*builder, string, error) {
	b := &builder{cur: target.Clone()}

	// (a) Content taken from source.
	for _, nid := range sortedKeys(S.flags) {
		f := S.flags[nid]
		if conflicts[nid] || f&diffModified == 0 || T.has(nid, diffModified) {
			continue
		}
		sn := source.nodes[nid]
		if err := b.replace(nid, &NodeSpec{NID: nid, Kind: sn.kind, Heading: sn.heading, Text: sn.text}); err != nil {
			return nil, "", err
		}
	}
	// (b) Nodes source adds, and nodes it moves that target did not move,
	// in source document order so that parents and earlier siblings exist.
	for _, nid := range source.Order() {
		f := S.flags[nid]
		if conflicts[nid] || f&(diffAdded|diffMoved) == 0 {
			continue
		}
		if f&diffAdded != 0 && b.cur.Has(nid) {
			continue // added identically by target
		}
		if f&diffMoved != 0 && T.has(nid, diffMoved) {
			continue // moved by both to the same parent: keep target's order
		}
		parent := source.nodes[nid].parent
		if !b.cur.Has(parent) && underConflict(source, nid, conflicts) {
			continue // follows its conflicted ancestor's resolution
		}
		if b.cur.Has(nid) && b.cur.Has(parent) && isAncestorOrSelf(b.cur, nid, parent) {
			return nil, nid, nil
		}
		if err := b.place(nid, source); err != nil {
			return nil, "", err
		}
	}
	// (c) Resolutions, in nid order.
	for _, nid := range sortedKeys(res) {
		r := res[nid]
		if !conflicts[nid] {
			continue
		}
		switch {
		case r.Node == nil && nid == target.root:
			return nil, "", fmt.Errorf("%w: the root %s cannot be deleted", ErrResolution, nid)
		case r.Node == nil:
			if b.cur.Has(nid) {
				if err := b.delete(nid); err != nil {
					return nil, "", err
				}
			}
		case b.cur.Has(nid):
			if err := b.replace(nid, r.Node); err != nil {
				return nil, "", err
			}
		default:
			// Absent from target: place it where source has it.
			sn, ok := source.nodes[nid]
			if !ok || !b.cur.Has(sn.parent) {
				return nil, "", fmt.Errorf("%w: %s has no place in the merged tree", ErrResolution, nid)
			}
			spec := *r.Node
			if err := b.insert(sn.parent, b.anchor(nid, source), &spec); err != nil {
				return nil, "", err
			}
		}
	}
	// (d) Nodes source removes, outermost first, after everything that
	// moves out of them has moved.
	for _, nid := range base.Order() {
		if conflicts[nid] || !S.has(nid, diffRemoved) || !b.cur.Has(nid) {
			continue
		}
		if err := b.delete(nid); err != nil {
			return nil, "", err
		}
	}
	return b, "", nil
}

// underConflict reports whether a proper ancestor of nid in src is in
// conflict.
func underConflict(src *Tree, nid string, conflicts map[string]bool) bool {
	for a := src.nodes[nid].parent; a != ""; a = src.nodes[a].parent {
		if conflicts[a] {
			return true
		}
	}
	return false
}

// conflicting reports whether a nid touched on both sides was changed
// differently.
func conflicting(nid string, fs, ft uint8, s, t *Tree) bool {
	rs, rt := fs&diffRemoved != 0, ft&diffRemoved != 0
	if rs || rt {
		return rs != rt // removed on both: identical; else removal vs edit
	}
	sn, tn := s.nodes[nid], t.nodes[nid]
	if fs&diffAdded != 0 { // added on both
		return sn.kind != tn.kind || sn.heading != tn.heading || sn.text != tn.text || sn.parent != tn.parent
	}
	if fs&diffModified != 0 && ft&diffModified != 0 &&
		(sn.kind != tn.kind || sn.heading != tn.heading || sn.text != tn.text) {
		return true
	}
	if fs&diffMoved != 0 && ft&diffMoved != 0 && sn.parent != tn.parent {
		return true
	}
	return false
}

// builder emits ops against cur and applies each as it goes, so every pre
// is the hash the node has when its op runs.
type builder struct {
	cur *Tree
	ops []Op
}

func (b *builder) do(o Op) error {
	if err := b.cur.apply(&o); err != nil {
		return &ApplyError{Index: len(b.ops), Op: o.Op, NID: opNID(&o), Err: err}
	}
	b.ops = append(b.ops, o)
	return nil
}

func (b *builder) replace(nid string, spec *NodeSpec) error {
	pre, ok := b.cur.NodeHash(nid)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoNode, nid)
	}
	n := b.cur.nodes[nid]
	if !spec.HasChildren() && n.kind == spec.Kind && n.heading == spec.Heading && n.text == spec.Text {
		return nil
	}
	s := *spec
	return b.do(Op{Op: OpReplace, NID: nid, Pre: pre, Node: &s})
}

func (b *builder) delete(nid string) error {
	pre, _ := b.cur.NodeHash(nid)
	return b.do(Op{Op: OpDelete, NID: nid, Pre: pre})
}

func (b *builder) insert(parent, after string, spec *NodeSpec) error {
	return b.do(Op{Op: OpInsert, ParentNID: parent, AfterNID: after, Node: spec})
}

// anchor returns the sibling nid is to follow: the nearest earlier sibling
// in src that is already under the same parent in the merged tree, or ""
// (first).
func (b *builder) anchor(nid string, src *Tree) string {
	n := src.nodes[nid]
	sibs := src.nodes[n.parent].children
	i := slices.Index(sibs, nid)
	for j := i - 1; j >= 0; j-- {
		if c, ok := b.cur.nodes[sibs[j]]; ok && c.parent == n.parent {
			return sibs[j]
		}
	}
	return ""
}

// place inserts (without children: they follow in document order) or
// moves nid to where src has it, unless it is there already.
func (b *builder) place(nid string, src *Tree) error {
	n := src.nodes[nid]
	if !b.cur.Has(n.parent) {
		return fmt.Errorf("%w: parent %s of %s is not in the merged tree", ErrNoNode, n.parent, nid)
	}
	after := b.anchor(nid, src)
	if c, ok := b.cur.nodes[nid]; ok {
		if c.parent == n.parent {
			sibs := b.cur.nodes[n.parent].children
			i := slices.Index(sibs, nid)
			if (after == "" && i == 0) || (i > 0 && sibs[i-1] == after) {
				return nil
			}
		}
		pre, _ := b.cur.NodeHash(nid)
		return b.do(Op{Op: OpMove, NID: nid, Pre: pre, ParentNID: n.parent, AfterNID: after})
	}
	return b.insert(n.parent, after, &NodeSpec{NID: nid, Kind: n.kind, Heading: n.heading, Text: n.text})
}

// Rebase applies a patch derived for one target snapshot to the target
// branch's head as it is now (§6 item 3). If any op no longer applies, in
// particular if any pre no longer matches, the merge request is stale: the
// error is a *dag.ProtocolError with code stale_mr wrapping ErrStale and
// the *ApplyError.
func Rebase(head *Tree, ops []Op) (*Tree, error) {
	out, err := Apply(head, ops)
	if err != nil {
		return nil, &dag.ProtocolError{Code: dag.CodeStaleMR, Detail: err.Error(), Err: errors.Join(ErrStale, err)}
	}
	return out, nil
}

// MergeMessage is the message of a derived merge change: "merge " and the
// merge request's id. The spec leaves it open; docs/statute.md records it.
func MergeMessage(mr dag.ID) string { return "merge " + mr.String() }

// MergeChange derives the merge change of §6 item 4: author oth:system,
// parents [target head, source head], base the target head's snapshot, the
// patch's ops, and the merged snapshot as result. Every replica derives
// the same bytes from the same inputs.
func MergeChange(mr, targetHead, sourceHead dag.ID, head *Tree, ops []Op) (*Change, *Tree, error) {
	result, err := Rebase(head, ops)
	if err != nil {
		return nil, nil, err
	}
	c := &Change{
		Base:    head.Hash(),
		Ops:     slices.Clone(ops),
		Result:  result.Hash(),
		Parents: []dag.ID{targetHead, sourceHead},
		Message: MergeMessage(mr),
		Author:  dag.SystemAuthor,
	}
	return c, result, nil
}

// Snapshots gives the result snapshot of a change in the Change DAG.
type Snapshots interface {
	// Snapshot returns the tree of change id's result. For an unknown
	// change it returns an error wrapping ErrNotFound.
	Snapshot(change dag.ID) (*Tree, error)
}

// MergeRequest is what Open needs of an MR: its source and target heads
// (change ids) and its resolutions.
type MergeRequest struct {
	SourceHead, TargetHead dag.ID
	Resolutions            []Resolution
}

// Opened is the derived state of a merge request at open time.
type Opened struct {
	// Base is the merge-base change (§6 item 1).
	Base dag.ID
	// Patch applies to the target head's snapshot.
	Patch *Patch
	// Target is the target head's snapshot (before the merge).
	Target *Tree
}

// Open finds the merge-base of the MR's heads in the Change DAG (nearest
// common ancestor, smallest id on ties; none is no_common_ancestor) and
// derives the patch against the target head.
func Open(changes dag.ParentSource, snaps Snapshots, mr MergeRequest) (*Opened, error) {
	base, err := MergeBase(changes, mr.SourceHead, mr.TargetHead)
	if err != nil {
		return nil, err
	}
	bt, err := snaps.Snapshot(base)
	if err != nil {
		return nil, err
	}
	st, err := snaps.Snapshot(mr.SourceHead)
	if err != nil {
		return nil, err
	}
	tt, err := snaps.Snapshot(mr.TargetHead)
	if err != nil {
		return nil, err
	}
	p, err := Derive(bt, st, tt, mr.Resolutions)
	if err != nil {
		return nil, err
	}
	return &Opened{Base: base, Patch: p, Target: tt}, nil
}

// MergeBase returns the merge-base of two heads in the Change DAG (§6 item
// 1): the nearest common ancestor, the smallest id when there are several;
// with none, a *dag.ProtocolError with code no_common_ancestor. Ancestry is
// reflexive, so the merge-base of a change and its descendant is the
// change itself.
func MergeBase(changes dag.ParentSource, source, target dag.ID) (dag.ID, error) {
	// The Change DAG a pure evaluator holds is in memory: there is no
	// caller context to honour.
	return dag.MergeBase(context.Background(), changes, source, target)
}
