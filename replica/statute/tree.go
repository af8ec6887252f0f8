package statute

// This file is the in-memory statute tree: a snapshot that can be hashed,
// cloned cheaply and edited by ops. Nodes are shared between clones and
// copied on first write, so a merge over a 100,000-node tree copies only the
// nodes it touches and their ancestors.

import (
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/text/unicode/norm"

	"github.com/witan-dev/witan/dag"
)

// Errors of tree construction and edits. Each is wrapped with the nid it is
// about; ops turn them into apply errors (see ApplyError).
var (
	ErrDuplicateNID = errors.New("statute: duplicate nid")
	ErrNoNode       = errors.New("statute: no such node")
	ErrNotFound     = errors.New("statute: object not found")
)

// node is one statute node inside a Tree. A node reachable from more than
// one Tree is immutable; a Tree writes only nodes it owns (see Tree.own).
type node struct {
	nid, kind, heading, text string
	parent                   string // "" for the root
	children                 []string
	marks                    *Markers // parsed from text when the content is set
	hash                     dag.ID   // cached node_hash; zero when dirty
	owner                    *int     // the Tree token that may write this node
}

// Node is a read-only view of one node of a Tree.
type Node struct {
	NID, Kind, Heading, Text string
	// Parent is the parent's nid, "" for the root.
	Parent string
	// Children are the children's nids in order. The slice is a copy.
	Children []string
}

// Tree is a statute snapshot in memory: nodes keyed by nid, each with its
// parent and ordered children. Its id (Hash) is the root's node_hash.
//
// A Tree is not safe for concurrent use while it is being edited. Once
// Hash has been called and while no edit is made, any number of goroutines
// may read it, Clone it and Apply ops to it (Apply edits a clone). Clone is
// O(number of nodes) in pointer copies and shares every node.
type Tree struct {
	root  string
	nodes map[string]*node
	tok   *int
	buf   []byte
	// shared is set by Clone (possibly from several goroutines at once):
	// every node t holds is now also held by another tree. The next edit
	// of t takes a fresh token, so it copies those nodes before writing.
	shared atomic.Bool
}

// NewTree builds a Tree from a NodeSpec and its children. Duplicate nids
// fail with ErrDuplicateNID; fields are checked as NodeSpec.Check does.
func NewTree(root *NodeSpec) (*Tree, error) {
	if err := root.Check(); err != nil {
		return nil, err
	}
	t := &Tree{nodes: make(map[string]*node), tok: new(int)}
	if err := t.addSpec(root, ""); err != nil {
		return nil, err
	}
	t.root = root.NID
	return t, nil
}

// MustTree is NewTree for tests and examples; it panics on error.
func MustTree(root *NodeSpec) *Tree {
	t, err := NewTree(root)
	if err != nil {
		panic(err)
	}
	return t
}

// addSpec adds s and its subtree under parent (iteratively: depth is bounded
// by the decoder, not by the Go stack, but ops can build deep trees).
func (t *Tree) addSpec(s *NodeSpec, parent string) error {
	type item struct {
		s      *NodeSpec
		parent string
	}
	stack := []item{{s, parent}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, dup := t.nodes[it.s.NID]; dup {
			return fmt.Errorf("%w: %s", ErrDuplicateNID, it.s.NID)
		}
		n := &node{nid: it.s.NID, parent: it.parent, owner: t.tok}
		n.setContent(it.s.Kind, it.s.Heading, it.s.Text)
		if len(it.s.Children) > 0 {
			n.children = make([]string, len(it.s.Children))
		}
		for i := range it.s.Children {
			n.children[i] = it.s.Children[i].NID
		}
		t.nodes[n.nid] = n
		for i := len(it.s.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{&it.s.Children[i], n.nid})
		}
	}
	return nil
}

func (n *node) setContent(kind, heading, text string) {
	n.kind, n.heading, n.text = kind, heading, text
	n.marks = parseMarkers(heading, text)
	n.hash = dag.ID{}
}

// Root returns the root's nid.
func (t *Tree) Root() string { return t.root }

// Len returns the number of nodes.
func (t *Tree) Len() int { return len(t.nodes) }

// Has reports whether the tree has a node with this nid.
func (t *Tree) Has(nid string) bool { _, ok := t.nodes[nid]; return ok }

// Get returns a view of the node nid.
func (t *Tree) Get(nid string) (Node, bool) {
	n, ok := t.nodes[nid]
	if !ok {
		return Node{}, false
	}
	return Node{NID: n.nid, Kind: n.kind, Heading: n.heading, Text: n.text, Parent: n.parent,
		Children: append([]string(nil), n.children...)}, true
}

// Markers returns the markers parsed from node nid's text.
func (t *Tree) Markers(nid string) (*Markers, bool) {
	n, ok := t.nodes[nid]
	if !ok {
		return nil, false
	}
	return n.marks, true
}

// Clone returns a tree that shares every node with t; writes to either copy
// leave the other unchanged. Hashes are settled first so that no shared
// node is ever written.
func (t *Tree) Clone() *Tree {
	t.Hash()
	c := &Tree{root: t.root, nodes: make(map[string]*node, len(t.nodes)), tok: new(int)}
	for k, v := range t.nodes {
		c.nodes[k] = v
	}
	t.shared.Store(true) // t no longer owns the nodes it now shares
	return c
}

// own returns a node of t that t may write, copying a shared one.
func (t *Tree) own(nid string) *node {
	if t.shared.Load() {
		t.tok = new(int)
		t.shared.Store(false)
	}
	n := t.nodes[nid]
	if n.owner == t.tok {
		return n
	}
	c := *n
	c.children = append([]string(nil), n.children...)
	c.owner = t.tok
	t.nodes[nid] = &c
	return &c
}

// dirty marks nid and its ancestors as needing a new hash. Invariant: the
// ancestors of a dirty node are dirty, so the walk stops at the first owned
// ancestor that already is.
func (t *Tree) dirty(nid string) {
	n := t.own(nid)
	n.hash = dag.ID{}
	for p := n.parent; p != ""; {
		a := t.nodes[p]
		if a.owner == t.tok && !a.hash.Valid() {
			return
		}
		a = t.own(p)
		a.hash = dag.ID{}
		p = a.parent
	}
}

// Hash returns the snapshot id: the root's node_hash.
func (t *Tree) Hash() dag.ID {
	if t.root == "" {
		return dag.ID{}
	}
	return t.nodeHash(t.root)
}

// NodeHash returns node nid's node_hash.
func (t *Tree) NodeHash(nid string) (dag.ID, bool) {
	if _, ok := t.nodes[nid]; !ok {
		return dag.ID{}, false
	}
	return t.nodeHash(nid), true
}

// hashOf is nodeHash for a node already looked up.
func (t *Tree) hashOf(n *node) dag.ID {
	if n.hash.Valid() {
		return n.hash
	}
	return t.nodeHash(n.nid)
}

// nodeHash computes hashes bottom-up for the dirty part of nid's subtree,
// with an explicit stack.
func (t *Tree) nodeHash(nid string) dag.ID {
	top := t.nodes[nid]
	if top.hash.Valid() {
		return top.hash
	}
	type frame struct {
		n    *node
		next int
	}
	stack := []frame{{n: top}}
	var ids []dag.ID
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.n.children) {
			c := t.nodes[f.n.children[f.next]]
			f.next++
			if !c.hash.Valid() {
				stack = append(stack, frame{n: c})
			}
			continue
		}
		ids = ids[:0]
		for _, c := range f.n.children {
			ids = append(ids, t.nodes[c].hash)
		}
		dn := dag.Node{NID: f.n.nid, Kind: f.n.kind, Heading: f.n.heading, Text: f.n.text, Children: ids}
		t.buf = dn.AppendCanonical(t.buf[:0])
		f.n.hash = dag.Sum(t.buf)
		stack = stack[:len(stack)-1]
	}
	return top.hash
}

// Spec returns the subtree at nid as a NodeSpec with every children list
// present.
func (t *Tree) Spec(nid string) (*NodeSpec, bool) {
	n, ok := t.nodes[nid]
	if !ok {
		return nil, false
	}
	out := &NodeSpec{}
	type item struct {
		n   *node
		dst *NodeSpec
	}
	stack := []item{{n, out}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		*it.dst = NodeSpec{NID: it.n.nid, Kind: it.n.kind, Heading: it.n.heading, Text: it.n.text,
			Children: make([]NodeSpec, len(it.n.children))}
		for i, c := range it.n.children {
			stack = append(stack, item{t.nodes[c], &it.dst.Children[i]})
		}
	}
	return out, true
}

// Walk calls fn for every node in document order (pre-order, children in
// order) until fn returns false.
func (t *Tree) Walk(fn func(n Node) bool) {
	t.walk(func(n *node, _ int) bool {
		return fn(Node{NID: n.nid, Kind: n.kind, Heading: n.heading, Text: n.text, Parent: n.parent, Children: n.children})
	})
}

// walk visits nodes in document order with their depth (root 0).
func (t *Tree) walk(fn func(n *node, depth int) bool) {
	if t.root == "" {
		return
	}
	type item struct {
		nid   string
		depth int
	}
	stack := []item{{t.root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := t.nodes[it.nid]
		if !fn(n, it.depth) {
			return
		}
		for i := len(n.children) - 1; i >= 0; i-- {
			stack = append(stack, item{n.children[i], it.depth + 1})
		}
	}
}

// Order returns every nid in document order.
func (t *Tree) Order() []string {
	out := make([]string, 0, len(t.nodes))
	t.walk(func(n *node, _ int) bool { out = append(out, n.nid); return true })
	return out
}

// Objects returns every node of the tree as the dag.Node object named by its
// node_hash, in document order: what a snapshot travels as (30K open point
// 11).
func (t *Tree) Objects() []dag.Node {
	t.Hash()
	out := make([]dag.Node, 0, len(t.nodes))
	t.walk(func(n *node, _ int) bool {
		ids := make([]dag.ID, len(n.children))
		for i, c := range n.children {
			ids[i] = t.nodes[c].hash
		}
		out = append(out, dag.Node{NID: n.nid, Kind: n.kind, Heading: n.heading, Text: n.text, Children: ids})
		return true
	})
	return out
}

// ObjectsNotIn returns the node objects of t that known lacks, in document
// order: what must travel with a change whose base is known and whose
// result is t. A subtree whose root has the same nid and hash in known is
// skipped whole (a node hash covers its nid and everything below it).
func (t *Tree) ObjectsNotIn(known *Tree) []dag.Node {
	t.Hash()
	var out []dag.Node
	stack := []*node{t.nodes[t.root]}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if k, ok := known.nodes[n.nid]; ok && (k == n || known.hashOf(k) == n.hash) {
			continue
		}
		ids := make([]dag.ID, len(n.children))
		for i, c := range n.children {
			ids[i] = t.nodes[c].hash
		}
		out = append(out, dag.Node{NID: n.nid, Kind: n.kind, Heading: n.heading, Text: n.text, Children: ids})
		for i := len(n.children) - 1; i >= 0; i-- {
			stack = append(stack, t.nodes[n.children[i]])
		}
	}
	return out
}

// NodeGetter returns the node object named by a node_hash. For a hash it
// does not hold it returns an error wrapping ErrNotFound (or the store's
// own not-found error).
type NodeGetter interface {
	Node(id dag.ID) (*dag.Node, error)
}

// NodeMap is an in-memory NodeGetter.
type NodeMap map[dag.ID]*dag.Node

// Node returns m[id] or an error wrapping ErrNotFound.
func (m NodeMap) Node(id dag.ID) (*dag.Node, error) {
	n, ok := m[id]
	if !ok {
		return nil, fmt.Errorf("statute: node %s: %w", id, ErrNotFound)
	}
	return n, nil
}

// LoadTree rebuilds the snapshot whose id is root from its node objects.
// Every object's hash is recomputed and must equal the id it was fetched
// by, and nids must be unique; either failure is a schema error.
func LoadTree(root dag.ID, get NodeGetter) (*Tree, error) {
	t := &Tree{nodes: make(map[string]*node), tok: new(int)}
	type item struct {
		id     dag.ID
		parent string
	}
	stack := []item{{root, ""}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dn, err := get.Node(it.id)
		if err != nil {
			return nil, err
		}
		if h := dn.Hash(); h != it.id {
			return nil, schemaErr("node object %s hashes to %s", it.id, h)
		}
		s := NodeSpec{NID: dn.NID, Kind: dn.Kind, Heading: dn.Heading, Text: dn.Text}
		if err := s.checkFields(); err != nil {
			return nil, err
		}
		if _, dup := t.nodes[dn.NID]; dup {
			return nil, schemaErr("snapshot %s: %v", root, fmt.Errorf("%w: %s", ErrDuplicateNID, dn.NID))
		}
		n := &node{nid: dn.NID, parent: it.parent, owner: t.tok, hash: it.id}
		n.kind, n.heading, n.text = dn.Kind, dn.Heading, dn.Text
		n.marks = parseMarkers(dn.Heading, dn.Text)
		n.children = make([]string, 0, len(dn.Children))
		t.nodes[n.nid] = n
		if it.parent == "" {
			t.root = n.nid
		}
		// Children's nids are known only once they are fetched; record
		// them as they arrive (see below).
		for i := len(dn.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{dn.Children[i], n.nid})
		}
		if it.parent != "" {
			p := t.nodes[it.parent]
			p.children = append(p.children, n.nid)
		}
	}
	return t, nil
}

func isNFC(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return norm.NFC.IsNormalString(s)
		}
	}
	return true
}
