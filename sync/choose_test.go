package sync

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
	"pgregory.net/rapid"
)

// TestChoose: what a responder sends from its region for a filter. The
// filter here holds exactly the ids named (the test checks that no other
// id of the region looks held), so a "held" id stands for a true positive
// or a false one alike: the responder cannot tell them apart.
func TestChoose(t *testing.T) {
	id := func(s string) dag.ID { return dag.Sum([]byte(s)) }
	// A region, newest first as region returns it: a ← b ← c ← d, and
	// x, y two more roots of the region merged by m (m ← d too).
	a, b, c, d, x, y, m := id("a"), id("b"), id("c"), id("d"), id("x"), id("y"), id("m")
	nodes := []node{
		{id: m, parents: []dag.ID{d, x, y}},
		{id: y},
		{id: x},
		{id: d, parents: []dag.ID{c}},
		{id: c, parents: []dag.ID{b}},
		{id: b, parents: []dag.ID{a}},
		{id: a},
	}
	all := []dag.ID{a, b, c, d, x, y, m}
	cases := []struct {
		name string
		held []dag.ID // nil: no filter
		want []dag.ID
	}{
		{"no filter", nil, all},
		{"nothing held", []dag.ID{}, all},
		// A false positive at the bottom of the region: without the rule
		// about children, b, c, d and m would all arrive pending.
		{"bottom held", []dag.ID{a}, all},
		// Two held in a row: one generation up only, so a held chain is
		// not sent again (if it was two false positives, a is wanted).
		{"bottom two held", []dag.ID{a, b}, []dag.ID{b, c, d, x, y, m}},
		{"middle held", []dag.ID{c}, all},
		{"a head held", []dag.ID{m}, all},
		{"a merged root held", []dag.ID{x}, all},
		{"all held", all, []dag.ID{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f *heads.Bloom
			if tc.held != nil {
				var err error
				f, err = heads.NewBloom(make([]byte, heads.MinSaltLen), max(1, len(tc.held)), 20)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range tc.held {
					f.Add(h)
				}
				for _, n := range all {
					if f.Has(n) != slices.Contains(tc.held, n) {
						t.Fatalf("the filter answers %v for %s: pick another salt", f.Has(n), n)
					}
				}
			}
			got := choose(nodes, f)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("sent %v, want %v", names(got, all), names(tc.want, all))
			}
		})
	}
}

func names(ids, all []dag.ID) []string {
	var out []string
	for _, id := range ids {
		out = append(out, string("abcdxym"[slices.Index(all, id)]))
	}
	return out
}

// TestChooseProperties: for random regions, holdings and false positives,
// what choose sends is in topological order, includes everything the
// filter does not hold, resends a held entry only below a sent child, and
// leaves the requester nothing pending unless two false positives lie in
// a row.
func TestChooseProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		ids := make([]dag.ID, n)
		parents := make([][]int, n) // indexes of region parents, all older
		for i := range ids {
			ids[i] = dag.Sum([]byte{byte(i), byte(i >> 8)})
			if i > 0 {
				for k := rapid.IntRange(0, 2).Draw(t, "parents"); k > 0; k-- {
					p := rapid.IntRange(0, i-1).Draw(t, "parent")
					if !slices.Contains(parents[i], p) {
						parents[i] = append(parents[i], p)
					}
				}
			}
		}
		// What the requester holds is down-closed.
		held := make([]bool, n)
		for i := range held {
			held[i] = rapid.Bool().Draw(t, "held")
			for _, p := range parents[i] {
				held[i] = held[i] && held[p]
			}
		}
		fp := make([]bool, n)
		for i := range fp {
			fp[i] = !held[i] && rapid.IntRange(0, 9).Draw(t, "fp") == 0
		}
		salt := rapid.SliceOfN(rapid.Byte(), heads.MinSaltLen, heads.MinSaltLen).Draw(t, "salt")
		f, err := heads.NewBloom(salt, n, 20)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ids {
			if held[i] || fp[i] {
				f.Add(ids[i])
			}
		}
		positive := make([]bool, n)
		for i := range ids {
			positive[i] = f.Has(ids[i])
			fp[i] = positive[i] && !held[i] // the filter may add its own
		}
		nodes := make([]node, n)
		for i := range ids {
			nd := node{id: ids[i]}
			for _, p := range parents[i] {
				nd.parents = append(nd.parents, ids[p])
			}
			nodes[n-1-i] = nd // newest first
		}
		got := choose(nodes, f)
		sent := make([]bool, n)
		last := -1
		for _, id := range got {
			i := slices.Index(ids, id)
			if i <= last {
				t.Fatalf("sent out of order: %d after %d", i, last)
			}
			last, sent[i] = i, true
		}
		adjacentFPs := false
		for i := range ids {
			for _, p := range parents[i] {
				adjacentFPs = adjacentFPs || (fp[i] && fp[p])
			}
		}
		for i := range ids {
			if !positive[i] && !sent[i] {
				t.Fatalf("entry %d is not in the filter and was not sent", i)
			}
			hasSentChild := false
			for c := range ids {
				hasSentChild = hasSentChild || (sent[c] && slices.Contains(parents[c], i))
			}
			if sent[i] && held[i] && !hasSentChild {
				t.Fatalf("held entry %d sent with no child sent", i)
			}
			if !sent[i] || adjacentFPs {
				continue
			}
			for _, p := range parents[i] {
				if !sent[p] && !held[p] {
					t.Fatalf("entry %d sent without its parent %d, which the requester lacks", i, p)
				}
			}
		}
	})
}
