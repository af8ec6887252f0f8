package httpapi_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// feasibility is an advisor's feasibility opinion body on mr.
func feasibility(mr dag.ID, earliest string, nodes ...string) map[string]any {
	l := []any{}
	for _, n := range nodes {
		l = append(l, n)
	}
	return ht.OpinionBody("advisor", "mr", mr.String(), map[string]any{"feasibility": map[string]any{
		"mr": mr.String(), "implementer": "State health agency", "nodes": l, "earliest": earliest,
		"depends_on": []any{"claims system upgrade"}, "notes": "simulated"}})
}

// effectiveCheck returns the effective_before_feasible check of an MR's
// /checks answer.
func effectiveCheck(t *testing.T, n *apiNode, mr dag.ID) map[string]any {
	t.Helper()
	for _, c := range field(n.get(t, "/merge-requests/"+mr.String()+"/checks"), "checks", "checks").([]any) {
		if field(c, "name") == statute.CheckEffectiveBeforeFeasible {
			return c.(map[string]any)
		}
	}
	t.Fatal("no effective_before_feasible check")
	return nil
}

// TestFeasibilityHTTP (D70; S20's feasibility and effective-marker parts):
// an MR delays section 2 with [[effective:2027-01-01]]. /law before that
// date shows section 2's prior text. A feasibility opinion naming section
// 2 with an earliest date before the marker raises nothing; one later
// than the marker raises effective_before_feasible on section 2 in
// /checks, without blocking; both are listed side by side in /facts.
// Malformed feasibility is schema, one on an MR outside its causal past
// unknown_parent.
func TestFeasibilityHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{Simulation: true}, 5)
	b := s.b
	adv := ht.Member(10)
	s.do(t, n, b.KeyRegister(adv, s.last))
	b.Advance(25 * time.Hour)
	s.do(t, n, b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k-v0.13", nil), s.last))
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	seed := b.Trees[b.Genesis]
	tx, c := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{
		ht.Replace(seed, "/us/t1/s1", "The period is 45 days."),
		ht.Replace(seed, "/us/t1/s2", "[[effective:2027-01-01]] The period is 60 days.")}, s.last)
	s.do(t, n, tx)
	o, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, o)

	// Refusals.
	n.refuse(t, b.Opinion(adv, feasibility(mr, "2027-02-30", "/us/t1/s2"), s.last), dag.CodeSchema)
	n.refuse(t, b.Opinion(adv, feasibility(mr, "2027-06-01"), s.last), dag.CodeSchema) // names no node
	n.refuse(t, b.Opinion(adv, feasibility(dag.Sum([]byte("no MR")), "2027-06-01", "/us/t1/s2"), s.last), dag.CodeUnknownParent)

	// An earlier date than the marker: no warning.
	early := b.Opinion(adv, feasibility(mr, "2026-12-01", "/us/t1/s2"), s.last)
	s.do(t, n, early)
	if ch := effectiveCheck(t, n, mr); ch["status"] != "pass" || len(ch["messages"].([]any)) != 0 {
		t.Fatalf("earliest 2026-12-01 before the marker 2027-01-01: %v", ch)
	}
	// A later one: section 2 is effective 2027-01-01, before 2027-06-01.
	late := b.Opinion(adv, feasibility(mr, "2027-06-01", "/us/t1/s2", "/us/t1/s3"), s.last)
	s.do(t, n, late)
	ch := effectiveCheck(t, n, mr)
	if ch["status"] != "warn" || len(ch["messages"].([]any)) != 1 || field(ch, "messages", 0, "nids", 0) != "/us/t1/s2" {
		t.Fatalf("earliest 2027-06-01 after the marker: %v, want one warning on /us/t1/s2", ch)
	}
	if blocked := field(n.get(t, "/merge-requests/"+mr.String()+"/checks"), "checks", "blocked"); blocked != false {
		t.Fatal("a feasibility warning blocks")
	}
	facts := field(n.get(t, "/merge-requests/"+mr.String()+"/facts"), "facts", "feasibility").([]any)
	want := []string{early.ID.String(), late.ID.String()}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if len(facts) != 2 || facts[0] != want[0] || facts[1] != want[1] {
		t.Fatalf("facts feasibility %v, want %v", facts, want)
	}

	// The MR merges (the warning never blocks); /law before the marker
	// shows section 2's prior text, on and after it the new one.
	yes := s.vote(t, n, mr, "approve", 0, 3)
	s.do(t, n, b.Determine(ht.Member(3), mr, yes, "approved", s.last))
	n.checkpointNow(t, s.space)
	for _, c := range []struct{ date, s1, s2 string }{
		{"2026-12-31", "The period is 45 days.", "The period is 30 days."},
		{"2027-01-01", "The period is 45 days.", "[[effective:2027-01-01]] The period is 60 days."},
	} {
		l := n.getMap(t, "/law", url.Values{"date": {c.date}})
		if sectionText(l, 1) != c.s1 || sectionText(l, 2) != c.s2 {
			t.Fatalf("/law?date=%s: %q, %q; want %q, %q", c.date, sectionText(l, 1), sectionText(l, 2), c.s1, c.s2)
		}
	}
}
