package statute

import (
	"testing"

	"github.com/witan-dev/witan/dag"
)

// n builds a NodeSpec: n(nid, kind, text, children...). Heading is derived
// from the nid's last path element so that trees stay short to write.
func n(nid, kind, text string, children ...NodeSpec) NodeSpec {
	s := NodeSpec{NID: nid, Kind: kind, Text: text, Children: children}
	if s.Children == nil {
		s.Children = []NodeSpec{}
	}
	return s
}

// sample is a small uslm-1 tree used across tests.
func sample() *Tree {
	s := n("/us", "root", "",
		n("/us/t1", "title", "General provisions",
			n("/us/t1/s1", "section", "The period is 30 days.",
				n("/us/t1/s1/a", "subsection", "[[def:agency]] An agency is a body."),
				n("/us/t1/s1/b", "subsection", "See [[ref:/us/t1/s2]]."),
			),
			n("/us/t1/s2", "section", "Fees of $5 apply."),
			n("/us/t1/s3", "section", "Reports are due yearly."),
		),
		n("/us/t2", "title", "Appropriations",
			n("/us/t2/s1", "section", "There is authorized $1,000,000."),
		),
	)
	return MustTree(&s)
}

// edit applies ops built against t's current state by f, returning the
// new tree; it fails the test on error.
func edit(t testing.TB, base *Tree, f func(b *builder)) *Tree {
	t.Helper()
	b := &builder{cur: base.Clone()}
	f(b)
	return b.cur
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func setText(t testing.TB, b *builder, nid, text string) {
	t.Helper()
	n := b.cur.nodes[nid]
	must(t, b.replace(nid, &NodeSpec{NID: nid, Kind: n.kind, Heading: n.heading, Text: text}))
}

func testID(s string) dag.ID { return dag.Sum([]byte(s)) }
