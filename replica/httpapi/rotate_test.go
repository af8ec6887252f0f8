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

// stakeOn is a member's opinion on mr declaring a stake in direction dir.
func stakeOn(mr dag.ID, dir, summary string) map[string]any {
	d := map[string]any{"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{}, "ai_assistance": "none",
		"stakes": []any{map[string]any{"subject": mr.String(), "direction": dir, "venue": "a simulated market", "size_band": "<1k"}}, "foreign_principal": nil}
	return ht.OpinionBody("member", "mr", mr.String(), map[string]any{"disclosure": d, "summary": summary})
}

// TestS19StolenKeyOpinionsHTTP: opinions signed by a rotated-out key
// (D62: "ballots and opinions signed by the old key ... after
// compromised_after are ignored"), by the causal-cut reading of
// docs/deviations.md. Roster 0..4, an MR. Member 3 publishes o1 declaring
// a "yes" stake on the MR; that is the cut. The thief, holding member 3's
// key, then publishes o2 declaring "no". Before the rotation o2 is member
// 3's latest declaration, so /tally's stakes show "no" from o2. Member 3
// and the registrar rotate the key with compromised_after = o1: o2 is
// not in o1's causal past, so it is ignored ("ignored": "key_rotated" in
// /opinions/{id} and in the list), and the stakes shown are o1's "yes";
// o1 is not ignored. o3, signed by the old key with the rotation in its
// causal past, is accepted and ignored too; nothing was refused or voided.
func TestS19StolenKeyOpinionsHTTP(t *testing.T) {
	n := newNode(t)
	s := startSession(t, n, ht.Options{}, 5)
	b := s.b
	s.branch(t, n, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, n, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, n, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	m3, thief, newKey := ht.Member(3).Key(), ht.Member(3), ht.Member(33)
	o1 := s.do(t, n, b.Opinion(ht.Member(3), stakeOn(mr, "yes", "member 3's own"), s.last))
	o2 := s.do(t, n, b.Opinion(thief, stakeOn(mr, "no", "the thief's"), s.last))

	stakes3 := func(label string) (dir, op any) {
		t.Helper()
		st, _ := tal(t, n, mr)["stakes"].([]any)
		if len(st) != 1 || field(st[0], "member") != m3.String() {
			t.Fatalf("%s: /tally stakes %v, want member 3's", label, st)
		}
		return field(st[0], "stakes", 0, "direction"), field(st[0], "opinion")
	}
	ignored := func(id dag.ID) any { return field(n.get(t, "/opinions/"+id.String()), "ignored") }
	if dir, op := stakes3("before the rotation"); dir != "no" || op != o2.String() {
		t.Fatalf("before the rotation: stakes %v from %v, want no from o2 (the latest)", dir, op)
	}
	if ignored(o2) != nil {
		t.Fatal("o2 is ignored before any rotation")
	}

	s.do(t, n, rotateTx(t, b, newKey, ht.Member(0), m3, newKey.Key(), o1, s.last))
	o3 := s.do(t, n, b.Opinion(thief, stakeOn(mr, "no", "the thief again"), s.last))
	if ignored(o1) != nil || ignored(o2) != "key_rotated" || ignored(o3) != "key_rotated" {
		t.Fatalf("after the rotation: ignored o1 %v, o2 %v, o3 %v; want -, key_rotated, key_rotated", ignored(o1), ignored(o2), ignored(o3))
	}
	if dir, op := stakes3("after the rotation"); dir != "yes" || op != o1.String() {
		t.Fatalf("after the rotation: stakes %v from %v, want yes from o1 (the thief's ignored)", dir, op)
	}
	list, _ := n.get(t, "/opinions?subject="+mr.String())["opinions"].([]any)
	flagged := 0
	for _, o := range list {
		if field(o, "ignored") == "key_rotated" {
			flagged++
		}
	}
	if len(list) != 3 || flagged != 2 {
		t.Fatalf("/opinions lists %d, %d flagged; want 3 with 2 ignored", len(list), flagged)
	}
}

// TestS19RotationTwoNodesHTTP: S19's rotation across two nodes. Roster
// 0..4, an MR under Majority (N = 5) on node A, synced to B. Members 0
// and 1 approve on A (the cut: member 1's ballot). The thief, holding
// member 3's key, casts reject on A; after a sync, the nodes are cut off:
// on B the thief casts a second reject and publishes an opinion, while on
// A member 3 and the registrar rotate the key (compromised_after = the
// cut) and member 3 approves with the new key. After the logs are
// exchanged both nodes hold the same heads and state, and derive by hand:
// the thief's ballots are both outside the cut's causal past, so both are
// ignored (not equivocation): A=3 R=0 V=0, if_closed approved, no one
// voided; the thief's opinion made on B, concurrent with the rotation, is
// "ignored" on both nodes.
func TestS19RotationTwoNodesHTTP(t *testing.T) {
	a, bn := newNode(t), newNode(t)
	s := startSession(t, a, ht.Options{}, 5)
	b := s.b
	s.branch(t, a, "draft", house.RootBranch, b.Genesis, ht.AlwaysAllow())
	c := s.amend(t, a, "draft", b.Genesis, "/us/t1/s1", "The period is 45 days.")
	mr := s.open(t, a, ht.MR{Source: "draft", SourceHead: c, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)})
	s.vote(t, a, mr, "approve", 0, 2)
	cut := s.last
	thief, newKey, m3 := ht.Member(3), ht.Member(33), ht.Member(3).Key()
	s.do(t, a, b.Ballot(thief, mr, "reject", dag.ID{}, s.last))
	relay(t, a, bn)
	converged(t, a, bn, s.space)
	if out, c3, _ := tallyOf(t, bn, mr); out != "pending" || c3 != [3]uint64{2, 1, 0} {
		t.Fatalf("B before the rotation: %s %v, want pending A=2 R=1", out, c3)
	}
	fork := s.last

	// Cut off: the thief on B, the member and the registrar on A.
	s.do(t, bn, b.Ballot(thief, mr, "reject", dag.ID{}, fork))
	op := s.do(t, bn, b.Opinion(thief, ht.OpinionBody("member", "mr", mr.String(), map[string]any{"stance": "oppose"}), s.last))
	s.last = fork
	s.do(t, a, rotateTx(t, b, newKey, ht.Member(0), m3, newKey.Key(), cut, fork))
	s.do(t, a, b.Ballot(newKey, mr, "approve", dag.ID{}, s.last))
	relay(t, a, bn)
	relay(t, bn, a)
	converged(t, a, bn, s.space)
	for _, n := range []*apiNode{a, bn} {
		_, c3, tl := tallyOf(t, n, mr)
		if field(tl, "result", "if_closed") != "approved" || c3 != [3]uint64{3, 0, 0} || len(field(tl, "result", "voided").([]any)) != 0 {
			t.Fatalf("after the sync: %v, want if_closed approved A=3 R=0 V=0, no one voided: %v", c3, tl)
		}
		if ig := field(n.get(t, "/opinions/"+op.String()), "ignored"); ig != "key_rotated" {
			t.Fatalf("the thief's opinion: ignored %v, want key_rotated", ig)
		}
	}
	if jsonString(t, tal(t, a, mr)) != jsonString(t, tal(t, bn, mr)) {
		t.Fatal("the nodes' tallies differ")
	}
}
