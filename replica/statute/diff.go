package statute

import (
	"maps"
	"slices"
	"strings"
)

// What happened to one nid between two trees. A node present in both may be
// both modified and moved.
const (
	diffAdded uint8 = 1 << iota
	diffRemoved
	diffModified // kind, heading or text differs
	diffMoved    // parent differs, or its order among surviving siblings does
)

// Diff is the structural diff between two snapshots: which nids were
// added, removed, modified (kind, heading or text changed) and moved
// (another parent, or another place among the siblings both snapshots
// share). Each list is sorted by code point. A change to a node's children
// alone is not a modification of the node: the children themselves appear.
//
// Moves are minimal: among the children a parent keeps, the nodes that stay
// in a longest common order are not moved, the rest are. Which longest
// order, when several exist, is fixed by the algorithm (see lis), so every
// replica picks the same set.
type Diff struct {
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Modified []string `json:"modified"`
	Moved    []string `json:"moved"`

	before, after *Tree
	flags         map[string]uint8
}

// Empty reports whether the two snapshots are identical.
func (d *Diff) Empty() bool { return len(d.flags) == 0 }

// Touched returns every nid the diff mentions, sorted.
func (d *Diff) Touched() []string {
	out := make([]string, 0, len(d.flags))
	for k := range d.flags {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Compare returns the structural diff from before to after. It descends
// only into subtrees whose hashes differ, so its cost follows the size of
// the change, not of the tree.
func Compare(before, after *Tree) *Diff {
	d := &Diff{before: before, after: after, flags: diffFlags(before, after)}
	for _, nid := range sortedKeys(d.flags) {
		f := d.flags[nid]
		if f&diffAdded != 0 {
			d.Added = append(d.Added, nid)
		}
		if f&diffRemoved != 0 {
			d.Removed = append(d.Removed, nid)
		}
		if f&diffModified != 0 {
			d.Modified = append(d.Modified, nid)
		}
		if f&diffMoved != 0 {
			d.Moved = append(d.Moved, nid)
		}
	}
	for _, l := range []*[]string{&d.Added, &d.Removed, &d.Modified, &d.Moved} {
		if *l == nil {
			*l = []string{}
		}
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// diffFlags compares two trees node by node, pruning subtrees whose root
// has the same nid, parent and hash on both sides. Each visited node costs
// one map lookup per tree: at 100,000 nodes the lookups are the cost.
func diffFlags(a, b *Tree) map[string]uint8 {
	flags := map[string]uint8{}
	// A subtree is identical on both sides when its root has the same
	// nid, hash and parent: the hash covers everything below, but not
	// where the subtree hangs. A node shared by copy-on-write is identical.
	same := func(x *node, xt *Tree, y *node, yt *Tree) bool {
		if x == y {
			return true
		}
		return x.parent == y.parent && xt.hashOf(x) == yt.hashOf(y)
	}
	// Nodes of b: added, modified, moved. Nodes of a that b lacks are
	// found beside: a removed node's parent in a is either visited here
	// (its children differ) or removed itself.
	var gone []*node
	stack := []*node{b.nodes[b.root]}
	for len(stack) > 0 {
		nb := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		na, ok := a.nodes[nb.nid]
		if ok && same(na, a, nb, b) {
			continue
		}
		if !ok {
			flags[nb.nid] |= diffAdded
		} else {
			if na.kind != nb.kind || na.heading != nb.heading || na.text != nb.text {
				flags[nb.nid] |= diffModified
			}
			if na.parent != nb.parent {
				flags[nb.nid] |= diffMoved
			}
			if !slices.Equal(na.children, nb.children) {
				// Order among the children both keep under nid.
				for _, c := range reordered(na.children, nb.children) {
					flags[c] |= diffMoved
				}
				for _, c := range na.children {
					if _, ok := b.nodes[c]; !ok {
						gone = append(gone, a.nodes[c])
					}
				}
			}
		}
		for _, c := range nb.children {
			stack = append(stack, b.nodes[c])
		}
	}
	if _, ok := b.nodes[a.root]; !ok {
		gone = append(gone, a.nodes[a.root])
	}
	// Removed subtrees; a node inside one that b has elsewhere was moved
	// out, and b's walk saw it.
	for len(gone) > 0 {
		na := gone[len(gone)-1]
		gone = gone[:len(gone)-1]
		if _, ok := b.nodes[na.nid]; ok {
			continue
		}
		flags[na.nid] |= diffRemoved
		for _, c := range na.children {
			gone = append(gone, a.nodes[c])
		}
	}
	return flags
}

// reordered returns the children, among those under parent in both a and
// b, that are not in the longest increasing run of their a-positions taken
// in b's order: the minimal set whose moves turn one order into the other.
func reordered(ca, cb []string) []string {
	if slices.Equal(ca, cb) {
		return nil
	}
	pos := make(map[string]int, len(ca))
	for i, c := range ca {
		pos[c] = i
	}
	var seq []int     // a-positions in b's order
	var nids []string // matching nids
	for _, c := range cb {
		if i, ok := pos[c]; ok {
			seq = append(seq, i)
			nids = append(nids, c)
		}
	}
	keep := lis(seq)
	var out []string
	for i, c := range nids {
		if !keep[i] {
			out = append(out, c)
		}
	}
	return out
}

// lis marks a longest strictly increasing subsequence of seq, the one
// patience sorting finds: for each value in order, replace the leftmost
// tail >= it (or extend), linking it to the tail one shorter; then follow
// the links back from the final tail of the longest length.
func lis(seq []int) []bool {
	keep := make([]bool, len(seq))
	if len(seq) == 0 {
		return keep
	}
	tails := []int{} // indexes into seq of the smallest tail of each length
	prev := make([]int, len(seq))
	for i, v := range seq {
		j, _ := slices.BinarySearchFunc(tails, v, func(t int, v int) int { return seq[t] - v })
		if j > 0 {
			prev[i] = tails[j-1]
		} else {
			prev[i] = -1
		}
		if j == len(tails) {
			tails = append(tails, i)
		} else {
			tails[j] = i
		}
	}
	for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
		keep[i] = true
	}
	return keep
}

// Unified renders the diff as text for people, in the order of the after
// snapshot (removed nodes follow, in the order of the before snapshot).
// Each changed node gets a header line "@@ <nid> (<what>) @@" followed by
// its heading and text, old lines prefixed "-", new lines "+", unchanged
// lines " ". It is deterministic but not a wire format.
func (d *Diff) Unified() string {
	var b strings.Builder
	emit := func(nid string, f uint8) {
		var what []string
		for _, w := range []struct {
			bit  uint8
			name string
		}{{diffAdded, "added"}, {diffRemoved, "removed"}, {diffModified, "modified"}, {diffMoved, "moved"}} {
			if f&w.bit != 0 {
				what = append(what, w.name)
			}
		}
		b.WriteString("@@ " + nid + " (" + strings.Join(what, ", ") + ") @@\n")
		var old, cur *node
		if n, ok := d.before.nodes[nid]; ok {
			old = n
		}
		if n, ok := d.after.nodes[nid]; ok {
			cur = n
		}
		if f&diffMoved != 0 && old != nil && cur != nil {
			b.WriteString("~ parent " + old.parent + " -> " + cur.parent + "\n")
		}
		lines := func(n *node) []string {
			if n == nil {
				return nil
			}
			first := "[" + n.kind + "]"
			if n.heading != "" {
				first += " " + n.heading
			}
			out := []string{first}
			if n.text != "" {
				out = append(out, strings.Split(n.text, "\n")...)
			}
			return out
		}
		if f&(diffAdded|diffRemoved|diffModified) != 0 {
			for _, l := range lineDiff(lines(old), lines(cur)) {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	for _, nid := range d.after.Order() {
		if f, ok := d.flags[nid]; ok {
			emit(nid, f)
		}
	}
	for _, nid := range d.before.Order() {
		if f, ok := d.flags[nid]; ok && f&diffRemoved != 0 {
			emit(nid, f)
		}
	}
	return b.String()
}

// lineDiff returns a - / + / space prefixed line diff of a and b by longest
// common subsequence (node texts are short; beyond 2,000 lines a side it
// falls back to removing all and adding all).
func lineDiff(a, b []string) []string {
	var out []string
	if len(a) > 2000 || len(b) > 2000 {
		for _, l := range a {
			out = append(out, "-"+l)
		}
		for _, l := range b {
			out = append(out, "+"+l)
		}
		return out
	}
	n, m := len(a), len(b)
	L := make([][]int32, n+1)
	for i := range L {
		L[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				L[i][j] = L[i+1][j+1] + 1
			} else {
				L[i][j] = max(L[i+1][j], L[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, " "+a[i])
			i++
			j++
		case i < n && (j == m || L[i+1][j] >= L[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}

// DiffView is the body of /merge-requests/{id}/diff: the structural diff
// and its unified-text rendering. It is a derived view, so it says
// "authoritative": false (D45).
type DiffView struct {
	Authoritative bool      `json:"authoritative"`
	MR            string    `json:"mr"`
	Nodes         DiffNodes `json:"nodes"`
	Unified       string    `json:"unified"`
}

// View returns the diff as the /diff endpoint serves it for mr (an id's
// string form).
func (d *Diff) View(mr string) *DiffView {
	return &DiffView{MR: mr, Nodes: *diffNodes(d), Unified: d.Unified()}
}
