package dag

// Node is a statute tree node as it is hashed (30k §4): its children appear
// by their node hashes. A snapshot id is the root node's hash, and a
// snapshot travels as the set of its Node objects, each named by its hash.
//
// Strings must be valid UTF-8 in NFC; the statute decoder checks that before
// anything is hashed. A missing heading or text is "".
type Node struct {
	NID      string `json:"nid"`
	Kind     string `json:"kind"`
	Heading  string `json:"heading"`
	Text     string `json:"text"`
	Children []ID   `json:"children"`
}

// Canonical returns JCS({nid, kind, heading, text, children}). It is
// written by hand, in RFC 8785 member order, because a 100,000-node tree is
// hashed on every check; a test keeps it equal to Canonicalize.
func (n *Node) Canonical() []byte {
	size := 64 + len(n.NID) + len(n.Kind) + len(n.Heading) + len(n.Text) + len(n.Children)*74
	return n.AppendCanonical(make([]byte, 0, size))
}

// AppendCanonical appends Canonical to dst.
func (n *Node) AppendCanonical(dst []byte) []byte {
	dst = append(dst, `{"children":[`...)
	for i, c := range n.Children {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, c.String()...)
		dst = append(dst, '"')
	}
	dst = append(dst, `],"heading":`...)
	dst = AppendString(dst, n.Heading)
	dst = append(dst, `,"kind":`...)
	dst = AppendString(dst, n.Kind)
	dst = append(dst, `,"nid":`...)
	dst = AppendString(dst, n.NID)
	dst = append(dst, `,"text":`...)
	dst = AppendString(dst, n.Text)
	return append(dst, '}')
}

// Hash returns the node_hash of 30k §4: the SHA-256 of Canonical.
func (n *Node) Hash() ID { return Sum(n.Canonical()) }

// NodeHash returns the node_hash of a node with these fields.
func NodeHash(nid, kind, heading, text string, children []ID) ID {
	n := Node{NID: nid, Kind: kind, Heading: heading, Text: text, Children: children}
	return n.Hash()
}
