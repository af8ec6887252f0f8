package statute

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The golden merge vectors are rewritten from the code by -update, so they
// alone would pin whatever the code does. This table holds what 30k §6.2
// says the simple cases must give, worked out by hand on sample()'s tree,
// and checks the committed vectors against it: a regenerated file that
// disagrees with the spec fails here.
//
// sample(), in document order:
//
//	/us/t1 "General provisions"
//	  /us/t1/s1 "The period is 30 days."  (children a, b)
//	  /us/t1/s2 "Fees of $5 apply."
//	  /us/t1/s3 "Reports are due yearly."
//	/us/t2 "Appropriations"
//	  /us/t2/s1 "There is authorized $1,000,000."
func TestVectorsMergeByHand(t *testing.T) {
	s1a := "/us/t1/s1/a [[def:agency]] An agency is a body."
	s1b := "/us/t1/s1/b See [[ref:/us/t1/s2]]."
	base := map[string]string{
		"/us":       "/us ",
		"/us/t1":    "/us/t1 General provisions",
		"/us/t1/s1": "/us/t1/s1 The period is 30 days.",
		"/us/t1/s2": "/us/t1/s2 Fees of $5 apply.",
		"/us/t1/s3": "/us/t1/s3 Reports are due yearly.",
		"/us/t2":    "/us/t2 Appropriations",
		"/us/t2/s1": "/us/t2/s1 There is authorized $1,000,000.",
	}
	// outline is the base tree with some texts replaced and some nodes
	// dropped, in document order.
	outline := func(text map[string]string, drop ...string) []string {
		var out []string
		for _, nid := range []string{"/us", "/us/t1", "/us/t1/s1", "/us/t1/s1/a", "/us/t1/s1/b", "/us/t1/s2", "/us/t1/s3", "/us/t2", "/us/t2/s1"} {
			if slices.Contains(drop, nid) {
				continue
			}
			switch {
			case text[nid] != "":
				out = append(out, nid+" "+text[nid])
			case nid == "/us/t1/s1/a":
				out = append(out, s1a)
			case nid == "/us/t1/s1/b":
				out = append(out, s1b)
			default:
				out = append(out, base[nid])
			}
		}
		return out
	}
	cases := []struct {
		name       string
		unresolved []string // the MR is rejected: conflicts without a resolution
		conflicts  []string // conflicts settled by a resolution
		result     []string
	}{
		// §6.2 "Changed on one side only: take that side."
		{name: "one side only", result: outline(map[string]string{"/us/t1/s1": "The period is 45 days."})},
		// "Changed identically on both: take it." No conflict.
		{name: "identical on both sides", result: outline(map[string]string{"/us/t1/s2": "Fees of $7 apply."})},
		// Two nids, each changed on one side only: both taken.
		{name: "disjoint edits", result: outline(map[string]string{"/us/t1/s1": "The period is 45 days.", "/us/t2/s1": "There is authorized $2."})},
		// "Changed differently: a conflict, which MUST have a matching
		// entry in resolutions or the MR is rejected."
		{name: "conflict unresolved (S2)", unresolved: []string{"/us/t1/s1"}},
		// "A resolution's node is the final NodeSpec": 42 days, neither
		// side's text.
		{name: "conflict resolved (S2)", conflicts: []string{"/us/t1/s1"}, result: outline(map[string]string{"/us/t1/s1": "The period is 42 days."})},
		// Deleted on one side, edited on the other: changed differently, a
		// conflict; the resolution's null node deletes it.
		{name: "delete vs edit resolved by delete", conflicts: []string{"/us/t1/s3"}, result: outline(nil, "/us/t1/s3")},
	}
	// Read as committed (TestVectorsMerge rewrites it under -update).
	raw, err := os.ReadFile(filepath.Join("testdata", "vectors", "merge.json"))
	must(t, err)
	var vs []mergeVector
	must(t, json.Unmarshal(raw, &vs))
	for _, c := range cases {
		i := slices.IndexFunc(vs, func(v mergeVector) bool { return v.Name == c.name })
		if i < 0 {
			t.Errorf("merge.json has no case %q", c.name)
			continue
		}
		v := vs[i]
		if !slices.Equal(v.Unresolved, c.unresolved) || !slices.Equal(v.Conflicts, c.conflicts) {
			t.Errorf("%s: vector says unresolved %v, conflicts %v; by hand %v, %v", c.name, v.Unresolved, v.Conflicts, c.unresolved, c.conflicts)
		}
		if c.result == nil {
			if v.Result != "" || len(v.Ops) != 0 {
				t.Errorf("%s: a rejected merge with a result", c.name)
			}
			continue
		}
		// The vector's ops applied to its target give the merged tree.
		r, err := Apply(treeOf(t, v.Target), v.Ops)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := flatten(specOf(r)); !slices.Equal(got, c.result) {
			t.Errorf("%s: merged tree\n%s\nby hand\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.result, "\n"))
		}
		if r.Hash().String() != v.Result {
			t.Errorf("%s: the vector's result hash is not its ops' tree", c.name)
		}
	}
}

// flatten lists "nid text" for every node of s in document order.
func flatten(s *NodeSpec) []string {
	out := []string{s.NID + " " + s.Text}
	for i := range s.Children {
		out = append(out, flatten(&s.Children[i])...)
	}
	return out
}

// The same for the checks of review.json (30k §6 item 5), on cases whose
// outcome the spec's words decide: every check not listed passes.
func TestVectorsChecksByHand(t *testing.T) {
	type verdict struct {
		status Status
		nids   [][]string
	}
	cases := []struct {
		name  string
		notOK map[string]verdict
	}{
		// s1 becomes "The period is 45 days.": no dollar amount, none of
		// "appropriat", "funds", "obligat"; no reference is broken.
		{"S13: 30 becomes 45", nil},
		// "every node's kind and nesting conform to the session's profile.
		// Failure blocks": uslm-1 has no kind "article" (profiles/uslm-1.json).
		{"S14: forbidden kind", map[string]verdict{"structure": {StatusBlock, [][]string{{"/us/t1/art1"}}}}},
		// /us/t1/s1/b says "See [[ref:/us/t1/s2]]" and s2 is deleted:
		// "every [[ref:nid]] anywhere in the merged target resolves" fails,
		// a warning (only structure blocks), naming the referrer and the
		// missing target.
		{"broken reference", map[string]verdict{"references": {StatusWarn, [][]string{{"/us/t1/s1/b", "/us/t1/s2"}}}}},
		// A fiscal MR: "Fees of $6 apply." has a dollar amount and no
		// [[approp:]] marker; /us/t2/s1 and /us/t2/s2 carry theirs.
		// fiscal_hint only concerns MRs declared fiscal: false.
		{"fiscal: unmarked and marked amounts", map[string]verdict{"approp_unmarked": {StatusWarn, [][]string{{"/us/t1/s2"}}}}},
		// Declared fiscal: false, yet "No funds may be obligated." has
		// "funds" and "obligat".
		{"fiscal hint", map[string]verdict{"fiscal_hint": {StatusWarn, [][]string{{"/us/t1/s3"}}}}},
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "vectors", "review.json"))
	must(t, err)
	var vs []reviewVector
	must(t, json.Unmarshal(raw, &vs))
	for _, c := range cases {
		i := slices.IndexFunc(vs, func(v reviewVector) bool { return v.Name == c.name })
		if i < 0 {
			t.Errorf("review.json has no case %q", c.name)
			continue
		}
		if len(vs[i].Checks) != 7 {
			t.Errorf("%s: %d checks, 30k §6 item 5 lists seven", c.name, len(vs[i].Checks))
		}
		for _, ch := range vs[i].Checks {
			want, listed := c.notOK[ch.Name]
			if !listed {
				want = verdict{StatusPass, nil}
			}
			nids := ch.NIDs
			if len(nids) == 0 {
				nids = nil
			}
			if ch.Status != want.status || fmt.Sprint(nids) != fmt.Sprint(want.nids) {
				t.Errorf("%s: %s is %s %v, by hand %s %v", c.name, ch.Name, ch.Status, ch.NIDs, want.status, want.nids)
			}
		}
	}
}
