package httpapi_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// disclosing is the full disclosure listing affiliations.
func disclosing(orgs ...string) map[string]any {
	d := ht.Full()
	l := []any{}
	for _, o := range orgs {
		l = append(l, o)
	}
	d["affiliations"] = l
	return d
}

// attestBody is an advisor's opinion on the spec carrying an attestation
// of key for org, its own disclosure listing orgs.
func attestBody(key dag.Key, org, expires string, revoked bool, orgs ...string) map[string]any {
	return ht.OpinionBody("advisor", "spec", "30k-v0.13", map[string]any{"disclosure": disclosing(orgs...),
		"attest": map[string]any{"key": key.String(), "organization": org, "role": "policy director", "expires": expires, "revoked": revoked}})
}

// TestAttestationsHTTP (D76; S21's attestation part): an opinion listing
// an organization shows unattested, then attested_by the key of a valid
// attestation, and unattested again after that key revokes it; an
// attestation from a key whose own disclosure does not list the
// organization, or that expired before the record's date, does not
// count; malformed ones are refused attestation_invalid. The record's
// date is the witnessed date of the session's latest entry: 2026-09-22.
func TestAttestationsHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	k10, k11, k12 := ht.Member(10), ht.Member(11), ht.Member(12)
	shown := func(id dag.ID) []any {
		t.Helper()
		o := n.getMap(t, "/opinions/"+id.String(), nil)
		a, _ := o["affiliations"].([]any)
		return a
	}
	wantBy := func(id dag.ID, by ...string) {
		t.Helper()
		a := shown(id)
		if len(a) != len(by) {
			t.Fatalf("affiliations %v, want %v", a, by)
		}
		for i, w := range by {
			if field(a, i, "attested_by") != w {
				t.Fatalf("affiliations %v, want attested_by %v", a, by)
			}
		}
	}

	// Key 10's opinion lists two organizations.
	op := b.Opinion(k10, ht.OpinionBody("advisor", "mr", s.mr.String(), map[string]any{"disclosure": disclosing("Farm Bureau", "Rural Health Council")}), s.last)
	n.opAccept(t, s, op)
	wantBy(op.ID, "unattested", "unattested")
	if field(shown(op.ID), 0, "organization") != "Farm Bureau" || field(shown(op.ID), 1, "organization") != "Rural Health Council" {
		t.Fatalf("affiliations %v", shown(op.ID))
	}

	// attestation_invalid: a bad date, no revoked, a key that is not one,
	// an unknown member, a key attesting itself.
	bad := attestBody(k10.Key(), "Farm Bureau", "2027-13-01", false, "Farm Bureau")
	n.opRefuse(t, b.Opinion(k11, bad, s.last), 422, dag.CodeAttestationInvalid)
	bad = attestBody(k10.Key(), "Farm Bureau", "2027-12-31", false, "Farm Bureau")
	delete(bad["attest"].(map[string]any), "revoked")
	n.opRefuse(t, b.Opinion(k11, bad, s.last), 422, dag.CodeAttestationInvalid)
	bad = attestBody(k10.Key(), "Farm Bureau", "2027-12-31", false, "Farm Bureau")
	bad["attest"].(map[string]any)["key"] = "bob"
	n.opRefuse(t, b.Opinion(k11, bad, s.last), 422, dag.CodeAttestationInvalid)
	bad = attestBody(k10.Key(), "Farm Bureau", "2027-12-31", false, "Farm Bureau")
	bad["attest"].(map[string]any)["since"] = "2020-01-01"
	n.opRefuse(t, b.Opinion(k11, bad, s.last), 422, dag.CodeAttestationInvalid)
	n.opRefuse(t, b.Opinion(k10, attestBody(k10.Key(), "Farm Bureau", "2027-12-31", false, "Farm Bureau"), s.last), 422, dag.CodeAttestationInvalid)

	// Key 12 attests without listing the organization itself: no count.
	n.opAccept(t, s, b.Opinion(k12, attestBody(k10.Key(), "Farm Bureau", "2027-12-31", false, "Grain Traders"), s.last))
	wantBy(op.ID, "unattested", "unattested")
	// Key 12 attests the council, which it lists, but expired on
	// 2026-09-21, the day before the record's date: no count.
	n.opAccept(t, s, b.Opinion(k12, attestBody(k10.Key(), "Rural Health Council", "2026-09-21", false, "Rural Health Council"), s.last))
	wantBy(op.ID, "unattested", "unattested")
	// Key 11, listing the Farm Bureau, attests key 10 for it.
	n.opAccept(t, s, b.Opinion(k11, attestBody(k10.Key(), "Farm Bureau", "2027-12-31", false, "Farm Bureau"), s.last))
	wantBy(op.ID, k11.Key().String(), "unattested")
	// Key 12 renews the council's attestation until 2027: it counts.
	n.opAccept(t, s, b.Opinion(k12, attestBody(k10.Key(), "Rural Health Council", "2027-06-30", false, "Rural Health Council"), s.last))
	wantBy(op.ID, k11.Key().String(), k12.Key().String())
	// Key 11 revokes: unattested again.
	n.opAccept(t, s, b.Opinion(k11, attestBody(k10.Key(), "Farm Bureau", "2027-12-31", true, "Farm Bureau"), s.last))
	wantBy(op.ID, "unattested", k12.Key().String())
	// The listing shows the same.
	page := n.getMap(t, "/opinions", nil)
	for _, x := range page["opinions"].([]any) {
		if field(x, "id") == op.ID.String() && field(x, "affiliations", 0, "attested_by") != "unattested" {
			t.Fatalf("/opinions: %v", x)
		}
	}
}

// TestObserverPartsHTTP (D78): an observer's opinion on the spec carrying
// an estimate, attest, feasibility, translation or jurisdiction_choice
// member, well formed or not, is refused observer_not_allowed; the same
// opinion without it is accepted.
func TestObserverPartsHTTP(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	obs := ht.Member(12)
	n.opAccept(t, s, b.GroupUpdate(ht.Member(0), "observers", []dag.Key{obs.Key()}, ht.Members(0, 1), s.last))
	seed := b.Seed.Hash().String()
	var byYear []any
	for y := 2026; y < 2036; y++ {
		byYear = append(byYear, map[string]any{"year": y, "outlays": "1"})
	}
	for name, member := range map[string]any{
		"estimate":            map[string]any{"mr": s.mr.String(), "baseline": "b", "by_year": byYear, "assumptions": "a"},
		"attest":              map[string]any{"key": ht.Member(10).Key().String(), "organization": "Org", "role": "r", "expires": "2027-01-01", "revoked": false},
		"feasibility":         map[string]any{"mr": s.mr.String(), "implementer": "i", "nodes": []any{"/us/t1/s1"}, "earliest": "2027-01-01"},
		"translation":         map[string]any{"language": "es", "of": seed, "passages": []any{map[string]any{"quote": 0, "text": "El plazo"}}},
		"jurisdiction_choice": map[string]any{"program": "p", "choice": "opt_in", "effective": "2026-10-01"},
		"malformed attest":    map[string]any{"key": "bob"},
	} {
		key := name
		if name == "malformed attest" {
			key = "attest"
		}
		body := ht.OpinionBody("advisor", "spec", "30k-v0.13", map[string]any{key: member,
			"quotes": []any{map[string]any{"as_of": seed, "nid": "/us/t1/s1", "text": "The period"}}})
		n.opRefuse(t, b.Opinion(obs, body, s.last), 403, dag.CodeObserverNotAllowed)
	}
	n.opAccept(t, s, b.Opinion(obs, ht.OpinionBody("advisor", "spec", "30k-v0.13", nil), s.last))
}
