package house_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"pgregory.net/rapid"
)

// TestPartsConvergence: what estimates, feasibility, attestations and
// jurisdiction choices derive is a function of the entry set. Every
// opinion below is concurrent with the others (one parent, the aging
// entry), and any causal delivery order, through Admit or Derive, gives
// the same answers, worked out by hand: key 11's attestation is replaced
// by its own revocation (a later ts), so key 12's attestation is shown;
// CA's two choices with one effective date keep their ts order (opt_in,
// then opt_out); both estimates and the feasibility opinion are listed,
// sorted by id.
func TestPartsConvergence(t *testing.T) {
	k10, k11, k12 := ht.Member(10), ht.Member(11), ht.Member(12)
	b := ht.New(ht.Options{Simulation: true, Jurisdictions: []house.Jurisdiction{
		{Code: "CA", Name: "California", Key: k10.Key().String()}, {Code: "TX", Name: "Texas", Key: k11.Key().String()}}})
	h := house.New(b.Session, b.Objects)
	var txs []ht.Tx
	admit := func(tx ht.Tx) {
		t.Helper()
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		txs = append(txs, tx)
	}
	admit(b.Create)
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	admit(roster)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Fiscal: true}, roster.ID)
	admit(open)
	last := open.ID
	for _, k := range []int{10, 11, 12} {
		r := b.KeyRegister(ht.Member(k), last)
		admit(r)
		last = r.ID
	}
	b.Advance(25 * time.Hour)
	aged := b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k", nil), last)
	admit(aged)

	full := func(orgs ...any) map[string]any {
		d := ht.Full()
		d["affiliations"] = orgs
		return d
	}
	attest := func(s *dag.Signer, revoked bool) ht.Tx {
		return b.Opinion(s, ht.OpinionBody("advisor", "spec", "30k", map[string]any{"disclosure": full("Org"),
			"attest": map[string]any{"key": k10.Key().String(), "organization": "Org", "role": "r", "expires": "2027-01-01", "revoked": revoked}}), aged.ID)
	}
	choice := func(c string) ht.Tx {
		return b.Opinion(k10, ht.OpinionBody("advisor", "session", b.Session.String(), map[string]any{
			"jurisdiction_choice": map[string]any{"program": "p", "choice": c, "effective": "2026-10-01"}}), aged.ID)
	}
	var byYear []any
	for y := 2026; y < 2036; y++ {
		byYear = append(byYear, map[string]any{"year": y, "outlays": "7"})
	}
	est := func(s *dag.Signer, kind string) ht.Tx {
		return b.Opinion(s, ht.OpinionBody(kind, "mr", mr.String(), map[string]any{"estimate": map[string]any{
			"mr": mr.String(), "baseline": "b", "by_year": byYear, "assumptions": "a"}}), aged.ID)
	}
	op := b.Opinion(k10, ht.OpinionBody("advisor", "mr", mr.String(), map[string]any{"disclosure": full("Org")}), aged.ID)
	a11, r11, a12 := attest(k11, false), attest(k11, true), attest(k12, false)
	in, out := choice("opt_in"), choice("opt_out")
	e12, e3 := est(k12, "advisor"), est(ht.Member(3), "member")
	feas := b.Opinion(k12, ht.OpinionBody("advisor", "mr", mr.String(), map[string]any{"feasibility": map[string]any{
		"mr": mr.String(), "implementer": "i", "nodes": []any{"/us/t1/s1"}, "earliest": "2027-01-01"}}), aged.ID)
	for _, tx := range []ht.Tx{op, a11, r11, a12, in, out, e12, e3, feas} {
		admit(tx)
	}

	answer := func(h *house.House) string {
		aff, _ := h.Affiliations(op.ID)
		j, _ := json.Marshal(map[string]any{"affiliations": aff, "opt_ins": h.OptIns(), "estimates": h.Estimates(mr),
			"feasibility": h.Feasibility(mr), "estimate_ids": h.EstimateOpinions(mr)})
		return string(j)
	}
	// By hand.
	if aff, _ := h.Affiliations(op.ID); len(aff) != 1 || aff[0].AttestedBy != k12.Key().String() {
		t.Fatalf("affiliations %+v, want Org attested by key 12", aff)
	}
	ca := statute.MustDate("2026-10-01")
	if got := h.OptIns(); !slices.Equal(got, []statute.OptIn{{Jurisdiction: "CA", Program: "p", In: true, Effective: ca}, {Jurisdiction: "CA", Program: "p", In: false, Effective: ca}}) {
		t.Fatalf("opt-ins %+v", got)
	}
	ids := []dag.ID{e12.ID, e3.ID}
	slices.SortFunc(ids, dag.ID.Compare)
	if got := h.EstimateOpinions(mr); !slices.Equal(got, ids) {
		t.Fatalf("estimates %v, want %v", got, ids)
	}
	if e := h.Estimates(mr); len(e) != 2 || len(e[0].Outlays) != 10 || e[0].Outlays[0] != "7" || e[0].IfPermanent != nil {
		t.Fatalf("estimates %+v", e)
	}
	if f := h.Feasibility(mr); len(f) != 1 || f[0].Opinion != feas.ID || f[0].Earliest != statute.MustDate("2027-01-01") {
		t.Fatalf("feasibility %+v", f)
	}
	want := answer(h)
	rapid.Check(t, func(rt *rapid.T) {
		order := causalShuffle(rt, txs)
		h := house.New(b.Session, b.Objects)
		for _, tx := range order {
			if err := h.Admit(tx.ID, tx.Env); err != nil {
				rt.Fatalf("%s: %v", tx.Env.Type, err)
			}
		}
		if got := answer(h); got != want {
			rt.Fatalf("answers differ:\n%s\n%s", got, want)
		}
		d, refused, _, err := house.Derive(b.Session, ht.Input(order...), b.Objects)
		if err != nil || len(refused) > 0 {
			rt.Fatalf("derive: %v %v", err, refused)
		}
		if got := answer(d); got != want {
			rt.Fatalf("derived answers differ:\n%s\n%s", got, want)
		}
	})
}

// TestPartsIgnoreRotatedKeys (D62 with D53): an estimate signed by a
// member's old key after the rotation's compromised_after entry is
// ignored by the views (the fact sheet's estimates, the side-by-side
// list), as the member's stolen-key opinions are; one in that entry's
// causal past still counts.
func TestPartsIgnoreRotatedKeys(t *testing.T) {
	b := ht.New(ht.Options{})
	h := house.New(b.Session, b.Objects)
	admit := func(tx ht.Tx) {
		t.Helper()
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
	}
	admit(b.Create)
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)
	admit(roster)
	reg := b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), roster.ID)
	admit(reg)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice), Fiscal: true}, reg.ID)
	admit(open)
	var byYear []any
	for y := 2026; y < 2036; y++ {
		byYear = append(byYear, map[string]any{"year": y, "outlays": "1"})
	}
	est := func(parent dag.ID) ht.Tx {
		return b.Opinion(ht.Member(3), ht.OpinionBody("member", "mr", mr.String(), map[string]any{"estimate": map[string]any{
			"mr": mr.String(), "baseline": "b", "by_year": byYear, "assumptions": "a"}}), parent)
	}
	e1 := est(open.ID)
	admit(e1)
	cut := b.Opinion(ht.Member(4), ht.OpinionBody("member", "spec", "30k", nil), e1.ID)
	admit(cut)
	e2 := est(cut.ID)
	admit(e2)
	if got := h.EstimateOpinions(mr); len(got) != 2 {
		t.Fatalf("before the rotation: %v", got)
	}
	admit(b.KeyRotate(ht.Member(20), ht.Member(3).Key(), cut.ID, ht.Member(0), e2.ID))
	if got := h.EstimateOpinions(mr); !slices.Equal(got, []dag.ID{e1.ID}) {
		t.Fatalf("after the rotation: %v, want only %s", got, e1.ID)
	}
	if e := h.Estimates(mr); len(e) != 1 || e[0].Opinion != e1.ID {
		t.Fatalf("estimates %+v", e)
	}
}
