package statute

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// OpKind names one of the four ops of 30k §4.
type OpKind string

// The ops of 30k §4.
const (
	OpInsert  OpKind = "insert"
	OpReplace OpKind = "replace"
	OpDelete  OpKind = "delete"
	OpMove    OpKind = "move"
)

// Op is one edit of a statute tree (30k §4):
//
//	{"op":"insert","parent_nid":"...","after_nid":"...|null","node":NodeSpec}
//	{"op":"replace","nid":"...","pre":"sha256:<node_hash>","node":NodeSpec}
//	{"op":"delete","nid":"...","pre":"sha256:<node_hash>"}
//	{"op":"move","nid":"...","pre":"sha256:<node_hash>","parent_nid":"...","after_nid":"...|null"}
//
// AfterNID "" stands for null: the node goes first among its siblings.
// Ops apply in order, and each pre is compared with the node's hash in the
// tree as the ops before it left it.
type Op struct {
	Op        OpKind
	NID       string
	Pre       dag.ID
	ParentNID string
	AfterNID  string
	Node      *NodeSpec
}

// Errors of applying ops. An *ApplyError wraps one of them.
var (
	ErrPreMismatch = errors.New("statute: pre does not match the node's hash")
	ErrBadMove     = errors.New("statute: move into the node's own subtree or of the root")
	ErrBadAfter    = errors.New("statute: after_nid is not a child of parent_nid")
	ErrBadNode     = errors.New("statute: node spec does not fit the op")
)

// ApplyError reports the op that failed and why.
type ApplyError struct {
	Index int // position of the op in its list
	Op    OpKind
	NID   string
	Err   error
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("statute: op %d (%s %s): %v", e.Index, e.Op, e.NID, e.Err)
}

func (e *ApplyError) Unwrap() error { return e.Err }

type wireOp struct {
	Op        json.RawMessage `json:"op"`
	NID       json.RawMessage `json:"nid"`
	Pre       json.RawMessage `json:"pre"`
	ParentNID json.RawMessage `json:"parent_nid"`
	AfterNID  json.RawMessage `json:"after_nid"` // string or null
	Node      json.RawMessage `json:"node"`
}

// UnmarshalJSON decodes an op strictly: the members its kind needs and no
// others. after_nid may be null, and an absent after_nid reads as null.
func (o *Op) UnmarshalJSON(b []byte) error {
	var w wireOp
	if err := strictUnmarshal(b, &w); err != nil {
		return schemaErr("op: %v", err)
	}
	kind, err := jsonString(w.Op, "op")
	if err != nil {
		return err
	}
	*o = Op{Op: OpKind(kind)}
	var want map[string]bool
	switch o.Op {
	case OpInsert:
		want = map[string]bool{"parent_nid": true, "after_nid": true, "node": true}
	case OpReplace:
		want = map[string]bool{"nid": true, "pre": true, "node": true}
	case OpDelete:
		want = map[string]bool{"nid": true, "pre": true}
	case OpMove:
		want = map[string]bool{"nid": true, "pre": true, "parent_nid": true, "after_nid": true}
	default:
		return schemaErr("op %q is not insert, replace, delete or move", trunc(kind))
	}
	have := map[string]bool{"nid": w.NID != nil, "pre": w.Pre != nil, "parent_nid": w.ParentNID != nil, "after_nid": w.AfterNID != nil, "node": w.Node != nil}
	for _, k := range []string{"nid", "pre", "parent_nid", "node"} {
		if have[k] && !want[k] {
			return schemaErr("%s op: unexpected member %s", o.Op, k)
		}
		if !have[k] && want[k] {
			return schemaErr("%s op: missing %s", o.Op, k)
		}
	}
	if have["after_nid"] && !want["after_nid"] {
		return schemaErr("%s op: unexpected member after_nid", o.Op)
	}
	if w.NID != nil {
		if o.NID, err = jsonString(w.NID, "nid"); err != nil {
			return err
		}
		if err := CheckNID(o.NID); err != nil {
			return err
		}
	}
	if w.Pre != nil {
		s, err := jsonString(w.Pre, "pre")
		if err != nil {
			return err
		}
		if o.Pre, err = dag.ParseID(s); err != nil {
			return schemaErr("%s op: pre: %v", o.Op, err)
		}
	}
	if w.ParentNID != nil {
		if o.ParentNID, err = jsonString(w.ParentNID, "parent_nid"); err != nil {
			return err
		}
		if err := CheckNID(o.ParentNID); err != nil {
			return err
		}
	}
	if w.AfterNID != nil && string(w.AfterNID) != "null" {
		if o.AfterNID, err = jsonString(w.AfterNID, "after_nid"); err != nil {
			return err
		}
		if err := CheckNID(o.AfterNID); err != nil {
			return err
		}
	}
	if w.Node != nil {
		o.Node = new(NodeSpec)
		if err := o.Node.decode(w.Node, 1); err != nil {
			return err
		}
		if o.Op == OpReplace && o.Node.NID != o.NID {
			return schemaErr("replace op: node nid %q differs from nid %q", trunc(o.Node.NID), trunc(o.NID))
		}
	}
	return nil
}

// jsonString decodes a JSON string member; null or any other type is a
// schema error.
func jsonString(raw json.RawMessage, name string) (string, error) {
	if raw == nil {
		return "", schemaErr("missing %s", name)
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", schemaErr("%s is not a string", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", schemaErr("%s: %v", name, err)
	}
	return s, nil
}

// MarshalJSON writes the op canonically with exactly its kind's members;
// after_nid is written as null when empty.
func (o Op) MarshalJSON() ([]byte, error) {
	return o.appendJSON(nil)
}

func (o *Op) appendJSON(dst []byte) ([]byte, error) {
	str := func(dst []byte, k, v string) []byte {
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, `":`...)
		return dag.AppendString(dst, v)
	}
	after := func(dst []byte) []byte {
		if o.AfterNID == "" {
			return append(dst, `"after_nid":null`...)
		}
		return str(dst, "after_nid", o.AfterNID)
	}
	dst = append(dst, '{')
	switch o.Op {
	case OpInsert:
		if o.Node == nil {
			return nil, schemaErr("insert op without node")
		}
		dst = after(dst)
		dst = append(dst, `,"node":`...)
		dst = o.Node.appendJSON(dst)
		dst = append(dst, `,"op":"insert",`...)
		dst = str(dst, "parent_nid", o.ParentNID)
	case OpReplace:
		if o.Node == nil || !o.Pre.Valid() {
			return nil, schemaErr("replace op without node or pre")
		}
		dst = str(dst, "nid", o.NID)
		dst = append(dst, `,"node":`...)
		dst = o.Node.appendJSON(dst)
		dst = append(dst, `,"op":"replace",`...)
		dst = str(dst, "pre", o.Pre.String())
	case OpDelete:
		if !o.Pre.Valid() {
			return nil, schemaErr("delete op without pre")
		}
		dst = str(dst, "nid", o.NID)
		dst = append(dst, `,"op":"delete",`...)
		dst = str(dst, "pre", o.Pre.String())
	case OpMove:
		if !o.Pre.Valid() {
			return nil, schemaErr("move op without pre")
		}
		dst = after(dst)
		dst = append(dst, ',')
		dst = str(dst, "nid", o.NID)
		dst = append(dst, `,"op":"move",`...)
		dst = str(dst, "parent_nid", o.ParentNID)
		dst = append(dst, ',')
		dst = str(dst, "pre", o.Pre.String())
	default:
		return nil, schemaErr("op %q is not insert, replace, delete or move", trunc(string(o.Op)))
	}
	return append(dst, '}'), nil
}

// DecodeOp decodes one op from untrusted bytes (canonical JSON under
// witan's profile is checked first). Errors have code schema.
func DecodeOp(b []byte) (*Op, error) {
	canon, err := canonical(b)
	if err != nil {
		return nil, err
	}
	var o Op
	if err := o.UnmarshalJSON(canon); err != nil {
		return nil, err
	}
	return &o, nil
}

// Apply returns a copy of base with ops applied in order; base is not
// changed. The first op that cannot apply stops it with an *ApplyError.
func Apply(base *Tree, ops []Op) (*Tree, error) {
	t := base.Clone()
	for i := range ops {
		if err := t.apply(&ops[i]); err != nil {
			return nil, &ApplyError{Index: i, Op: ops[i].Op, NID: opNID(&ops[i]), Err: err}
		}
	}
	return t, nil
}

// ApplyInPlace applies ops to t itself, for callers that own t. On error t
// holds the ops before the failing one (and possibly part of it: discard t).
func ApplyInPlace(t *Tree, ops []Op) error {
	for i := range ops {
		if err := t.apply(&ops[i]); err != nil {
			return &ApplyError{Index: i, Op: ops[i].Op, NID: opNID(&ops[i]), Err: err}
		}
	}
	return nil
}

func opNID(o *Op) string {
	if o.Op == OpInsert && o.Node != nil {
		return o.Node.NID
	}
	return o.NID
}

func (t *Tree) apply(o *Op) error {
	switch o.Op {
	case OpInsert:
		if o.Node == nil {
			return ErrBadNode
		}
		if err := o.Node.Check(); err != nil {
			return err
		}
		if !t.Has(o.ParentNID) {
			return fmt.Errorf("%w: parent %s", ErrNoNode, o.ParentNID)
		}
		pos, err := t.afterPos(o.ParentNID, o.AfterNID, "")
		if err != nil {
			return err
		}
		if err := t.checkFresh(o.Node, ""); err != nil {
			return err
		}
		if err := t.addSpec(o.Node, o.ParentNID); err != nil {
			return err
		}
		p := t.own(o.ParentNID)
		p.children = insertAt(p.children, pos, o.Node.NID)
		t.dirty(o.ParentNID)
	case OpReplace:
		if o.Node == nil || o.Node.NID != o.NID {
			return ErrBadNode
		}
		if err := o.Node.Check(); err != nil {
			return err
		}
		if err := t.checkPre(o.NID, o.Pre); err != nil {
			return err
		}
		if o.Node.HasChildren() {
			if err := t.checkFresh(o.Node, o.NID); err != nil {
				return err
			}
		}
		n := t.own(o.NID)
		n.setContent(o.Node.Kind, o.Node.Heading, o.Node.Text)
		if o.Node.HasChildren() {
			for _, c := range n.children {
				t.removeSubtree(c)
			}
			n.children = make([]string, len(o.Node.Children))
			for i := range o.Node.Children {
				n.children[i] = o.Node.Children[i].NID
				if err := t.addSpec(&o.Node.Children[i], o.NID); err != nil {
					return err
				}
			}
		}
		t.dirty(o.NID)
	case OpDelete:
		if err := t.checkPre(o.NID, o.Pre); err != nil {
			return err
		}
		if o.NID == t.root {
			return fmt.Errorf("%w: delete of the root", ErrBadMove)
		}
		parent := t.nodes[o.NID].parent
		p := t.own(parent)
		p.children = remove(p.children, o.NID)
		t.removeSubtree(o.NID)
		t.dirty(parent)
	case OpMove:
		if err := t.checkPre(o.NID, o.Pre); err != nil {
			return err
		}
		if o.NID == t.root {
			return ErrBadMove
		}
		if !t.Has(o.ParentNID) {
			return fmt.Errorf("%w: parent %s", ErrNoNode, o.ParentNID)
		}
		for a := o.ParentNID; a != ""; a = t.nodes[a].parent {
			if a == o.NID {
				return ErrBadMove
			}
		}
		if o.AfterNID == o.NID {
			return fmt.Errorf("%w: a node cannot follow itself", ErrBadAfter)
		}
		old := t.nodes[o.NID].parent
		op := t.own(old)
		op.children = remove(op.children, o.NID)
		t.dirty(old)
		pos, err := t.afterPos(o.ParentNID, o.AfterNID, "")
		if err != nil {
			return err
		}
		np := t.own(o.ParentNID)
		np.children = insertAt(np.children, pos, o.NID)
		n := t.own(o.NID)
		n.parent = o.ParentNID
		t.dirty(o.NID)
	default:
		return fmt.Errorf("%w: unknown op %q", ErrBadNode, o.Op)
	}
	return nil
}

func (t *Tree) checkPre(nid string, pre dag.ID) error {
	if !t.Has(nid) {
		return fmt.Errorf("%w: %s", ErrNoNode, nid)
	}
	if h := t.nodeHash(nid); h != pre {
		return fmt.Errorf("%w: %s is %s, pre says %s", ErrPreMismatch, nid, h, pre)
	}
	return nil
}

// afterPos returns the index at which a node placed after `after` goes in
// parent's children: 0 for "" (first). after may not be `self`.
func (t *Tree) afterPos(parent, after, self string) (int, error) {
	if after == "" {
		return 0, nil
	}
	if after == self {
		return 0, fmt.Errorf("%w: a node cannot follow itself", ErrBadAfter)
	}
	for i, c := range t.nodes[parent].children {
		if c == after {
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: %s under %s", ErrBadAfter, after, parent)
}

// checkFresh fails if any nid of s's subtree is in the tree, except inside
// the subtree at `replacing` (which the op removes first) or s's own nid when
// it is `replacing`.
func (t *Tree) checkFresh(s *NodeSpec, replacing string) error {
	inReplaced := func(nid string) bool {
		if replacing == "" {
			return false
		}
		for a := nid; a != ""; a = t.nodes[a].parent {
			if a == replacing {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	stack := []*NodeSpec{s}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n.NID] {
			return fmt.Errorf("%w: %s", ErrDuplicateNID, n.NID)
		}
		seen[n.NID] = true
		if t.Has(n.NID) && !inReplaced(n.NID) {
			return fmt.Errorf("%w: %s", ErrDuplicateNID, n.NID)
		}
		for i := range n.Children {
			stack = append(stack, &n.Children[i])
		}
	}
	return nil
}

// removeSubtree deletes nid and its descendants from the map (the caller
// detaches nid from its parent).
func (t *Tree) removeSubtree(nid string) {
	stack := []string{nid}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		stack = append(stack, t.nodes[x].children...)
		delete(t.nodes, x)
	}
}

func insertAt(s []string, i int, v string) []string {
	s = append(s, "")
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func remove(s []string, v string) []string {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}
