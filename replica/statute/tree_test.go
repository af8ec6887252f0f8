package statute

import (
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
)

func TestTreeHashIsNodeHashOfChildren(t *testing.T) {
	s := n("/r", "root", "", n("/r/a", "title", "A"), n("/r/b", "title", "B", n("/r/b/1", "section", "one")))
	tr := MustTree(&s)
	a := dag.NodeHash("/r/a", "title", "", "A", nil)
	b1 := dag.NodeHash("/r/b/1", "section", "", "one", nil)
	b := dag.NodeHash("/r/b", "title", "", "B", []dag.ID{b1})
	want := dag.NodeHash("/r", "root", "", "", []dag.ID{a, b})
	if got := tr.Hash(); got != want {
		t.Fatalf("snapshot id %s, want %s", got, want)
	}
	if h, _ := tr.NodeHash("/r/b"); h != b {
		t.Fatalf("node hash of /r/b %s, want %s", h, b)
	}
}

func TestLoadTreeRoundTrip(t *testing.T) {
	tr := sample()
	m := NodeMap{}
	for _, o := range tr.Objects() {
		o := o
		m[o.Hash()] = &o
	}
	got, err := LoadTree(tr.Hash(), m)
	must(t, err)
	if got.Hash() != tr.Hash() || got.Len() != tr.Len() {
		t.Fatalf("loaded %s (%d nodes), want %s (%d)", got.Hash(), got.Len(), tr.Hash(), tr.Len())
	}
	if o1, o2 := got.Order(), tr.Order(); len(o1) != len(o2) || o1[3] != o2[3] {
		t.Fatalf("order differs: %v vs %v", o1, o2)
	}
	// A missing object and a tampered object both fail.
	delete(m, func() dag.ID { h, _ := tr.NodeHash("/us/t1/s2"); return h }())
	if _, err := LoadTree(tr.Hash(), m); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing node: %v", err)
	}
	m2 := NodeMap{}
	for _, o := range tr.Objects() {
		o := o
		m2[o.Hash()] = &o
	}
	h, _ := tr.NodeHash("/us/t1/s3")
	bad := *m2[h]
	bad.Text = "tampered"
	m2[h] = &bad
	if _, err := LoadTree(tr.Hash(), m2); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("tampered node: %v", err)
	}
}

func TestNewTreeRejectsDuplicates(t *testing.T) {
	s := n("/r", "root", "", n("/r/a", "title", ""), n("/r/a", "title", ""))
	if _, err := NewTree(&s); !errors.Is(err, ErrDuplicateNID) {
		t.Fatalf("got %v", err)
	}
	s = n("r", "root", "")
	if _, err := NewTree(&s); dag.CodeOf(err) != dag.CodeSchema {
		t.Fatalf("bad nid: %v", err)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	a := sample()
	h := a.Hash()
	b := edit(t, a, func(b *builder) { setText(t, b, "/us/t1/s2", "Fees of $6 apply.") })
	if a.Hash() != h {
		t.Fatal("editing a clone changed the original")
	}
	if b.Hash() == h {
		t.Fatal("edit did not change the clone")
	}
	// And the other way round: editing the original after Clone.
	c := a.Clone()
	must(t, ApplyInPlace(a, []Op{{Op: OpDelete, NID: "/us/t1/s3", Pre: mustHash(a, "/us/t1/s3")}}))
	if c.Hash() != h {
		t.Fatal("editing the original changed its clone")
	}
}

func mustHash(t *Tree, nid string) dag.ID {
	h, ok := t.NodeHash(nid)
	if !ok {
		panic("no node " + nid)
	}
	return h
}

func TestSpecRoundTrip(t *testing.T) {
	tr := sample()
	s, _ := tr.Spec(tr.Root())
	b, err := s.MarshalJSON()
	must(t, err)
	s2, err := DecodeNodeSpec(b)
	must(t, err)
	if MustTree(s2).Hash() != tr.Hash() {
		t.Fatal("spec round trip changed the snapshot")
	}
}

func TestDate(t *testing.T) {
	for _, s := range []string{"1970-01-01", "2000-02-29", "2026-12-31", "0001-01-01", "9999-12-31"} {
		d, err := ParseDate(s)
		must(t, err)
		if d.String() != s {
			t.Errorf("%s -> %s", s, d)
		}
	}
	if MustDate("2026-03-01")-MustDate("2026-02-28") != 1 || MustDate("2024-03-01")-MustDate("2024-02-28") != 2 {
		t.Error("leap years")
	}
	for _, s := range []string{"2026-02-29", "2026-13-01", "2026-1-01", "20260101", "2026-00-10", "x"} {
		if _, err := ParseDate(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// Once hashed, a tree can be cloned and edited from many goroutines at
// once (run with -race); each edit sees only its own changes.
func TestConcurrentApplyOnSharedTree(t *testing.T) {
	base := sample()
	want := base.Hash()
	done := make(chan dag.ID)
	for i := 0; i < 8; i++ {
		go func(i int) {
			pre, _ := base.NodeHash("/us/t1/s2")
			out, err := Apply(base, []Op{{Op: OpReplace, NID: "/us/t1/s2", Pre: pre, Node: &NodeSpec{NID: "/us/t1/s2", Kind: "section", Text: "v" + string(rune('0'+i))}}})
			if err != nil {
				done <- dag.ID{}
				return
			}
			done <- out.Hash()
		}(i)
	}
	seen := map[dag.ID]bool{}
	for i := 0; i < 8; i++ {
		h := <-done
		if !h.Valid() || seen[h] {
			t.Fatal("concurrent edits interfered")
		}
		seen[h] = true
	}
	if base.Hash() != want {
		t.Fatal("the shared tree changed")
	}
	// And the original can still be edited afterwards without touching
	// what its clones share.
	c := base.Clone()
	must(t, ApplyInPlace(base, []Op{{Op: OpDelete, NID: "/us/t1/s3", Pre: mustHash(base, "/us/t1/s3")}}))
	if c.Hash() != want || base.Hash() == want {
		t.Fatal("in-place edit after Clone leaked")
	}
}

// The objects a change must carry are exactly the new ones: with them and
// the base's objects, the result loads.
func TestObjectsNotIn(t *testing.T) {
	base := sample()
	after := edit(t, base, func(b *builder) {
		setText(t, b, "/us/t1/s1/a", "[[def:agency]] Any office.")
		must(t, b.insert("/us/t2", "", &NodeSpec{NID: "/us/t2/s0", Kind: "section", Text: "new"}))
	})
	objs := after.ObjectsNotIn(base)
	var nids []string
	m := NodeMap{}
	for _, o := range base.Objects() {
		o := o
		m[o.Hash()] = &o
	}
	for _, o := range objs {
		o := o
		nids = append(nids, o.NID)
		m[o.Hash()] = &o
	}
	want := []string{"/us", "/us/t1", "/us/t1/s1", "/us/t1/s1/a", "/us/t2", "/us/t2/s0"}
	if strings.Join(nids, ",") != strings.Join(want, ",") {
		t.Fatalf("objects %v, want %v", nids, want)
	}
	got, err := LoadTree(after.Hash(), m)
	must(t, err)
	if got.Hash() != after.Hash() {
		t.Fatal("result does not load from base objects plus new ones")
	}
}
