package harness

import "fmt"

// Node is a statute tree node (30k §4 "Node").
type Node struct {
	NID, Kind, Heading, Text string
	Children                 []*Node
}

// object is the node's hashed form: {nid, kind, heading, text,
// children:[child node_hash...]}, missing heading and text as "".
func (n *Node) object() map[string]any {
	ch := make([]any, len(n.Children))
	for i, c := range n.Children {
		ch[i] = c.Hash()
	}
	return map[string]any{"nid": n.NID, "kind": n.Kind, "heading": n.Heading, "text": n.Text, "children": ch}
}

// Hash is the node_hash; a snapshot id is the root's.
func (n *Node) Hash() string { return ObjectID(n.object()) }

// Objects returns the canonical node objects of the whole tree, the
// attachments a session.create or a change's result needs.
func (n *Node) Objects() [][]byte {
	out := [][]byte{MustCanon(n.object())}
	for _, c := range n.Children {
		out = append(out, c.Objects()...)
	}
	return out
}

// Spec is the node as a NodeSpec (30k §4) with its whole subtree;
// heading and text only when non-empty.
func (n *Node) Spec(withChildren bool) map[string]any {
	m := map[string]any{"nid": n.NID, "kind": n.Kind}
	if n.Heading != "" {
		m["heading"] = n.Heading
	}
	if n.Text != "" {
		m["text"] = n.Text
	}
	if withChildren && len(n.Children) > 0 {
		ch := make([]any, len(n.Children))
		for i, c := range n.Children {
			ch[i] = c.Spec(true)
		}
		m["children"] = ch
	}
	return m
}

// Clone copies the tree.
func (n *Node) Clone() *Node {
	c := *n
	c.Children = make([]*Node, len(n.Children))
	for i, x := range n.Children {
		c.Children[i] = x.Clone()
	}
	return &c
}

// Find returns the node nid.
func (n *Node) Find(nid string) *Node {
	if n.NID == nid {
		return n
	}
	for _, c := range n.Children {
		if f := c.Find(nid); f != nil {
			return f
		}
	}
	return nil
}

// SeedStatute is the harness's seed: a uslm-1 root with one title of
// sections, section i reading "Section i: the period is 30 days." as
// heading "Section i" and text "The period is 30 days.".
func SeedStatute(sections int) *Node {
	title := &Node{NID: "/us/t1", Kind: "title", Heading: "Title 1"}
	for i := 1; i <= sections; i++ {
		title.Children = append(title.Children, &Node{NID: fmt.Sprintf("/us/t1/s%d", i), Kind: "section",
			Heading: fmt.Sprintf("Section %d", i), Text: "The period is 30 days."})
	}
	return &Node{NID: "/us", Kind: "root", Children: []*Node{title}}
}

// Edit is one text replacement.
type Edit struct{ NID, Text string }

// ReplaceOps applies edits to a copy of base and returns the replace ops
// (30k §4: {"op":"replace","nid","pre","node"}) and the result.
func ReplaceOps(base *Node, edits ...Edit) ([]any, *Node, error) {
	res := base.Clone()
	var ops []any
	for _, e := range edits {
		n := res.Find(e.NID)
		if n == nil {
			return nil, nil, fmt.Errorf("no node %s", e.NID)
		}
		pre := n.Hash()
		n.Text = e.Text
		ops = append(ops, map[string]any{"op": "replace", "nid": e.NID, "pre": pre, "node": n.Spec(true)})
	}
	return ops, res, nil
}

// Change is a change object (30k §4) with its id.
type Change struct {
	ID     string
	Object map[string]any
	Result *Node
}

// NewChange builds the change from base (whose snapshot is base's hash)
// with ops to result, on parent.
func NewChange(author string, parent string, base, result *Node, ops []any, message string) Change {
	if ops == nil {
		ops = []any{}
	}
	obj := map[string]any{"base": base.Hash(), "ops": ops, "result": result.Hash(), "parents": []string{parent},
		"message": message, "author": author}
	return Change{ID: ObjectID(obj), Object: obj, Result: result}
}
