package httpapi_test

// key.rotate over HTTP (30k §4 "Keys", D62, S19's stolen key; open points
// 13 and 15 as decided in docs/deviations.md). The rotation envelopes and
// the registrar's co-signature are made here by hand from dag's signing
// primitives, not by the author package, so a mistake there cannot hide.

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// rotateTx hand-makes a key.rotate: the body {member, new,
// compromised_after} is co-signed by cosigner over
// "oth/0.10-cosig\n" + JCS(body without cosig) (nil cosigner: no cosig),
// and the envelope is signed by signer.
func rotateTx(t *testing.T, b *ht.Builder, signer, cosigner *dag.Signer, member, newKey dag.Key, after dag.ID, parents ...dag.ID) ht.Tx {
	t.Helper()
	ca := "null"
	if after.Valid() {
		ca = `"` + after.String() + `"`
	}
	// JCS by hand: members sorted (compromised_after, member, new).
	msg := `{"compromised_after":` + ca + `,"member":"` + member.String() + `","new":"` + newKey.String() + `"}`
	body := map[string]any{"member": member.String(), "new": newKey.String(), "compromised_after": nil}
	if after.Valid() {
		body["compromised_after"] = after.String()
	}
	if cosigner != nil {
		sig := cosigner.Sign("oth/0.10-cosig\n", []byte(msg))
		body["cosig"] = map[string]any{"key": cosigner.Key().String(), "sig": base64.RawURLEncoding.EncodeToString(sig)}
	}
	return signAt(b, signer, dag.TxKeyRotate, body, parents, time.Date(2026, 9, 21, 12, 30, 0, 0, time.UTC))
}

// TestS19StolenKeyHTTP: S19's stolen key. Roster 0..4, registrar admin 0;
// an MR under Majority (gt 1/2 of the electorate N = 5, quorum 1/2,
// on_threshold). Members 0 and 1 approve; then a thief holding member 3's
// key casts reject. By hand: A=2 R=1, 2·2 = 4 > 5 fails and
// (5−1)·2 = 8 > 5 holds: pending. Member 3 rotates to a new key with the
// registrar's cosig and compromised_after = the MR's open (the thief's
// ballot is not in its causal past): the thief's ballot is ignored, so
// A=2 R=0 V=0. A second thief ballot after the rotation is ignored too
// (not equivocation: V stays 0). Member 3 votes approve with the new key:
// A=3, 3·2 = 6 > 5 with quorum 3·2 ≥ 5: if_closed approved (the root's
// notice has not elapsed, so the live outcome is pending), no one voided.
// /groups/roster shows member 3's new key among the current keys.
func TestS19StolenKeyHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	open := s.last
	approvals := s.vote(t, n, mr, "approve", 0, 2)
	cut := s.last
	thief := ht.Member(3) // the stolen key
	thiefIDs := []dag.ID{s.do(t, n, b.Ballot(thief, mr, "reject", dag.ID{}, s.last))}
	if out, c3, _ := tallyOf(t, n, mr); out != "pending" || c3 != [3]uint64{2, 1, 0} {
		t.Fatalf("before the rotation: %s %v, want pending A=2 R=1 V=0", out, c3)
	}
	newKey := ht.Member(33)
	m3 := ht.Member(3).Key()

	// Refused: no cosig; a cosig by a key that is not a registrar admin;
	// the registrar alone (its admin signs the envelope as the "new" key
	// and co-signs); an envelope not signed by the new key; a cosig over
	// other bytes; a compromised_after outside the causal past.
	n.refuse(t, rotateTx(t, b, newKey, nil, m3, newKey.Key(), open, s.last), dag.CodeRotationInvalid)
	n.refuse(t, rotateTx(t, b, newKey, ht.Member(2), m3, newKey.Key(), open, s.last), dag.CodeRotationInvalid)
	n.refuse(t, rotateTx(t, b, ht.Member(0), ht.Member(0), m3, ht.Member(0).Key(), open, s.last), dag.CodeRotationInvalid)
	n.refuse(t, rotateTx(t, b, ht.Member(4), ht.Member(0), m3, newKey.Key(), open, s.last), dag.CodeRotationInvalid)
	forged := rotateTx(t, b, newKey, ht.Member(0), m3, newKey.Key(), open, s.last)
	other := rotateTx(t, b, newKey, ht.Member(0), m3, newKey.Key(), cut, s.last)
	forged = signAt(b, newKey, dag.TxKeyRotate, withCosigOf(t, forged, other), []dag.ID{s.last}, time.Date(2026, 9, 21, 12, 30, 0, 0, time.UTC))
	n.refuse(t, forged, dag.CodeRotationInvalid)
	n.refuse(t, rotateTx(t, b, newKey, ht.Member(0), m3, newKey.Key(), dag.Sum([]byte("not an entry")), s.last), dag.CodeRotationInvalid)

	s.do(t, n, rotateTx(t, b, newKey, ht.Member(0), m3, newKey.Key(), cut, s.last))
	if out, c3, _ := tallyOf(t, n, mr); out != "pending" || c3 != [3]uint64{2, 0, 0} {
		t.Fatalf("after the rotation: %s %v, want pending A=2 R=0 V=0 (the thief's ballot ignored)", out, c3)
	}
	thiefIDs = append(thiefIDs, s.do(t, n, b.Ballot(thief, mr, "reject", dag.ID{}, s.last))) // accepted, ignored
	if _, c3, _ := tallyOf(t, n, mr); c3 != [3]uint64{2, 0, 0} {
		t.Fatalf("a second thief ballot: %v, want A=2 R=0 V=0 (ignored, not equivocation)", c3)
	}
	fresh := s.do(t, n, b.Ballot(newKey, mr, "approve", dag.ID{}, s.last))
	// The root's notice (MinRootNotice) has not elapsed at these
	// timestamps, so the live outcome stays pending and if_closed says
	// what the threshold gives.
	if _, c3, tal := tallyOf(t, n, mr); field(tal, "result", "if_closed") != "approved" || c3 != [3]uint64{3, 0, 0} || len(field(tal, "result", "voided").([]any)) != 0 {
		t.Fatalf("member 3 with the new key: %v, want if_closed approved A=3 R=0 V=0, no one voided: %v", c3, tal)
	}
	// A determination listing every ballot, the thief's two included:
	// judged in its causal past, which holds the rotation, the thief's
	// ballots do not count (else member 3 would equivocate: A=2 V=1,
	// pending), so "approved" holds and the MR merges.
	s.do(t, n, b.Determine(ht.Member(0), mr, append(append([]dag.ID{}, approvals...), thiefIDs[0], thiefIDs[1], fresh), "approved", s.last))
	if st := status(t, n, mr); st != "merged" {
		t.Fatalf("after the determination: status %s, want merged", st)
	}
	rots, _ := tal(t, n, mr)["rotations"].([]any)
	if len(rots) != 1 || field(rots[0], "member") != m3.String() || field(rots[0], "new") != newKey.Key().String() || field(rots[0], "compromised_after") != cut.String() {
		t.Fatalf("/tally rotations = %v, want member 3 → the new key, compromised_after %s", rots, cut)
	}
	// A second rotation of the same old key is refused: it is not current.
	n.refuse(t, rotateTx(t, b, ht.Member(34), ht.Member(0), m3, ht.Member(34).Key(), dag.ID{}, s.last), dag.CodeRotationInvalid)

	g := n.get(t, "/groups/roster")
	cur, _ := field(g, "group", "current").([]any)
	want := map[string]bool{}
	for _, k := range []dag.Key{ht.Member(0).Key(), ht.Member(1).Key(), ht.Member(2).Key(), newKey.Key(), ht.Member(4).Key()} {
		want[k.String()] = true
	}
	if len(cur) != 5 {
		t.Fatalf("/groups/roster current = %v, want 5 keys", cur)
	}
	for _, k := range cur {
		if !want[k.(string)] {
			t.Fatalf("/groups/roster current has %v, want member 3's new key in place of the old", k)
		}
	}
}

// withCosigOf returns tx's body with the cosig of other's body: a
// co-signature over different bytes.
func withCosigOf(t *testing.T, tx, other ht.Tx) map[string]any {
	t.Helper()
	var a, o map[string]any
	if err := json.Unmarshal(tx.Env.Body, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(other.Env.Body, &o); err != nil {
		t.Fatal(err)
	}
	a["cosig"] = o["cosig"]
	return a
}

func tal(t *testing.T, n *apiNode, mr dag.ID) map[string]any {
	t.Helper()
	return n.get(t, "/merge-requests/"+mr.String()+"/tally")
}
