package statute

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// S13: the MR's summary says 35 days, its change sets 45: /facts reports
// 30 -> 45, identically on every node.
func TestS13NumbersFact(t *testing.T) {
	base := sample()
	after := edit(t, base, func(b *builder) { setText(t, b, "/us/t1/s1", "The period is 45 days.") })
	r := NewReview(base, nil)
	r.Result = after
	f, err := Facts(r, Env{MR: testID("mr")}, FactInputs{})
	must(t, err)
	if len(f.Numbers) != 1 || f.Numbers[0].NID != "/us/t1/s1" || !slices.Equal(f.Numbers[0].Before, []string{"30"}) || !slices.Equal(f.Numbers[0].After, []string{"45"}) {
		t.Fatalf("numbers %+v", f.Numbers)
	}
	b1, err := f.MarshalJSON()
	must(t, err)
	if !dag.IsCanonical(b1) || !strings.Contains(string(b1), `"numbers":[{"after":["45"],"before":["30"],"nid":"/us/t1/s1"}]`) || !strings.Contains(string(b1), `"authoritative":false`) {
		t.Fatalf("%s", b1)
	}
	// Another replica rebuilding the trees from objects gets the same bytes.
	spec1, _ := base.Spec(base.Root())
	spec2, _ := after.Spec(after.Root())
	r2 := &Review{Target: MustTree(spec1), Result: MustTree(spec2)}
	f2, err := Facts(r2, Env{MR: testID("mr")}, FactInputs{})
	must(t, err)
	b2, _ := f2.MarshalJSON()
	if string(b1) != string(b2) {
		t.Fatal("fact sheets differ between replicas")
	}
}

func TestFactSheetFields(t *testing.T) {
	base := sample()
	b := &builder{cur: base.Clone()}
	setText(t, b, "/us/t1/s1/b", "See [[ref:/us/t1/s3]].")                               // ref s2 -> s3
	setText(t, b, "/us/t1/s1/a", "[[def:agency]] An agency is any office.")              // definition changed
	must(t, b.insert("/us/t1", "/us/t1/s3", &NodeSpec{NID: "/us/t1/s4", Kind: "section", // added, with markers
		Text: "[[def:board]] [[sunset:90]] [[applies:NY,CA]] [[approp:ops:2,500:2027]]"}))
	must(t, b.insert("/us/t2", "/us/t2/s1", &NodeSpec{NID: "/us/t2/s2", Kind: "section",
		Text: "[[approp:ops:1000:2027]] [[avail:c1]] [[effective:2027-03-01]] [[opt_in:prog]]"}))
	must(t, b.insert("/us/t2", "/us/t2/s2", &NodeSpec{NID: "/us/t2/s3", Kind: "section", Text: "[[approp:grants:7:2028]]"}))
	must(t, b.delete("/us/t1/s2"))
	must(t, b.do(Op{Op: OpMove, NID: "/us/t1/s3", Pre: mustHash(b.cur, "/us/t1/s3"), ParentNID: "/us/t1"}))
	r := NewReview(base, b.ops)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	h4, _ := r.Result.NodeHash("/us/t1/s4")
	// The seed's /us/t1/s1/a text was the one this MR sets: a revert.
	old := sample()
	must(t, ApplyInPlace(old, []Op{{Op: OpReplace, NID: "/us/t1/s1/a", Pre: mustHash(old, "/us/t1/s1/a"), Node: &NodeSpec{NID: "/us/t1/s1/a", Kind: "subsection", Text: "[[def:agency]] An agency is any office."}}}))
	hist := NewRootHistory()
	hist.Add(testID("head-old"), old)
	hist.Add(testID("head-now"), base)
	g := "group:advocates"
	in := FactInputs{
		Estimates: []Estimate{
			{Opinion: testID("est-b"), Outlays: []string{"100", "200", "-50"}, IfPermanent: []string{"100", "200", "300"}},
			{Opinion: testID("est-a"), Outlays: []string{"99999999999999999999", "1"}},
		},
		Formalizations:    []Formalization{{Opinion: testID("formal"), NIDs: []string{"/us/t1/s1/a", "/us/t1/s1"}}, {Opinion: testID("formal-2"), NIDs: []string{"/us/t2"}}},
		Proposals:         []Proposal{{Opinion: testID("prop"), Author: "ed25519:x", AuthorKind: "group", OnBehalfOf: g, NodeHashes: []dag.ID{h4}}},
		History:           hist,
		RankedAboveWinner: []RankedAbove{{Option: testID("o"), AboveWinner: 3, BelowWinner: 2}},
		Finality:          "final_advisory",
	}
	env := Env{MR: testID("mr"), Feasibility: []Feasibility{{Opinion: testID("f2")}, {Opinion: testID("f1")}}}
	f, err := Facts(r, env, in)
	must(t, err)
	js, _ := f.MarshalJSON()
	var got map[string]any
	must(t, json.Unmarshal(js, &got))
	expect := func(path string, want string) {
		t.Helper()
		var v any = got
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		b, _ := dag.Marshal(v)
		if string(b) != want {
			t.Errorf("%s = %s\n want %s", path, b, want)
		}
	}
	expect("nodes", `{"added":["/us/t1/s4","/us/t2/s2","/us/t2/s3"],"modified":["/us/t1/s1/a","/us/t1/s1/b"],"moved":["/us/t1/s3"],"removed":["/us/t1/s2"]}`)
	expect("references", `{"added":[{"from":"/us/t1/s1/b","to":"/us/t1/s3"}],"removed":[{"from":"/us/t1/s1/b","to":"/us/t1/s2"}]}`)
	expect("definitions", `{"added":["term:/us/t1#board"],"changed":["term:/us/t1/s1#agency"],"removed":[]}`)
	expect("sunsets", `[{"days":90,"nid":"/us/t1/s4"}]`)
	expect("effective_dates", `[{"date":"2027-03-01","nid":"/us/t2/s2"}]`)
	expect("coverage", `[{"applies":["CA","NY"],"nid":"/us/t1/s4","opt_in":null},{"applies":null,"nid":"/us/t2/s2","opt_in":"prog"}]`)
	expect("appropriations", `{"by_account":[{"account":"grants","dollars":"7","fenced":"0","fy":2028},{"account":"ops","dollars":"1000","fenced":"1000","fy":2027}],"total":"1007"}`)
	// Numbers are taken from the text as written, markers included (§6
	// item 8 is literal), so the ref target's digits count.
	expect("numbers", `[{"after":["1","3"],"before":["1","2"],"nid":"/us/t1/s1/b"}]`)
	if len(f.Estimates) != 2 || f.Estimates[0].Compare(f.Estimates[1]) >= 0 {
		t.Errorf("estimates not sorted: %v", f.Estimates)
	}
	for _, e := range f.EstimateTotals {
		switch e.Estimate {
		case testID("est-a"):
			if e.AsWritten != "100000000000000000000" || e.IfPermanent != nil {
				t.Errorf("est-a %+v", e)
			}
		case testID("est-b"):
			if e.AsWritten != "250" || e.IfPermanent == nil || *e.IfPermanent != "600" {
				t.Errorf("est-b %+v", e)
			}
		}
	}
	if len(f.AnchorDrift) != 1 || f.AnchorDrift[0].Formalization != testID("formal") || !slices.Equal(f.AnchorDrift[0].NIDs, []string{"/us/t1/s1/a"}) {
		t.Errorf("anchor drift %+v", f.AnchorDrift)
	}
	if len(f.Origin) != 1 || f.Origin[0].NID != "/us/t1/s4" || *f.Origin[0].OnBehalfOf != g {
		t.Errorf("origin %+v", f.Origin)
	}
	if len(f.Reverts) != 1 || f.Reverts[0].NID != "/us/t1/s1/a" || f.Reverts[0].PreviouslyIn != testID("head-old") {
		t.Errorf("reverts %+v", f.Reverts)
	}
	if len(f.Feasibility) != 2 || !slices.IsSortedFunc(f.Feasibility, dag.ID.Compare) {
		t.Errorf("feasibility not sorted")
	}
	if f.Finality != "final_advisory" || f.Authoritative || f.VersusBase != nil || !strings.Contains(string(js), `"versus_base":null`) || strings.Contains(string(js), "versus_superseded") {
		t.Errorf("labels: %s", js)
	}
	// A bad estimate amount is an input error, not a silent zero.
	in.Estimates = []Estimate{{Opinion: testID("bad"), Outlays: []string{"1.5"}}}
	if _, err := Facts(r, env, in); err == nil {
		t.Error("bad estimate accepted")
	}
}

// S17: X passes to Z, Z to Y; the MR taking Y back to X reverts the node
// (D41), and its fact sheet says so, naming the head that had X last.
func TestS17RevertsAcrossRootHeads(t *testing.T) {
	set := func(tr *Tree, text string) *Tree {
		return edit(t, tr, func(b *builder) { setText(t, b, "/us/t1/s1", text) })
	}
	x := set(sample(), "Policy X.")
	z := set(x, "Policy Z.")
	y := set(z, "Policy Y.")
	hist := NewRootHistory()
	hist.Add(testID("head-x"), x)
	hist.Add(testID("head-z"), z)
	hist.Add(testID("head-y"), y)
	back := edit(t, y, func(b *builder) { setText(t, b, "/us/t1/s1", "Policy X.") })
	f, err := Facts(&Review{Target: y, Result: back}, Env{MR: testID("y-to-x")}, FactInputs{History: hist})
	must(t, err)
	hx, _ := x.NodeHash("/us/t1/s1")
	if len(f.Reverts) != 1 || f.Reverts[0].NID != "/us/t1/s1" || f.Reverts[0].To != hx || f.Reverts[0].PreviouslyIn != testID("head-x") {
		t.Fatalf("reverts %+v", f.Reverts)
	}
	// A new text is not a revert, and neither is the current one.
	fresh := edit(t, y, func(b *builder) { setText(t, b, "/us/t1/s1", "Policy W.") })
	f, err = Facts(&Review{Target: y, Result: fresh}, Env{}, FactInputs{History: hist})
	must(t, err)
	if len(f.Reverts) != 0 {
		t.Fatalf("reverts %+v", f.Reverts)
	}
	if _, ok := hist.PreviouslyIn("/us/t1/s1", mustHash(y, "/us/t1/s1")); ok {
		t.Fatal("the current head's hash counted as earlier")
	}
}
