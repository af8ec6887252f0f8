package statute_test

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/statute"
)

func seed() *statute.Tree {
	spec, err := statute.DecodeNodeSpec([]byte(`{"kind":"root","nid":"/us","children":[
	 {"kind":"section","nid":"/us/s1","text":"The period is 30 days."},
	 {"kind":"section","nid":"/us/s2","text":"Fees of $5 apply."}]}`))
	if err != nil {
		panic(err)
	}
	return statute.MustTree(spec)
}

// A branch changes the period; the merge into an untouched root derives a
// one-op patch, the checks pass, and the fact sheet reports 30 -> 45.
func Example() {
	base := seed()
	pre, _ := base.NodeHash("/us/s1")
	source, err := statute.Apply(base, []statute.Op{{Op: statute.OpReplace, NID: "/us/s1", Pre: pre,
		Node: &statute.NodeSpec{NID: "/us/s1", Kind: "section", Text: "The period is 45 days."}}})
	if err != nil {
		panic(err)
	}
	patch, err := statute.Derive(base, source, base, nil)
	if err != nil {
		panic(err)
	}
	profile, _ := statute.LoadProfile("uslm-1")
	env := statute.Env{MR: dag.Sum([]byte("mr")), Profile: profile}
	review := statute.ReviewOf(base, patch)
	checks := statute.RunChecks(review, env)
	facts, _ := statute.Facts(review, env, statute.FactInputs{})
	fmt.Println("ops:", len(patch.Ops), "blocked:", checks.Blocked)
	fmt.Println("modified:", facts.Nodes.Modified, "numbers:", facts.Numbers[0].Before, "->", facts.Numbers[0].After)
	fmt.Print(review.Diff().Unified())
	// Output:
	// ops: 1 blocked: false
	// modified: [/us/s1] numbers: [30] -> [45]
	// @@ /us/s1 (modified) @@
	//  [section]
	// -The period is 30 days.
	// +The period is 45 days.
}

// Profiles are data; a kind the profile does not list fails structure.
func ExampleProfile_Conform() {
	for _, id := range statute.ProfileIDs() {
		p, _ := statute.LoadProfile(id)
		fmt.Println(id, len(p.Conform(seed())), "violation(s)")
		for _, m := range p.Conform(seed()) {
			fmt.Println(" ", m.NIDs, m.Detail)
		}
	}
	// Output:
	// akn-generic 2 violation(s)
	//   [/us/s1] kind "section" is not in profile akn-generic
	//   [/us/s2] kind "section" is not in profile akn-generic
	// uslm-1 0 violation(s)
}

// Two sides change one node differently: the MR needs a resolution.
func ExampleDerive_conflict() {
	base := seed()
	set := func(text string) *statute.Tree {
		pre, _ := base.NodeHash("/us/s2")
		t, _ := statute.Apply(base, []statute.Op{{Op: statute.OpReplace, NID: "/us/s2", Pre: pre,
			Node: &statute.NodeSpec{NID: "/us/s2", Kind: "section", Text: text}}})
		return t
	}
	source, target := set("Fees of $7 apply."), set("Fees of $6 apply.")
	_, err := statute.Derive(base, source, target, nil)
	fmt.Println(err)
	p, _ := statute.Derive(base, source, target, []statute.Resolution{{NID: "/us/s2",
		Node: &statute.NodeSpec{NID: "/us/s2", Kind: "section", Text: "Fees of $6.50 apply."}}})
	n, _ := p.Result.Get("/us/s2")
	fmt.Println(p.Conflicts, n.Text)
	// Output:
	// statute: 1 unresolved conflict(s): /us/s2
	// [/us/s2] Fees of $6.50 apply.
}

// The law in force: a merge effective later holds back the merges after it.
func ExampleLaw_At() {
	seedTree := seed()
	law := statute.NewLaw(seedTree, nil)
	snaps := map[dag.ID]*statute.Tree{}
	head := seedTree
	for i, eff := range []string{"2027-06-01", "2027-01-15"} {
		pre, _ := head.NodeHash("/us/s1")
		next, _ := statute.Apply(head, []statute.Op{{Op: statute.OpReplace, NID: "/us/s1", Pre: pre,
			Node: &statute.NodeSpec{NID: "/us/s1", Kind: "section", Text: fmt.Sprintf("The period is %d days.", 40+i)}}})
		change := dag.Sum([]byte{byte(i)})
		snaps[change] = next
		_ = law.Add(statute.Enactment{MR: dag.Sum([]byte{byte(100 + i)}), Change: change, Effective: statute.MustDate(eff), Before: head, After: next})
		head = next
	}
	for _, d := range []string{"2027-02-01", "2027-06-01"} {
		in, _ := law.At(statute.MustDate(d), "", nil, snapshots(snaps))
		n, _ := in.Tree.Get("/us/s1")
		fmt.Println(d, in.Merges, n.Text)
	}
	// Output:
	// 2027-02-01 0 The period is 30 days.
	// 2027-06-01 2 The period is 41 days.
}

type snapshots map[dag.ID]*statute.Tree

func (s snapshots) Snapshot(id dag.ID) (*statute.Tree, error) { return s[id], nil }
