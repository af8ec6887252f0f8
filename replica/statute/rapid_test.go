package statute

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

// genTree draws a random akn-generic-shaped tree of up to max nodes.
func genTree(t *rapid.T, max int) *Tree {
	size := rapid.IntRange(1, max).Draw(t, "size")
	root := &NodeSpec{NID: "/r", Kind: "root", Children: []NodeSpec{}}
	all := []*NodeSpec{root}
	for i := 1; i < size; i++ {
		p := all[rapid.IntRange(0, len(all)-1).Draw(t, "parent")]
		p.Children = append(p.Children, NodeSpec{NID: fmt.Sprintf("/r/n%d", i), Kind: "hcontainer", Text: fmt.Sprintf("text %d", i), Children: []NodeSpec{}})
		// Pointers into Children are invalidated by append: rebuild.
		all = all[:0]
		stack := []*NodeSpec{root}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			all = append(all, x)
			for j := range x.Children {
				stack = append(stack, &x.Children[j])
			}
		}
	}
	return MustTree(root)
}

// genEdits applies up to k random valid ops to a clone of base and
// returns the edited tree. fresh names new nids.
func genEdits(t *rapid.T, base *Tree, k int, label string, fresh *int) *Tree {
	b := &builder{cur: base.Clone()}
	n := rapid.IntRange(0, k).Draw(t, label+"-n")
	for i := 0; i < n; i++ {
		nids := b.cur.Order()
		pick := func(name string, nonRoot bool) string {
			lo := 0
			if nonRoot {
				lo = 1
			}
			if len(nids) <= lo {
				return ""
			}
			return nids[rapid.IntRange(lo, len(nids)-1).Draw(t, name)]
		}
		switch rapid.IntRange(0, 3).Draw(t, label+"-op") {
		case 0: // replace text
			nid := pick(label+"-r", false)
			nd := b.cur.nodes[nid]
			txt := rapid.SampledFrom([]string{"alpha 30", "beta 45", "gamma [[def:t]]", "delta [[ref:/r/n1]]", "eps $5 funds"}).Draw(t, label+"-txt")
			if err := b.replace(nid, &NodeSpec{NID: nid, Kind: nd.kind, Text: txt}); err != nil {
				t.Fatal(err)
			}
		case 1: // insert
			parent := pick(label+"-ip", false)
			ch := b.cur.nodes[parent].children
			after := ""
			if len(ch) > 0 && rapid.Bool().Draw(t, label+"-ia") {
				after = ch[rapid.IntRange(0, len(ch)-1).Draw(t, label+"-iai")]
			}
			*fresh++
			nid := fmt.Sprintf("/r/%s%d", label, *fresh)
			if err := b.insert(parent, after, &NodeSpec{NID: nid, Kind: "hcontainer", Text: "new " + nid}); err != nil {
				t.Fatal(err)
			}
		case 2: // delete
			nid := pick(label+"-d", true)
			if nid == "" {
				continue
			}
			if err := b.delete(nid); err != nil {
				t.Fatal(err)
			}
		case 3: // move
			nid := pick(label+"-m", true)
			if nid == "" {
				continue
			}
			parent := pick(label+"-mp", false)
			if isAncestorOrSelf(b.cur, nid, parent) {
				continue
			}
			ch := slices.DeleteFunc(slices.Clone(b.cur.nodes[parent].children), func(s string) bool { return s == nid })
			after := ""
			if len(ch) > 0 && rapid.Bool().Draw(t, label+"-ma") {
				after = ch[rapid.IntRange(0, len(ch)-1).Draw(t, label+"-mai")]
			}
			if err := b.do(Op{Op: OpMove, NID: nid, Pre: mustHash(b.cur, nid), ParentNID: parent, AfterNID: after}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.cur
}

// Applying the derived patch reproduces the source, and diffing the result
// gives back exactly the changes the patch was derived from.
func TestRapidPatchRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := genTree(t, 25)
		fresh := 0
		src := genEdits(t, base, 8, "s", &fresh)
		p, err := Derive(base, src, base, nil)
		if err != nil {
			t.Fatalf("one-sided merge failed: %v", err)
		}
		got, err := Apply(base, p.Ops)
		if err != nil {
			t.Fatalf("patch does not apply: %v", err)
		}
		if got.Hash() != src.Hash() {
			t.Fatalf("patch yields %v, source is %v", got.Order(), src.Order())
		}
		d1, d2 := Compare(base, got), Compare(base, src)
		for _, pair := range [][2][]string{{d1.Added, d2.Added}, {d1.Removed, d2.Removed}, {d1.Modified, d2.Modified}, {d1.Moved, d2.Moved}} {
			if !slices.Equal(pair[0], pair[1]) {
				t.Fatalf("diff after patch %v, diff of source %v", pair[0], pair[1])
			}
		}
		// The other direction: a merge with nothing on the source side is
		// the target itself, with no ops.
		q, err := Derive(base, base, src, nil)
		if err != nil || len(q.Ops) != 0 || q.Result.Hash() != src.Hash() {
			t.Fatalf("empty source: %v, %d ops", err, len(q.Ops))
		}
		// An empty diff means equal snapshots, and back.
		if Compare(base, src).Empty() != (base.Hash() == src.Hash()) {
			t.Fatal("Empty disagrees with the hashes")
		}
	})
}

// Concurrent edits: whatever both sides do, Derive either reports
// conflicts that null resolutions settle, or yields a patch whose ops
// reproduce its result from the target; and every change made on one side
// only survives.
func TestRapidConcurrentMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := genTree(t, 20)
		fresh := 0
		src := genEdits(t, base, 5, "s", &fresh)
		tgt := genEdits(t, base, 5, "t", &fresh)
		p, err := Derive(base, src, tgt, nil)
		if ce, ok := err.(*ConflictError); ok {
			var res []Resolution
			for _, nid := range ce.NIDs {
				r := Resolution{NID: nid}
				if nid == base.root {
					r.Node = &NodeSpec{NID: nid, Kind: "root", Text: "resolved"}
				}
				res = append(res, r)
			}
			p, err = Derive(base, src, tgt, res)
		}
		if err != nil {
			t.Fatalf("derive: %v", err)
		}
		got, err := Apply(tgt, p.Ops)
		if err != nil || got.Hash() != p.Result.Hash() {
			t.Fatalf("ops do not reproduce the result: %v", err)
		}
		conflicted := map[string]bool{}
		for _, c := range p.Conflicts {
			conflicted[c] = true
		}
		ds, dt := Compare(base, src), Compare(base, tgt)
		inT := map[string]bool{}
		for _, nid := range dt.Touched() {
			inT[nid] = true
		}
		for _, nid := range ds.Modified {
			if inT[nid] || conflicted[nid] || !p.Result.Has(nid) {
				continue
			}
			if text(p.Result, nid) != text(src, nid) {
				t.Fatalf("source-only edit of %s lost", nid)
			}
		}
		for _, nid := range dt.Modified {
			if ds.flags[nid] != 0 || conflicted[nid] || !p.Result.Has(nid) {
				continue
			}
			if text(p.Result, nid) != text(tgt, nid) {
				t.Fatalf("target-only edit of %s lost", nid)
			}
		}
	})
}

// naiveMergeBase: every common ancestor, keep those that are not a proper
// ancestor of another common ancestor, take the smallest id.
func naiveMergeBase(parents map[dag.ID][]dag.ID, a, b dag.ID) (dag.ID, bool) {
	anc := func(x dag.ID) map[dag.ID]bool {
		out := map[dag.ID]bool{}
		stack := []dag.ID{x}
		for len(stack) > 0 {
			y := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if out[y] {
				continue
			}
			out[y] = true
			stack = append(stack, parents[y]...)
		}
		return out
	}
	A, B := anc(a), anc(b)
	var common []dag.ID
	for x := range A {
		if B[x] {
			common = append(common, x)
		}
	}
	var best []dag.ID
	for _, c := range common {
		nearest := true
		for _, d := range common {
			if d != c && anc(d)[c] {
				nearest = false
				break
			}
		}
		if nearest {
			best = append(best, c)
		}
	}
	if len(best) == 0 {
		return dag.ID{}, false
	}
	slices.SortFunc(best, dag.ID.Compare)
	return best[0], true
}

// The merge-base Open uses equals the naive definition of §6 item 1.
func TestRapidMergeBaseMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 14).Draw(t, "n")
		ids := make([]dag.ID, n)
		parents := dag.ParentMap{}
		for i := range ids {
			ids[i] = testID(fmt.Sprint("c", i, rapid.IntRange(0, 3).Draw(t, "salt")))
			var ps []dag.ID
			if i > 0 {
				k := rapid.IntRange(0, min(i, 3)).Draw(t, "k")
				for j := 0; j < k; j++ {
					p := ids[rapid.IntRange(0, i-1).Draw(t, "p")]
					if !slices.Contains(ps, p) {
						ps = append(ps, p)
					}
				}
			}
			parents[ids[i]] = ps
		}
		a := ids[rapid.IntRange(0, n-1).Draw(t, "a")]
		b := ids[rapid.IntRange(0, n-1).Draw(t, "b")]
		want, ok := naiveMergeBase(parents, a, b)
		got, err := MergeBase(parents, a, b)
		if !ok {
			if dag.CodeOf(err) != dag.CodeNoCommonAncestor {
				t.Fatalf("want no_common_ancestor, got %v %v", got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("merge-base %v (%v), naive %v", got, err, want)
		}
	})
}

// Fact sheets are byte-identical whatever order commuting ops were
// generated in.
func TestRapidFactSheetOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := genTree(t, 30)
		nids := base.Order()[1:]
		if len(nids) == 0 {
			return
		}
		// Distinct nodes get new text, distinct leaves are deleted and
		// distinct parents get one new last child each: these commute.
		type edit struct {
			kind int
			nid  string
			text string
		}
		var edits []edit
		used := map[string]bool{}
		for i := rapid.IntRange(1, 8).Draw(t, "k"); i > 0; i-- {
			nid := rapid.SampledFrom(nids).Draw(t, "nid")
			if used[nid] {
				continue
			}
			used[nid] = true
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				edits = append(edits, edit{0, nid, rapid.SampledFrom([]string{"period 45 [[sunset:90]]", "see [[ref:/r/n2]] $9", "[[def:x]] x is y", "[[approp:acct:100:2027]] [[avail:c]] $100", "[[applies:CA]] only"}).Draw(t, "text")})
			case 1:
				if len(base.nodes[nid].children) == 0 && !used[base.nodes[nid].parent] {
					edits = append(edits, edit{1, nid, ""})
				}
			case 2:
				edits = append(edits, edit{2, nid, "inserted 7"})
			}
		}
		perm := rapid.Permutation(edits).Draw(t, "perm")
		build := func(es []edit) []byte {
			b := &builder{cur: base.Clone()}
			for _, e := range es {
				var err error
				switch e.kind {
				case 0:
					err = b.replace(e.nid, &NodeSpec{NID: e.nid, Kind: "hcontainer", Text: e.text})
				case 1:
					err = b.delete(e.nid)
				case 2:
					ch := b.cur.nodes[e.nid].children
					after := ""
					if len(ch) > 0 {
						after = ch[len(ch)-1]
					}
					err = b.insert(e.nid, after, &NodeSpec{NID: e.nid + "/new", Kind: "content", Text: e.text})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			r := NewReview(base, b.ops)
			fs, err := Facts(r, Env{MR: testID("mr")}, FactInputs{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := fs.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		a, b := build(edits), build(perm)
		if !bytes.Equal(a, b) {
			t.Fatalf("fact sheets differ:\n%s\n%s", a, b)
		}
	})
}

// naiveDiff compares every node of both trees, without pruning.
func naiveDiff(a, b *Tree) map[string]uint8 {
	flags := map[string]uint8{}
	for nid, na := range a.nodes {
		nb, ok := b.nodes[nid]
		if !ok {
			flags[nid] |= diffRemoved
			continue
		}
		if na.kind != nb.kind || na.heading != nb.heading || na.text != nb.text {
			flags[nid] |= diffModified
		}
		if na.parent != nb.parent {
			flags[nid] |= diffMoved
		}
		for _, c := range reordered(na.children, nb.children) {
			flags[c] |= diffMoved
		}
	}
	for nid := range b.nodes {
		if _, ok := a.nodes[nid]; !ok {
			flags[nid] |= diffAdded
		}
	}
	return flags
}

// The pruned diff equals a diff of every node.
func TestRapidCompareMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := genTree(t, 30)
		fresh := 0
		x := genEdits(t, base, 10, "x", &fresh)
		y := genEdits(t, base, 10, "y", &fresh)
		for _, pair := range [][2]*Tree{{base, x}, {x, base}, {x, y}} {
			got, want := diffFlags(pair[0], pair[1]), naiveDiff(pair[0], pair[1])
			if len(got) != len(want) {
				t.Fatalf("pruned %v, naive %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("%s: pruned %b, naive %b", k, got[k], v)
				}
			}
		}
	})
}

// reference_cycles reports exactly the nodes that reach themselves, grouped
// by mutual reachability.
func TestRapidRefCyclesMatchNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		root := NodeSpec{NID: "/r", Kind: "root", Children: []NodeSpec{}}
		edges := map[int][]int{}
		for i := 0; i < n; i++ {
			text := ""
			// At most one ref per node is what structure allows, but the
			// check works on any graph: give some nodes several.
			for k := rapid.IntRange(0, 2).Draw(t, "k"); k > 0; k-- {
				j := rapid.IntRange(0, n).Draw(t, "to") // n: a dangling ref
				text += fmt.Sprintf("[[ref:/r/%d]]", j)
				if j < n {
					edges[i] = append(edges[i], j)
				}
			}
			root.Children = append(root.Children, NodeSpec{NID: fmt.Sprintf("/r/%d", i), Kind: "hcontainer", Text: text})
		}
		tr := MustTree(&root)
		reach := func(a int) map[int]bool {
			seen := map[int]bool{}
			stack := append([]int(nil), edges[a]...)
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if !seen[x] {
					seen[x] = true
					stack = append(stack, edges[x]...)
				}
			}
			return seen
		}
		want := map[string]string{} // nid -> its group's smallest nid
		for i := 0; i < n; i++ {
			ri := reach(i)
			if !ri[i] {
				continue
			}
			var group []string
			for j := 0; j < n; j++ {
				if ri[j] && reach(j)[i] {
					group = append(group, fmt.Sprintf("/r/%d", j))
				}
			}
			slices.Sort(group)
			want[fmt.Sprintf("/r/%d", i)] = group[0]
		}
		got := map[string]string{}
		for _, m := range scanTree(tr, Env{}).refCycles(tr) {
			for _, nid := range m.NIDs {
				if _, dup := got[nid]; dup {
					t.Fatalf("%s reported twice", nid)
				}
				got[nid] = m.NIDs[0]
			}
		}
		if len(got) != len(want) {
			t.Fatalf("cycles %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("cycles %v, want %v", got, want)
			}
		}
	})
}
