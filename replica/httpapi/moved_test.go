package httpapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// section returns the text of /us/t1/s<i> in a served root NodeSpec.
func section(t *testing.T, root any, i int) string {
	t.Helper()
	title := root.(map[string]any)["children"].([]any)[0].(map[string]any)
	return title["children"].([]any)[i-1].(map[string]any)["text"].(string)
}

func ids(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.(string)
	}
	return out
}

// TestMovedHeadMerge: two MRs opened on the same root head (the genesis
// change) both pass; the second executes on the head the first moved the
// root to, so its merge change's parents are not the heads its body
// names. Every review and law endpoint answers from the replica's record
// of what executed.
func TestMovedHeadMerge(t *testing.T) {
	n := newNode(t)
	ctx := context.Background()
	s := n.newSession(t) // MR 1: draft's section 1 to 45 days, on the genesis
	b := s.b
	n.submit(t, s, b.BranchCreate(ht.Member(1), "draft2", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, change2 := b.Append(ht.Member(2), "draft2", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s2", "The period is 60 days.")}, s.last)
	n.submit(t, s, tx)
	open2, mr2 := b.Open(ht.Member(1), ht.MR{Source: "draft2", SourceHead: change2, TargetHead: b.Genesis,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice), Summary: "Extends section 2 to 60 days"}, s.last)
	n.submit(t, s, open2)
	decide := func(mr dag.ID) {
		var ballots []dag.ID
		for i := 0; i < 6; i++ {
			bt := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, s.last)
			n.submit(t, s, bt)
			ballots = append(ballots, bt.ID)
		}
		n.submit(t, s, b.Determine(ht.Member(3), mr, ballots, "approved", s.last))
	}
	decide(s.mr)
	decide(mr2)
	mrPath := func(mr dag.ID, what string) string { return "/merge-requests/" + mr.String() + "/" + what }
	m1 := n.getMap(t, "/merge-requests/"+s.mr.String(), nil)
	m2 := n.getMap(t, "/merge-requests/"+mr2.String(), nil)
	if m1["status"] != "merged" || m2["status"] != "merged" {
		t.Fatalf("statuses %v %v", m1["status"], m2["status"])
	}
	merge1, merge2 := m1["merge"].(string), m2["merge"].(string)
	if merge1 == merge2 || m2["target"].(map[string]any)["head"] != b.Genesis.String() {
		t.Fatalf("merges %s %s, MR 2's target %v", merge1, merge2, m2["target"])
	}

	// The merge changes are served as derived objects, with the parents
	// they were executed with: MR 2's follows MR 1's merge, not the
	// genesis its body names.
	for id, want := range map[string][]string{merge1: {b.Genesis.String(), s.change.String()}, merge2: {merge1, change2.String()}, b.Genesis.String(): {}} {
		o := n.getMap(t, "/objects/"+id, nil)
		if o["derived"] != true || o["space"] != s.space || !slices.Equal(ids(o["object"].(map[string]any)["parents"].([]any)), want) {
			t.Fatalf("/objects/%s: %v, want parents %v", id, o, want)
		}
	}

	// Before any checkpoint the merges have no effective date (on_merge):
	// both are held back, provisionally.
	law := n.getMap(t, "/law", url.Values{"date": {"2030-01-01"}})
	if law["merges_in_force"] != float64(0) || !slices.Equal(ids(law["held_back"].([]any)), []string{s.mr.String(), mr2.String()}) ||
		law["head"] != b.Genesis.String() || law["finality"] != "provisional" || section(t, law["root"], 2) != "The period is 30 days." {
		t.Fatalf("law before a checkpoint: %v", law)
	}

	n.clk.t = n.clk.t.Add(73 * time.Hour) // 2026-09-24T01:00Z
	if _, err := n.node.Replica().Checkpoint(ctx, dag.MustParseID(s.space)); err != nil {
		t.Fatal(err)
	}

	// MR 2's review is its patch against the open-time head (the
	// genesis): section 2 only, 30 -> 60, checks pass.
	diff := n.getMap(t, mrPath(mr2, "diff"), nil)
	dv := diff["diff"].(map[string]any)
	if mod := ids(dv["nodes"].(map[string]any)["modified"].([]any)); !slices.Equal(mod, []string{"/us/t1/s2"}) ||
		!strings.Contains(dv["unified"].(string), "60 days") || diff["merge_base"] != b.Genesis.String() || diff["finality"] != "final_advisory" {
		t.Fatalf("MR 2's diff %v", diff)
	}
	if checks := n.getMap(t, mrPath(mr2, "checks"), nil)["checks"].(map[string]any); checks["blocked"] != false {
		t.Fatalf("MR 2's checks %v", checks)
	}
	facts := n.getMap(t, mrPath(mr2, "facts"), nil)["facts"].(map[string]any)
	if nums, _ := json.Marshal(facts["numbers"]); !strings.Contains(string(nums), `"/us/t1/s2"`) || !strings.Contains(string(nums), "60") || strings.Contains(string(nums), `"/us/t1/s1"`) {
		t.Fatalf("MR 2's fact sheet numbers %s", nums)
	}

	// The root's tree has both merges.
	root := n.getMap(t, "/branches/root", nil)["branch"].(map[string]any)
	if heads := ids(root["heads"].([]any)); !slices.Equal(heads, []string{merge2}) {
		t.Fatalf("root heads %v, want MR 2's merge %s", heads, merge2)
	}
	for nid, want := range map[string]string{"/us/t1/s1": "The period is 45 days.", "/us/t1/s2": "The period is 60 days."} {
		tr := n.getMap(t, "/branches/root/tree", url.Values{"nid": {nid}})
		if tr["node"].(map[string]any)["text"] != want || tr["head"] != merge2 {
			t.Fatalf("root tree at %s: %v", nid, tr)
		}
	}

	// The law on a date: both merges from 2026-09-24, in the order they
	// executed; nothing before.
	law = n.getMap(t, "/law", url.Values{"date": {"2026-09-24"}})
	if law["merges_in_force"] != float64(2) || law["head"] != merge2 || len(law["held_back"].([]any)) != 0 || law["finality"] != "final_advisory" ||
		section(t, law["root"], 1) != "The period is 45 days." || section(t, law["root"], 2) != "The period is 60 days." {
		t.Fatalf("law on 2026-09-24: %v", law)
	}
	law = n.getMap(t, "/law", url.Values{"date": {"2026-09-23"}})
	if law["merges_in_force"] != float64(0) || len(law["held_back"].([]any)) != 2 || section(t, law["root"], 1) != "The period is 30 days." {
		t.Fatalf("law on 2026-09-23: %v", law)
	}
	if plain := n.getMap(t, "/law", nil); plain["head"] != merge2 || section(t, plain["root"], 2) != "The period is 60 days." {
		t.Fatalf("law %v", plain)
	}

	// MR 3, opened on the moved head, puts section 1 back to 30 days: its
	// merge-base (draft's earlier head) is found through MR 2's merge
	// change's real parents, and its fact sheet sees the revert to the
	// genesis text (D41).
	back, backID := b.Append(ht.Member(2), "draft", s.change, []statute.Op{ht.Replace(b.Trees[s.change], "/us/t1/s1", "The period is 30 days.")}, s.last)
	n.submit(t, s, back)
	m2id, _ := dag.ParseID(merge2)
	open3, mr3 := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: backID, TargetHead: m2id,
		Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	n.submit(t, s, open3)
	diff3 := n.getMap(t, mrPath(mr3, "diff"), nil)
	if diff3["merge_base"] != s.change.String() || diff3["finality"] != "provisional" {
		t.Fatalf("MR 3's diff %v, want merge-base %s", diff3, s.change)
	}
	facts3 := n.getMap(t, mrPath(mr3, "facts"), nil)["facts"].(map[string]any)
	rev := facts3["reverts"].([]any)
	if len(rev) != 1 || rev[0].(map[string]any)["nid"] != "/us/t1/s1" || rev[0].(map[string]any)["previously_in"] != b.Genesis.String() {
		t.Fatalf("MR 3's reverts %v", facts3["reverts"])
	}
	n.getMap(t, mrPath(mr3, "checks"), nil)
}
