package sync

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
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
