package statute

import (
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// repo is a tiny in-memory Change DAG with the snapshot of every change.
type repo struct {
	parents dag.ParentMap
	snaps   map[dag.ID]*Tree
}

func newRepo(seed *Tree) (*repo, dag.ID) {
	r := &repo{parents: dag.ParentMap{}, snaps: map[dag.ID]*Tree{}}
	c := &Change{Base: seed.Hash(), Ops: []Op{}, Result: seed.Hash(), Parents: []dag.ID{}, Message: "seed", Author: dag.SystemAuthor}
	id, err := c.ID()
	if err != nil {
		panic(err)
	}
	r.parents[id] = nil
	r.snaps[id] = seed
	return r, id
}

func (r *repo) Snapshot(id dag.ID) (*Tree, error) {
	t, ok := r.snaps[id]
	if !ok {
		return nil, ErrNotFound
	}
	return t, nil
}

// commit records a change from parent whose ops f emits.
func (r *repo) commit(t testing.TB, parent dag.ID, msg string, f func(b *builder)) dag.ID {
	t.Helper()
	base := r.snaps[parent]
	b := &builder{cur: base.Clone()}
	f(b)
	c := &Change{Base: base.Hash(), Ops: b.ops, Result: b.cur.Hash(), Parents: []dag.ID{parent}, Message: msg, Author: dag.SystemAuthor}
	if b.ops == nil {
		c.Ops = []Op{}
	}
	if _, err := c.Verify(base); err != nil {
		t.Fatal(err)
	}
	id, err := c.ID()
	must(t, err)
	r.parents[id] = []dag.ID{parent}
	r.snaps[id] = b.cur
	return id
}

func text(tr *Tree, nid string) string { n, _ := tr.Get(nid); return n.Text }

// S2: concurrent conflicting edits, then a resolution.
func TestS2ConcurrentConflictingEdits(t *testing.T) {
	r, seed := newRepo(sample())
	target := r.commit(t, seed, "root edit", func(b *builder) {
		setText(t, b, "/us/t1/s1", "The period is 40 days.")
		setText(t, b, "/us/t1/s3", "Reports are due monthly.") // one side only
	})
	source := r.commit(t, seed, "branch edit", func(b *builder) {
		setText(t, b, "/us/t1/s1", "The period is 45 days.")
		setText(t, b, "/us/t2/s1", "There is authorized $2,000,000.") // one side only
	})
	_, err := Open(r.parents, r, MergeRequest{SourceHead: source, TargetHead: target})
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.NIDs, []string{"/us/t1/s1"}) || !errors.Is(err, ErrConflict) {
		t.Fatalf("want a conflict on /us/t1/s1, got %v", err)
	}
	res := []Resolution{{NID: "/us/t1/s1", Node: &NodeSpec{NID: "/us/t1/s1", Kind: "section", Text: "The period is 42 days."}}}
	o, err := Open(r.parents, r, MergeRequest{SourceHead: source, TargetHead: target, Resolutions: res})
	must(t, err)
	if o.Base != seed {
		t.Fatalf("merge-base %s, want the seed change", o.Base)
	}
	m := o.Patch.Result
	for nid, want := range map[string]string{
		"/us/t1/s1": "The period is 42 days.",
		"/us/t1/s3": "Reports are due monthly.",
		"/us/t2/s1": "There is authorized $2,000,000.",
		"/us/t1/s2": "Fees of $5 apply.",
	} {
		if got := text(m, nid); got != want {
			t.Errorf("%s = %q, want %q", nid, got, want)
		}
	}
	// The merge change: oth:system, parents [target, source], verifies.
	mr := testID("mr")
	c, res2, err := MergeChange(mr, target, source, o.Target, o.Patch.Ops)
	must(t, err)
	if c.Author != dag.SystemAuthor || !slices.Equal(c.Parents, []dag.ID{target, source}) || c.Result != m.Hash() || res2.Hash() != m.Hash() {
		t.Fatalf("merge change %+v", c)
	}
	if _, err := c.Verify(o.Target); err != nil {
		t.Fatal(err)
	}
	// Identical on every replica: derive again from scratch, same bytes.
	r2, _ := newRepo(sample())
	for k, v := range r.parents {
		r2.parents[k] = v
	}
	for k, v := range r.snaps {
		spec, _ := v.Spec(v.Root())
		r2.snaps[k] = MustTree(spec)
	}
	o2, err := Open(r2.parents, r2, MergeRequest{SourceHead: source, TargetHead: target, Resolutions: res})
	must(t, err)
	c2, _, err := MergeChange(mr, target, source, o2.Target, o2.Patch.Ops)
	must(t, err)
	b1, _ := c.Canonical()
	b2, _ := c2.Canonical()
	if string(b1) != string(b2) {
		t.Fatalf("replicas derived different merge changes:\n%s\n%s", b1, b2)
	}
	// A resolution for a nid not in conflict is refused.
	bad := append(slices.Clone(res), Resolution{NID: "/us/t1/s2"})
	if _, err := Open(r.parents, r, MergeRequest{SourceHead: source, TargetHead: target, Resolutions: bad}); !errors.Is(err, ErrResolution) {
		t.Fatalf("extra resolution: %v", err)
	}
}

// S5: the target head moves after ballots; executing the approval finds a
// pre that no longer matches and the MR is stale.
func TestS5StaleAfterHeadMoves(t *testing.T) {
	r, seed := newRepo(sample())
	source := r.commit(t, seed, "branch", func(b *builder) { setText(t, b, "/us/t1/s1", "The period is 45 days.") })
	o, err := Open(r.parents, r, MergeRequest{SourceHead: source, TargetHead: seed})
	must(t, err)
	// Unrelated move of the head: still applies.
	elsewhere := r.commit(t, seed, "other", func(b *builder) { setText(t, b, "/us/t2/s1", "There is authorized $3.") })
	if _, _, err := MergeChange(testID("mr"), elsewhere, source, r.snaps[elsewhere], o.Patch.Ops); err != nil {
		t.Fatalf("unrelated head move made the MR stale: %v", err)
	}
	// The bait-and-switch: the node the MR replaces changes under it.
	for name, f := range map[string]func(b *builder){
		"same node":  func(b *builder) { setText(t, b, "/us/t1/s1", "The period is 300 days.") },
		"descendant": func(b *builder) { setText(t, b, "/us/t1/s1/b", "See nothing.") },
		"deleted": func(b *builder) {
			must(t, b.delete("/us/t1/s1"))
		},
	} {
		moved := r.commit(t, seed, name, f)
		_, _, err := MergeChange(testID("mr"), moved, source, r.snaps[moved], o.Patch.Ops)
		if dag.CodeOf(err) != dag.CodeStaleMR || !errors.Is(err, ErrStale) {
			t.Errorf("%s: err %v, want stale_mr", name, err)
		}
	}
}

func TestNoCommonAncestor(t *testing.T) {
	r, seed := newRepo(sample())
	other := MustTree(&NodeSpec{NID: "/x", Kind: "root"})
	r2, seed2 := newRepo(other)
	for k, v := range r2.parents {
		r.parents[k] = v
		r.snaps[k] = r2.snaps[k]
	}
	_, err := Open(r.parents, r, MergeRequest{SourceHead: seed2, TargetHead: seed})
	if dag.CodeOf(err) != dag.CodeNoCommonAncestor {
		t.Fatalf("got %v", err)
	}
}

func TestDeriveCases(t *testing.T) {
	base := sample()
	spec := func(nid, kind, text string) *NodeSpec { return &NodeSpec{NID: nid, Kind: kind, Text: text} }
	tests := []struct {
		name      string
		src, tgt  func(b *builder)
		conflicts []string
		check     func(t *testing.T, m *Tree)
	}{
		{
			name: "identical change on both sides",
			src:  func(b *builder) { setText(t, b, "/us/t1/s2", "Fees of $7 apply.") },
			tgt:  func(b *builder) { setText(t, b, "/us/t1/s2", "Fees of $7 apply.") },
			check: func(t *testing.T, m *Tree) {
				if text(m, "/us/t1/s2") != "Fees of $7 apply." {
					t.Error(text(m, "/us/t1/s2"))
				}
			},
		},
		{
			name: "text edit and sibling insert do not conflict",
			src:  func(b *builder) { setText(t, b, "/us/t1", "General provisions, amended") },
			tgt: func(b *builder) {
				must(t, b.insert("/us/t1", "/us/t1/s3", spec("/us/t1/s4", "section", "New.")))
			},
			check: func(t *testing.T, m *Tree) {
				n, _ := m.Get("/us/t1")
				if n.Text != "General provisions, amended" || !slices.Equal(n.Children, []string{"/us/t1/s1", "/us/t1/s2", "/us/t1/s3", "/us/t1/s4"}) {
					t.Errorf("%+v", n)
				}
			},
		},
		{
			name: "both insert under one parent: target's first",
			src:  func(b *builder) { must(t, b.insert("/us/t1", "/us/t1/s1", spec("/us/t1/sB", "section", "B"))) },
			tgt:  func(b *builder) { must(t, b.insert("/us/t1", "/us/t1/s1", spec("/us/t1/sA", "section", "A"))) },
			check: func(t *testing.T, m *Tree) {
				n, _ := m.Get("/us/t1")
				if !slices.Equal(n.Children, []string{"/us/t1/s1", "/us/t1/sB", "/us/t1/sA", "/us/t1/s2", "/us/t1/s3"}) {
					t.Errorf("%v", n.Children)
				}
			},
		},
		{
			name:      "delete vs edit conflicts",
			src:       func(b *builder) { must(t, b.delete("/us/t1/s3")) },
			tgt:       func(b *builder) { setText(t, b, "/us/t1/s3", "Reports are due daily.") },
			conflicts: []string{"/us/t1/s3"},
		},
		{
			name:      "insert under a node the other side deletes conflicts",
			src:       func(b *builder) { must(t, b.insert("/us/t1/s2", "", spec("/us/t1/s2/a", "subsection", "x"))) },
			tgt:       func(b *builder) { must(t, b.delete("/us/t1/s2")) },
			conflicts: []string{"/us/t1/s2/a"},
		},
		{
			name: "a subtree added under a removed node is one conflict",
			src: func(b *builder) {
				must(t, b.insert("/us/t1/s2", "", spec("/us/t1/s2/a", "subsection", "x")))
				must(t, b.insert("/us/t1/s2/a", "", spec("/us/t1/s2/a/1", "paragraph", "y")))
			},
			tgt:       func(b *builder) { must(t, b.delete("/us/t1/s2")) },
			conflicts: []string{"/us/t1/s2/a"},
			check: func(t *testing.T, m *Tree) {
				if m.Has("/us/t1/s2/a/1") || m.Has("/us/t1/s2") {
					t.Error("the added subtree outlived its dropped ancestor")
				}
			},
		},
		{
			name:      "target adds under a node source deletes: conflict",
			src:       func(b *builder) { must(t, b.delete("/us/t1/s2")) },
			tgt:       func(b *builder) { must(t, b.insert("/us/t1/s2", "", spec("/us/t1/s2/a", "subsection", "x"))) },
			conflicts: []string{"/us/t1/s2/a"},
		},
		{
			name: "move out then delete the old parent",
			src: func(b *builder) {
				pre, _ := b.cur.NodeHash("/us/t1/s1/a")
				must(t, b.do(Op{Op: OpMove, NID: "/us/t1/s1/a", Pre: pre, ParentNID: "/us/t1/s2"}))
				must(t, b.delete("/us/t1/s1"))
			},
			tgt: func(b *builder) { setText(t, b, "/us/t2/s1", "x") },
			check: func(t *testing.T, m *Tree) {
				if m.Has("/us/t1/s1") || !m.Has("/us/t1/s1/a") || m.Has("/us/t1/s1/b") {
					t.Error(m.Order())
				}
			},
		},
		{
			name: "moved to different parents conflicts",
			src: func(b *builder) {
				must(t, b.do(Op{Op: OpMove, NID: "/us/t1/s3", Pre: mustHash(b.cur, "/us/t1/s3"), ParentNID: "/us/t2"}))
			},
			tgt: func(b *builder) {
				must(t, b.do(Op{Op: OpMove, NID: "/us/t1/s3", Pre: mustHash(b.cur, "/us/t1/s3"), ParentNID: "/us/t1/s1"}))
			},
			conflicts: []string{"/us/t1/s3"},
		},
		{
			name: "reorder on source, edit on target",
			src: func(b *builder) {
				must(t, b.do(Op{Op: OpMove, NID: "/us/t1/s3", Pre: mustHash(b.cur, "/us/t1/s3"), ParentNID: "/us/t1"}))
			},
			tgt: func(b *builder) { setText(t, b, "/us/t1/s3", "Reports are due weekly.") },
			check: func(t *testing.T, m *Tree) {
				n, _ := m.Get("/us/t1")
				if n.Children[0] != "/us/t1/s3" || text(m, "/us/t1/s3") != "Reports are due weekly." {
					t.Errorf("%v %q", n.Children, text(m, "/us/t1/s3"))
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, tgt := edit(t, base, tc.src), edit(t, base, tc.tgt)
			p, err := Derive(base, src, tgt, nil)
			if tc.conflicts != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) || !slices.Equal(ce.NIDs, tc.conflicts) {
					t.Fatalf("err %v, want conflicts %v", err, tc.conflicts)
				}
				// Resolving every conflict with null always yields a tree.
				var res []Resolution
				for _, nid := range ce.NIDs {
					res = append(res, Resolution{NID: nid})
				}
				p, err := Derive(base, src, tgt, res)
				must(t, err)
				for _, nid := range ce.NIDs {
					if p.Result.Has(nid) {
						t.Errorf("%s survived a null resolution", nid)
					}
				}
				if got, err := Apply(tgt, p.Ops); err != nil || got.Hash() != p.Result.Hash() {
					t.Fatalf("resolved patch does not reproduce its result: %v", err)
				}
				if tc.check != nil {
					tc.check(t, p.Result)
				}
				return
			}
			must(t, err)
			got, err := Apply(tgt, p.Ops)
			must(t, err)
			if got.Hash() != p.Result.Hash() {
				t.Fatal("patch ops do not reproduce the result")
			}
			tc.check(t, p.Result)
		})
	}
}

func TestResolutionJSON(t *testing.T) {
	rs, err := DecodeResolutions([]byte(`[{"nid":"/a","node":null},{"nid":"/b","node":{"kind":"section","nid":"/b","text":"x"}}]`))
	must(t, err)
	if len(rs) != 2 || rs[0].Node != nil || rs[1].Node.Text != "x" {
		t.Fatalf("%+v", rs)
	}
	b, _ := rs[1].MarshalJSON()
	if string(b) != `{"nid":"/b","node":{"kind":"section","nid":"/b","text":"x"}}` {
		t.Fatalf("%s", b)
	}
	for _, s := range []string{`[{"nid":"/a"}]`, `[{"nid":"/a","node":null},{"nid":"/a","node":null}]`, `[{"nid":"/a","node":{"kind":"s","nid":"/b"}}]`, `{}`} {
		if _, err := DecodeResolutions([]byte(s)); dag.CodeOf(err) != dag.CodeSchema {
			t.Errorf("%s: %v", s, err)
		}
	}
}
