package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// relay copies every entry of from's /log (with its attachments, in
// from's order, which is causal) to to through POST /transactions, as a
// harness or a peer pulling /log would (§9: pull a peer's /log). Entries
// to already holds are accepted again.
func relay(t *testing.T, from, to *apiNode) {
	t.Helper()
	after := ""
	for {
		path := "/log?limit=1000"
		if after != "" {
			path += "&after=" + after
		}
		page := from.get(t, path)
		entries, _ := page["entries"].([]any)
		for _, e := range entries {
			env, _ := json.Marshal(field(e, "envelope"))
			atts, _ := json.Marshal(field(e, "attachments"))
			body := []byte(`{"envelope":` + string(env) + `,"attachments":` + string(atts) + `}`)
			st, _, m := rawDo(t, http.MethodPost, to.srv.URL+httpapi.Base+"/transactions", body)
			if st != http.StatusOK {
				t.Fatalf("relay %v: %d %v", field(e, "tx"), st, m)
			}
		}
		next, _ := page["next"].(string)
		if next == "" {
			return
		}
		after = next
	}
}

// headsOf reads a node's causal frontier.
func headsOf(t *testing.T, n *apiNode) []dag.ID {
	t.Helper()
	var out []dag.ID
	for _, h := range n.get(t, "/heads")["heads"].([]any) {
		id, err := dag.ParseID(h.(string))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// converged fails unless both nodes show the same heads and state hash.
func converged(t *testing.T, a, b *apiNode, space string) {
	t.Helper()
	ha, hb := jsonString(t, a.get(t, "/heads")["heads"]), jsonString(t, b.get(t, "/heads")["heads"])
	sa, sb := a.get(t, "/sessions/"+space)["state_hash"], b.get(t, "/sessions/"+space)["state_hash"]
	if ha != hb || sa != sb {
		t.Fatalf("not converged: heads %s / %s, state %v / %v", ha, hb, sa, sb)
	}
}

// TestS2ConcurrentConflictHTTP: S2 on two nodes. Partitioned, drafters
// on node A set /us/t1/s1 to 45 days on branch "a" and drafters on node
// B set it to 60 days on branch "b", concurrently. After the nodes
// exchange logs they hold the same heads and state. A's MR merges; B's
// MR against the new root head conflicts on /us/t1/s1 (changed
// differently on both sides since the merge-base, the genesis change,
// §6 item 2) and without a resolution is refused (schema,
// docs/deviations.md); with the resolution "50 days" it is accepted,
// voted and merged, and both nodes serve the same law.
func TestS2ConcurrentConflictHTTP(t *testing.T) {
	a, bn := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{}, 10)
	b := s.b
	relay(t, a, bn)
	fork := s.last

	// The partition: each side writes without seeing the other.
	s.do(t, a, b.BranchCreate(ht.Member(1), "a", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), fork))
	ca := s.amend(t, a, "a", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	s.last = fork
	s.do(t, bn, b.BranchCreate(ht.Member(1), "b", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), fork))
	cb := s.amend(t, bn, "b", b.Genesis, "/us/t1/s1", "The period is 60 days.")
	if len(headsOf(t, a)) != 1 || len(headsOf(t, bn)) != 1 {
		t.Fatal("a side sees more than its own write")
	}
	relay(t, a, bn)
	relay(t, bn, a)
	converged(t, a, bn, s.space)
	if len(headsOf(t, a)) != 2 {
		t.Fatalf("heads after the heal: %v", headsOf(t, a))
	}

	rule := ht.Majority(house.MinRootNotice)
	o, mrA := b.Open(ht.Member(1), ht.MR{Source: "a", SourceHead: ca, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: rule}, headsOf(t, a)...)
	s.do(t, a, o)
	yes := s.vote(t, a, mrA, "approve", 0, 6)
	s.do(t, a, b.Determine(ht.Member(3), mrA, yes, "approved", s.last))
	root := rootHead(t, a, s.space)
	relay(t, a, bn)
	converged(t, a, bn, s.space)
	after45, _ := statute.Apply(b.Trees[b.Genesis], []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")})
	b.Trees[root] = after45

	// On B: the conflict, then its resolution.
	bare, _ := b.Open(ht.Member(2), ht.MR{Source: "b", SourceHead: cb, TargetHead: root, Members: ht.Members(0, 10), Rule: rule}, headsOf(t, bn)...)
	bn.refuse(t, bare, dag.CodeSchema)
	node := &statute.NodeSpec{NID: "/us/t1/s1", Kind: "section", Heading: "Section 1", Text: "The period is 50 days."}
	o, mrB := b.Open(ht.Member(2), ht.MR{Source: "b", SourceHead: cb, TargetHead: root, Members: ht.Members(0, 10), Rule: rule, Resolutions: []ht.Resolution{{NID: "/us/t1/s1", Node: node}}}, headsOf(t, bn)...)
	s.do(t, bn, o)
	yes = s.vote(t, bn, mrB, "approve", 0, 6)
	s.do(t, bn, b.Determine(ht.Member(3), mrB, yes, "approved", s.last))
	relay(t, bn, a)
	converged(t, a, bn, s.space)
	for _, n := range []*apiNode{a, bn} {
		law := n.get(t, "/law")
		if txt := field(law, "root", "children", 0, "children", 0, "text"); txt != "The period is 50 days." {
			t.Fatalf("law /us/t1/s1 %v", txt)
		}
	}
	if a.get(t, "/law")["snapshot"] != bn.get(t, "/law")["snapshot"] {
		t.Fatal("the nodes serve different root snapshots")
	}
	// The fact sheets, checks and tallies are the same on every node
	// (§6 item 6: byte-identical), finality aside (each node's own).
	for _, p := range []string{"/facts", "/checks", "/diff", "/tally"} {
		fa, fb := a.get(t, "/merge-requests/"+mrB.String()+p), bn.get(t, "/merge-requests/"+mrB.String()+p)
		delete(fa, "finality")
		delete(fb, "finality")
		if p == "/facts" {
			delete(field(fa, "facts").(map[string]any), "finality")
			delete(field(fb, "facts").(map[string]any), "finality")
		}
		if jsonString(t, fa) != jsonString(t, fb) {
			t.Fatalf("%s differs between the nodes:\n%s\n%s", p, jsonString(t, fa), jsonString(t, fb))
		}
	}
}

// TestS21TallyByOnTwoNodesHTTP: S21's district part (D72) on two nodes:
// a table with region and density yields the same ?by= tallies on every
// node. Members i even are north/urban, odd south/rural, except member 0,
// north/rural. Members 0–5 approve. By hand: north {0,2,4,6,8} has 3
// approvals of 5, south {1,3,5,7,9} 3 of 5; urban {2,4,6,8} 2 of 4,
// rural {0,1,3,5,7,9} 4 of 6.
func TestS21TallyByOnTwoNodesHTTP(t *testing.T) {
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
	table, err := dag.Marshal(map[string]any{"attributes": map[string]any{"region": []string{"north", "south"}, "density": []string{"urban", "rural"}}, "members": members})
	if err != nil {
		t.Fatal(err)
	}
	a, bn := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{Simulation: true, Districts: table}, 10)
	b := s.b
	s.do(t, a, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, c := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "The period is 45 days.")}, s.last)
	s.do(t, a, tx)
	o, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 10), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, a, o)
	s.vote(t, a, mr, "approve", 0, 6)
	relay(t, a, bn)
	converged(t, a, bn, s.space)
	want := map[string]map[string][2]uint64{
		"region":  {"north": {3, 5}, "south": {3, 5}},
		"density": {"urban": {2, 4}, "rural": {4, 6}},
	}
	for by, groups := range want {
		ta := a.get(t, "/merge-requests/"+mr.String()+"/tally?by="+by)
		tb := bn.get(t, "/merge-requests/"+mr.String()+"/tally?by="+by)
		if jsonString(t, ta) != jsonString(t, tb) {
			t.Fatalf("by=%s differs between the nodes", by)
		}
		for i := 0; ; i++ {
			g := field(ta, "groups", i)
			if g == nil {
				break
			}
			v, _ := field(g, "value").(string)
			if v == "" {
				continue
			}
			w := groups[v]
			if num(field(g, "tally", "approve")) != w[0] || num(field(g, "tally", "electorate")) != w[1] {
				t.Fatalf("by=%s %s: %v, want %d of %d", by, v, field(g, "tally"), w[0], w[1])
			}
			delete(groups, v)
		}
		if len(groups) != 0 {
			t.Fatalf("by=%s: groups %v missing", by, groups)
		}
	}
}
