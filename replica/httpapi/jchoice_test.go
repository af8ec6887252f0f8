package httpapi_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/statute"
)

// sectionText is the text of section i (1-based) of title 1 in a /law
// answer.
func sectionText(l map[string]any, i int) any {
	return field(l, "root", "children", 0, "children", i-1, "text")
}

// choice is a jurisdiction_choice opinion body (D73) of an advisor on the
// session.
func choice(space, program, c, effective string) map[string]any {
	return ht.OpinionBody("advisor", "session", space, map[string]any{
		"jurisdiction_choice": map[string]any{"program": program, "choice": c, "effective": effective}})
}

// TestJurisdictionChoicesHTTP (D73; S21's jurisdiction part): a research
// session declares CA (key 10) and TX (key 11). A merged MR limits
// section 1 to CA ([[applies:CA]]) and makes section 2 an
// [[opt_in:medicaid-x]] node. /law?jurisdiction=TX shows section 1 as it
// stood before the merge; section 2 shows its new text in CA only from
// the effective date of CA's recorded opt-in, and its old text again
// after CA opts out. Choices by a key the session does not name are
// refused not_authorized, malformed ones schema.
func TestJurisdictionChoicesHTTP(t *testing.T) {
	n := newNode(t)
	k10, k11, k12 := ht.Member(10), ht.Member(11), ht.Member(12)
	// Only a research (simulation) session names jurisdiction keys.
	plain := ht.New(ht.Options{Label: "not research", Jurisdictions: []house.Jurisdiction{{Code: "CA", Name: "California", Key: k10.Key().String()}}})
	n.refuse(t, plain.Create, dag.CodeSchema)
	s := startSession(t, n, ht.Options{Simulation: true, Jurisdictions: []house.Jurisdiction{
		{Code: "CA", Name: "California", Key: k10.Key().String()}, {Code: "TX", Name: "Texas", Key: k11.Key().String()}}}, 5)
	b := s.b
	for _, k := range []int{10, 11, 12} {
		s.do(t, n, b.KeyRegister(ht.Member(k), s.last))
	}
	b.Advance(25 * time.Hour)
	s.do(t, n, b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k-v0.13", nil), s.last))

	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	seed := b.Trees[b.Genesis]
	tx, c := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{
		ht.Replace(seed, "/us/t1/s1", "[[applies:CA]] The period is 45 days."),
		ht.Replace(seed, "/us/t1/s2", "[[opt_in:medicaid-x]] The period is 60 days.")}, s.last)
	s.do(t, n, tx)
	o, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, s.last)
	s.do(t, n, o)
	yes := s.vote(t, n, mr, "approve", 0, 3)
	s.do(t, n, b.Determine(ht.Member(3), mr, yes, "approved", s.last))
	// The merge is effective on the date of the checkpoint that includes
	// its determination (on_merge): 2026-09-21.
	n.checkpointNow(t, s.space)

	// Refusals: a key the session names for no jurisdiction; a choice
	// that is neither opt_in nor opt_out; a date that is not one.
	n.refuse(t, b.Opinion(k12, choice(s.space, "medicaid-x", "opt_in", "2026-10-01"), s.last), dag.CodeNotAuthorized)
	n.refuse(t, b.Opinion(k10, choice(s.space, "medicaid-x", "maybe", "2026-10-01"), s.last), dag.CodeSchema)
	n.refuse(t, b.Opinion(k10, choice(s.space, "medicaid-x", "opt_in", "2026-10-32"), s.last), dag.CodeSchema)
	// CA opts in from 2026-10-01 and out from 2026-11-01; TX records an
	// opt_out (nothing changes for it).
	s.do(t, n, b.Opinion(k10, choice(s.space, "medicaid-x", "opt_in", "2026-10-01"), s.last))
	s.do(t, n, b.Opinion(k10, choice(s.space, "medicaid-x", "opt_out", "2026-11-01"), s.last))
	s.do(t, n, b.Opinion(k11, choice(s.space, "medicaid-x", "opt_out", "2026-10-01"), s.last))

	law := func(date, j string) map[string]any {
		q := url.Values{"date": {date}}
		if j != "" {
			q.Set("jurisdiction", j)
		}
		return n.getMap(t, "/law", q)
	}
	const old, s1, s2 = "The period is 30 days.", "[[applies:CA]] The period is 45 days.", "[[opt_in:medicaid-x]] The period is 60 days."
	for _, c := range []struct {
		date, j string
		s1, s2  string
	}{
		{"2026-09-30", "", s1, s2},    // the whole text: every node as merged
		{"2026-09-30", "CA", s1, old}, // no opt-in in effect yet
		{"2026-10-01", "CA", s1, s2},  // CA's opt-in in effect
		{"2026-10-31", "CA", s1, s2},
		{"2026-11-01", "CA", s1, old}, // CA's opt-out in effect
		{"2026-10-15", "TX", old, old},
		{"2026-09-20", "CA", old, old}, // before the merge took effect
	} {
		l := law(c.date, c.j)
		if sectionText(l, 1) != c.s1 || sectionText(l, 2) != c.s2 || sectionText(l, 3) != old {
			t.Fatalf("/law?date=%s&jurisdiction=%s: sections %q, %q, %q; want %q, %q", c.date, c.j, sectionText(l, 1), sectionText(l, 2), sectionText(l, 3), c.s1, c.s2)
		}
		if l["simulation"] != true {
			t.Fatalf("/law is not labeled simulation: %v", l)
		}
	}
	n.problem(t, "GET", httpapi.Base+"/law?date=2026-10-01&jurisdiction=NY", "", nil, 422, dag.CodeJurisdictionUnknown)
	// The choices are not all checkpointed: provisional in a jurisdiction;
	// once they are, final_advisory.
	if f := law("2026-10-01", "CA")["finality"]; f != "provisional" {
		t.Fatalf("finality %v before the choices are checkpointed", f)
	}
	n.checkpointNow(t, s.space)
	if f := law("2026-10-01", "CA")["finality"]; f != "final_advisory" {
		t.Fatalf("finality %v once the choices are checkpointed", f)
	}
}
