package httpapi_test

import (
	"net/url"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// TestTallyBy: /tally?by=region|density in a session with a district
// table (D72) breaks the live tally down per declared value; any other
// attribute, or a session without a table, is district_attribute_invalid.
func TestTallyBy(t *testing.T) {
	n := newNode(t)
	members := map[string]any{}
	for i := 0; i < 10; i++ {
		region, density := "north", "urban"
		if i%2 == 1 {
			region, density = "south", "rural"
		}
		if i == 0 {
			density = "rural"
		}
		members[ht.Member(i).Key().String()] = map[string]string{"region": region, "density": density}
	}
	table, err := dag.Marshal(map[string]any{
		"attributes": map[string][]string{"region": {"north", "south"}, "density": {"urban", "rural"}},
		"members":    members,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := ht.New(ht.Options{Simulation: true, Districts: table})
	s := &session{b: b, space: b.Session.String()}
	n.submit(t, s, b.Create)
	n.submit(t, s, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), s.last))
	n.submit(t, s, b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), s.last))
	n.submit(t, s, b.GroupCreate(ht.Member(1), "drafters", ht.Members(1, 3), ht.Members(1, 2), s.last))
	n.submit(t, s, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, s.last)
	n.submit(t, s, tx)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	n.submit(t, s, open)
	for i := 0; i < 5; i++ { // north 0, 2, 4; south 1, 3
		n.submit(t, s, b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, s.last))
	}
	n.submit(t, s, b.Ballot(ht.Member(5), mr, "reject", dag.ID{}, s.last)) // south

	path := "/merge-requests/" + mr.String() + "/tally"
	want := map[string]map[string][3]float64{ // value: electorate, approve, reject
		"region":  {"north": {5, 3, 0}, "south": {5, 2, 1}},
		"density": {"urban": {4, 2, 0}, "rural": {6, 3, 1}},
	}
	for by, groups := range want {
		a := n.getMap(t, path, url.Values{"by": {by}})
		if a["by"] != by || a["finality"] != "provisional" || a["simulation"] != true || a["status"] != "open" {
			t.Fatalf("by=%s: %v", by, a)
		}
		if tal := a["result"].(map[string]any)["tally"].(map[string]any); tal["approve"] != float64(5) || tal["reject"] != float64(1) {
			t.Fatalf("by=%s: whole tally %v", by, tal)
		}
		gs := a["groups"].([]any)
		if len(gs) != len(groups) {
			t.Fatalf("by=%s: groups %v", by, gs)
		}
		for _, g := range gs {
			g := g.(map[string]any)
			w, ok := groups[g["value"].(string)]
			tal := g["tally"].(map[string]any)
			if !ok || tal["electorate"] != w[0] || tal["approve"] != w[1] || tal["reject"] != w[2] || tal["approve_of_cast"] == nil || tal["approve_of_electorate"] == nil {
				t.Fatalf("by=%s: group %v, want %v", by, g, w)
			}
		}
	}
	n.problem(t, "GET", "/oth/v0"+path+"?by=religion", "", nil, 422, dag.CodeDistrictAttributeInvalid)
	n.problem(t, "GET", "/oth/v0"+path+"?by=", "", nil, 422, dag.CodeDistrictAttributeInvalid)
	n.problem(t, "GET", "/oth/v0/merge-requests/"+dag.Sum(nil).String()+"/tally?by=region", "", nil, 404, "witan:not_found")
	// A session without a table: by= is refused, the plain tally served.
	plain := newNode(t)
	ps := plain.newSession(t)
	plain.problem(t, "GET", "/oth/v0/merge-requests/"+ps.mr.String()+"/tally?by=region", "", nil, 422, dag.CodeDistrictAttributeInvalid)
	plain.getMap(t, "/merge-requests/"+ps.mr.String()+"/tally", nil)
}
