package httpapi_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
)

// estSession is a simulation session with a district table (regions
// north/south, densities rural/urban) over HTTP, a fiscal MR whose change
// carries a 90-day sunset (so its fact sheet lists one, D69), a fiscal
// MR without one, advisor key 10 registered and aged (D61), and the
// node's checkpoint time at 2026-09-21T00:00:00Z covering both opens.
type estSession struct {
	*l1Session
	sunsetMR, plainMR dag.ID
}

func newEstSession(t *testing.T, n *apiNode) *estSession {
	t.Helper()
	table := []byte(`{"attributes":{"density":["rural","urban"],"region":["north","south"]},"members":{}}`)
	s := &estSession{l1Session: startSession(t, n, ht.Options{Simulation: true, Districts: table}, 5)}
	b := s.b
	s.do(t, n, b.BranchCreate(ht.Member(1), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, c := b.Append(ht.Member(2), "draft", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s1", "[[sunset:90]] [[approp:ops:5000:2027]] $5000 is appropriated.")}, s.last)
	s.do(t, n, tx)
	o, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Fiscal: true}, s.last)
	s.do(t, n, o)
	s.sunsetMR = mr
	s.do(t, n, b.BranchCreate(ht.Member(1), "plain", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), s.last))
	tx, c = b.Append(ht.Member(2), "plain", b.Genesis, []statute.Op{ht.Replace(b.Trees[b.Genesis], "/us/t1/s2", "[[approp:ops:7000:2027]] $7000 is appropriated.")}, s.last)
	s.do(t, n, tx)
	o, mr = b.Open(ht.Member(1), ht.MR{Source: "plain", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Fiscal: true, Summary: "plain"}, s.last)
	s.do(t, n, o)
	s.plainMR = mr
	n.checkpointNow(t, s.space)
	s.do(t, n, b.KeyRegister(ht.Member(10), s.last))
	b.Advance(25 * time.Hour)
	s.do(t, n, b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k-v0.13", nil), s.last))
	return s
}

// years is a by_year series: n years from first, each with outlays
// step*(i+1) dollars (i from 0), ranges ±10.
func years(first, n, step int) []any {
	var out []any
	for i := 0; i < n; i++ {
		v := step * (i + 1)
		out = append(out, map[string]any{"year": first + i, "outlays": strconv.Itoa(v),
			"range_low": strconv.Itoa(v - 10), "range_high": strconv.Itoa(v + 10)})
	}
	return out
}

// estimate is an opinion body carrying an estimate on mr with by_year and
// the extra estimate members given (nil deletes).
func estimate(kind string, mr dag.ID, byYear []any, extra map[string]any) map[string]any {
	e := map[string]any{"mr": mr.String(), "baseline": "current law", "by_year": byYear, "assumptions": "simulated uptake"}
	for k, v := range extra {
		if v == nil {
			delete(e, k)
		} else {
			e[k] = v
		}
	}
	return ht.OpinionBody(kind, "mr", mr.String(), map[string]any{"estimate": e, "method": map[string]any{"inputs": []any{}}})
}

// TestEstimatesHTTP (D53, D69, D75; S19's fiscal part, S20's
// estimate_incomplete): every refusal code of an estimate over a real
// listener, two estimates accepted side by side in the fact sheet with
// estimate_totals summed by hand, and fiscal notice starting at the
// first checkpoint that includes an estimate.
func TestEstimatesHTTP(t *testing.T) {
	n := newNode(t)
	s := newEstSession(t, n)
	b := s.b
	adv := ht.Member(10)
	// The estimates are witnessed in 2026 and the MRs take effect on
	// merge: by_year covers 2026..2035 at least.
	ten := years(2026, 10, 1000)
	perm := years(2026, 10, 1500)

	// estimate_missing: no estimate yet, an approval is refused.
	yes := s.vote(t, n, s.sunsetMR, "approve", 0, 3)
	n.refuse(t, b.Determine(ht.Member(3), s.sunsetMR, yes, "approved", s.last), dag.CodeEstimateMissing)

	// estimate_incomplete: nine years only (2035 missing).
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.plainMR, years(2026, 9, 1000), nil), s.last), dag.CodeEstimateIncomplete)
	// ... ten years starting a year late (2026 missing).
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.plainMR, years(2027, 10, 1000), nil), s.last), dag.CodeEstimateIncomplete)
	// ... an MR whose fact sheet lists a sunset, without if_permanent.
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.sunsetMR, ten, nil), s.last), dag.CodeEstimateIncomplete)
	// ... if_permanent null without a reason.
	noReason := estimateNull("advisor", s.sunsetMR, ten)
	delete(noReason["estimate"].(map[string]any), "if_permanent_reason")
	n.refuse(t, b.Opinion(adv, noReason, s.last), dag.CodeEstimateIncomplete)
	// schema: if_permanent that is neither a series nor null.
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.sunsetMR, ten, map[string]any{"if_permanent": "null"}), s.last), dag.CodeSchema)
	// ... if_permanent over other years than by_year.
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.sunsetMR, ten, map[string]any{"if_permanent": years(2026, 11, 1500)}), s.last), dag.CodeEstimateIncomplete)
	// ... a region the district table does not declare, then a density.
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.plainMR, ten, map[string]any{"distribution": map[string]any{
		"by_region": []any{map[string]any{"region": "east", "by_year": years(2026, 1, 5)}}}}), s.last), dag.CodeEstimateIncomplete)
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.plainMR, ten, map[string]any{"distribution": map[string]any{
		"local_costs": []any{map[string]any{"region": nil, "density": "suburban", "bearer": "county", "by_year": years(2026, 1, 5)}}}}), s.last), dag.CodeEstimateIncomplete)
	// schema: an amount that is not whole dollars; a bearer outside the list.
	bad := years(2026, 10, 1000)
	bad[3].(map[string]any)["outlays"] = "1000.50"
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.plainMR, bad, nil), s.last), dag.CodeSchema)
	n.refuse(t, b.Opinion(adv, estimate("advisor", s.plainMR, ten, map[string]any{"distribution": map[string]any{
		"local_costs": []any{map[string]any{"region": "north", "density": nil, "bearer": "federal", "by_year": years(2026, 1, 5)}}}}), s.last), dag.CodeSchema)
	// unknown_parent: an estimate on an MR that is not in its causal past.
	n.refuse(t, b.Opinion(adv, estimate("advisor", dag.Sum([]byte("no such MR")), ten, nil), s.last), dag.CodeUnknownParent)

	// Accepted, at checkpoint time 2026-09-23: the advisor's estimate with
	// an if_permanent series and a distribution, and a member's with
	// if_permanent null and a reason.
	n.clk.t = time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC)
	a := b.Opinion(adv, estimate("advisor", s.sunsetMR, ten, map[string]any{"if_permanent": perm, "distribution": map[string]any{
		"by_region":   []any{map[string]any{"region": "north", "by_year": years(2026, 10, 600)}, map[string]any{"region": "south", "by_year": years(2026, 10, 400)}},
		"by_density":  []any{map[string]any{"density": "urban", "by_year": years(2026, 10, 700)}},
		"local_costs": []any{map[string]any{"region": "south", "density": nil, "bearer": "county", "by_year": years(2026, 2, 50)}}}}), s.last)
	s.do(t, n, a)
	saving := []any{}
	for y := 2026; y <= 2035; y++ {
		saving = append(saving, map[string]any{"year": y, "outlays": "-100"})
	}
	m := b.Opinion(ht.Member(3), estimateNull("member", s.sunsetMR, saving), s.last)
	s.do(t, n, m)
	n.checkpointNow(t, s.space)

	// The fact sheet: both estimates, sorted by id, none official;
	// as_written sums by_year (1000+2000+...+10000 = 55000; ten times
	// -100 = -1000), if_permanent sums its series (1500*55 = 82500) or is
	// null.
	want := map[string][2]any{a.ID.String(): {"55000", "82500"}, m.ID.String(): {"-1000", nil}}
	facts := n.get(t, "/merge-requests/"+s.sunsetMR.String()+"/facts")
	sheet, _ := facts["facts"].(map[string]any)
	ests, _ := sheet["estimates"].([]any)
	tots, _ := sheet["estimate_totals"].([]any)
	if len(ests) != 2 || len(tots) != 2 || sheet["authoritative"] != false {
		t.Fatalf("facts: estimates %v, estimate_totals %v", ests, tots)
	}
	if ests[0].(string) >= ests[1].(string) {
		t.Fatalf("estimates not sorted: %v", ests)
	}
	for i, x := range tots {
		e := x.(map[string]any)
		w, ok := want[e["estimate"].(string)]
		if !ok || e["estimate"] != ests[i] || e["as_written"] != w[0] || e["if_permanent"] != w[1] {
			t.Fatalf("estimate_totals[%d] = %v, want %v", i, e, w)
		}
	}
	// Side by side, each as signed and attributed, none official.
	side := n.get(t, "/merge-requests/"+s.sunsetMR.String()+"/estimates")
	list, _ := side["estimates"].([]any)
	if len(list) != 2 || side["authoritative"] != false || side["simulation"] != true || side["finality"] != "final_advisory" {
		t.Fatalf("estimates view %v", side)
	}
	for i, x := range list {
		w := want[field(x, "opinion").(string)]
		if field(x, "opinion") != ests[i] || field(x, "as_written") != w[0] || field(x, "if_permanent") != w[1] {
			t.Fatalf("estimates[%d] = %v, want totals %v", i, x, w)
		}
		switch field(x, "opinion") {
		case a.ID.String():
			if field(x, "author") != adv.Key().String() || field(x, "author_kind") != "advisor" ||
				field(x, "estimate", "distribution", "by_region", 1, "region") != "south" || field(x, "estimate", "if_permanent", 9, "outlays") != "15000" {
				t.Fatalf("the advisor's estimate as shown: %v", x)
			}
		case m.ID.String():
			if field(x, "author_kind") != "member" || field(x, "estimate", "if_permanent") != nil || field(x, "estimate", "if_permanent_reason") == nil {
				t.Fatalf("the member's estimate as shown: %v", x)
			}
		}
	}
	if none := n.get(t, "/merge-requests/"+s.plainMR.String()+"/estimates"); len(none["estimates"].([]any)) != 0 {
		t.Fatalf("estimates on the plain MR: %v", none)
	}
	if sl, _ := sheet["sunsets"].([]any); len(sl) != 1 {
		t.Fatalf("sunsets %v", sheet["sunsets"])
	}
	// Every estimate is listed with the MR's other opinions.
	ops := n.get(t, "/opinions?subject="+s.sunsetMR.String())
	if l, _ := ops["opinions"].([]any); len(l) != 2 {
		t.Fatalf("/opinions?subject=: %v", ops)
	}

	// Fiscal notice: the approval is accepted once an estimate is in its
	// causal past; at checkpoint time 2026-09-25 its evaluation counts
	// notice from the first checkpoint including an estimate (09-23:
	// 172800 s, short of 259200), not from the open's (09-21).
	s.do(t, n, b.Determine(ht.Member(3), s.sunsetMR, yes, "approved", s.last))
	n.clk.t = time.Date(2026, 9, 25, 0, 0, 0, 0, time.UTC)
	n.checkpointNow(t, s.space)
	mr := n.get(t, "/merge-requests/"+s.sunsetMR.String())
	if mr["status"] != "merged" {
		t.Fatalf("status %v", mr["status"])
	}
	timing := field(mr, "evaluations", 0, "result", "timing")
	if field(timing, "notice_elapsed") != float64(172800) || field(timing, "notice_met") != false {
		t.Fatalf("fiscal notice timing %v, want 172800 s elapsed from the first estimate, not met", timing)
	}
	if fmt.Sprint(field(mr, "evaluations", 0, "opened_checkpoint_time")) != "2026-09-21T00:00:00Z" {
		t.Fatalf("opened_checkpoint_time %v", field(mr, "evaluations", 0, "opened_checkpoint_time"))
	}
}

// estimateNull is an estimate on mr with if_permanent null and a reason.
func estimateNull(kind string, mr dag.ID, byYear []any) map[string]any {
	body := estimate(kind, mr, byYear, map[string]any{"if_permanent_reason": "the sunset is certain to be renewed"})
	body["estimate"].(map[string]any)["if_permanent"] = nil
	return body
}
