package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestComplaintsS22 (30k §8 "Complaints", D39, D79; S22's complaint part,
// S16's filing part) over a real listener, envelopes signed and tx ids
// computed in the test. The session is newOpSession's: roster 0..9,
// observers group empty, keys 10, 11, 12 registered and aged. Member 12
// is made an observer. Then, each worked out from §8's words:
//   - a protocol complaint (respondent spec, issue protocol) by member 4
//     addressed to observer 12 is accepted; one by non-member 10 (an
//     advisor, disclosure in full) too: "any keyholder, member or not";
//   - addressed to 11, not an observer: addressee_invalid;
//   - respondent spec with issue other, and issue protocol with
//     respondent node: complaint_invalid;
//   - a refusal complaint whose evidence is the signed rejection receipt
//     the node gave the test for a ballot by a non-member is accepted, with
//     a refusal-log reference beside it; the same receipt with one member
//     changed (status) is evidence_invalid, as is one whose sig is
//     another signature;
//   - observer 12's opinion on the spec with responds_to naming the first
//     complaint appears in that complaint's observer_replies, in
//     /opinions/{id} and in the /opinions listing; a member's opinion with
//     the same responds_to does not (not an observer); an opinion that is
//     not a complaint has no observer_replies; an observer's reply
//     carrying a complaint's forbidden sibling (an estimate) is still
//     observer_not_allowed.
func TestComplaintsS22(t *testing.T) {
	n := newNode(t)
	s := n.newOpSession(t)
	b := s.b
	acc := func(tx ht.Tx) string {
		t.Helper()
		id := n.accept(t, tx)
		s.last = tx.ID
		return id
	}
	acc(b.GroupUpdate(ht.Member(0), "observers", []dag.Key{ht.Member(12).Key()}, ht.Members(0, 1), s.last))
	observer := ht.Member(12).Key().String()
	protocol := func(addressed ...string) map[string]any {
		return map[string]any{"respondent": map[string]any{"type": "spec", "id": "30k-v0.13 §8"}, "issue": "protocol",
			"addressed_to": addressed, "evidence": []any{}, "remedy_sought": "Say what a node does with a refusal it cannot check."}
	}
	complaint := func(kind string, c map[string]any) map[string]any {
		return ht.OpinionBody(kind, "spec", "30k-v0.13", map[string]any{"complaint": c, "stance": "question"})
	}
	c1 := acc(b.Opinion(ht.Member(4), complaint("member", protocol(observer)), s.last))
	c2 := acc(b.Opinion(ht.Member(10), complaint("advisor", protocol(observer)), s.last))

	n.refuse(t, b.Opinion(ht.Member(4), complaint("member", protocol(ht.Member(11).Key().String())), s.last), dag.CodeAddresseeInvalid)
	other := protocol()
	other["issue"] = "other"
	n.refuse(t, b.Opinion(ht.Member(4), complaint("member", other), s.last), dag.CodeComplaintInvalid)
	nodeProto := protocol()
	nodeProto["respondent"] = map[string]any{"type": "node", "id": n.node.Replica().NodeKey().String()}
	n.refuse(t, b.Opinion(ht.Member(4), complaint("member", nodeProto), s.last), dag.CodeComplaintInvalid)

	// A refusal the node signs: a ballot by a non-member (11), outside the
	// electorate.
	prob := n.refuse(t, b.Ballot(ht.Member(11), s.mr, "approve", dag.ID{}, s.last), dag.CodeBallotInvalid)
	receipt := prob["receipt"].(map[string]any)
	idx := receipt["refusal_index"]
	if idx == nil {
		t.Fatalf("rejection receipt without refusal_index: %v", receipt)
	}
	refusal := func(rc map[string]any) map[string]any {
		return map[string]any{"respondent": map[string]any{"type": "node", "id": receipt["node"]}, "issue": "refusal",
			"evidence":      []any{map[string]any{"receipt": rc}, map[string]any{"refusal": map[string]any{"node": receipt["node"], "index": idx}}},
			"remedy_sought": "Re-validate the ballot."}
	}
	onSession := func(c map[string]any) map[string]any {
		return ht.OpinionBody("member", "session", s.space, map[string]any{"complaint": c})
	}
	c3 := acc(b.Opinion(ht.Member(5), onSession(refusal(receipt)), s.last))
	forged := map[string]any{}
	for k, v := range receipt {
		forged[k] = v
	}
	forged["status"] = "accepted"
	n.refuse(t, b.Opinion(ht.Member(5), onSession(refusal(forged)), s.last), dag.CodeEvidenceInvalid)
	resigned := map[string]any{}
	for k, v := range receipt {
		resigned[k] = v
	}
	resigned["sig"] = strings.Repeat("A", 86) // 64 zero bytes, base64url
	n.refuse(t, b.Opinion(ht.Member(5), onSession(refusal(resigned)), s.last), dag.CodeEvidenceInvalid)

	// Replies: the observer's is listed, the member's is not.
	reply := acc(b.Opinion(ht.Member(12), ht.OpinionBody("advisor", "spec", "30k-v0.13", map[string]any{"responds_to": []any{c1}}), s.last))
	acc(b.Opinion(ht.Member(6), ht.OpinionBody("member", "spec", "30k-v0.13", map[string]any{"responds_to": []any{c1}}), s.last))
	n.refuse(t, b.Opinion(ht.Member(12), ht.OpinionBody("advisor", "spec", "30k-v0.13", map[string]any{"responds_to": []any{c1},
		"estimate": map[string]any{"mr": s.mr}}), s.last), dag.CodeObserverNotAllowed)

	replies := func(m map[string]any) []string {
		v, ok := m["observer_replies"]
		if !ok {
			return nil
		}
		out := []string{}
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	if got := replies(n.get(t, "/opinions/"+c1)); !slices.Equal(got, []string{reply}) {
		t.Errorf("complaint 1 observer_replies %v, want [%s]", got, reply)
	}
	for _, c := range []string{c2, c3} {
		if got := replies(n.get(t, "/opinions/"+c)); got == nil || len(got) != 0 {
			t.Errorf("complaint %s observer_replies %v, want []", c, got)
		}
	}
	if _, ok := n.get(t, "/opinions/"+reply)["observer_replies"]; ok {
		t.Errorf("a reply that is not a complaint has observer_replies")
	}
	seen := 0
	page := n.get(t, "/opinions?limit=500")
	for _, o := range page["opinions"].([]any) {
		om := o.(map[string]any)
		switch om["id"] {
		case c1:
			seen++
			if got := replies(om); !slices.Equal(got, []string{reply}) {
				t.Errorf("listing: complaint 1 observer_replies %v", got)
			}
		case c2, c3:
			seen++
		}
	}
	if seen != 3 {
		t.Errorf("listing shows %d of the 3 complaints: %.400v", seen, page)
	}
	// Evaluation (D39): complaint 3's receipt holds (verified at
	// admission) and its refusal reference names an index this node's
	// refusal log has: holds. A complaint naming index 999 of this node's
	// log (admitted: not judged at admission) fails there, and one naming
	// another node's log is undetermined; refusal results are provisional.
	evidence := func(id string) []string {
		var out []string
		for _, r := range n.get(t, "/opinions/"+id+"/evaluation")["results"].([]any) {
			rm := r.(map[string]any)
			if rm["kind"] == "evidence" {
				out = append(out, fmt.Sprintf("%v:%v:%v", rm["index"], rm["result"], rm["finality"]))
			}
		}
		return out
	}
	if got := evidence(c3); !slices.Equal(got, []string{"0:holds:provisional", "1:holds:provisional"}) {
		t.Errorf("complaint 3 evidence %v", got)
	}
	refs := map[string]any{"respondent": map[string]any{"type": "node", "id": receipt["node"]}, "issue": "refusal",
		"evidence": []any{map[string]any{"refusal": map[string]any{"node": receipt["node"], "index": 999}},
			map[string]any{"refusal": map[string]any{"node": ht.Member(30).Key().String(), "index": 0}}},
		"remedy_sought": "Publish the refusal."}
	c4 := acc(b.Opinion(ht.Member(7), onSession(refs), s.last))
	if got := evidence(c4); !slices.Equal(got, []string{"0:fails:provisional", "1:undetermined:provisional"}) {
		t.Errorf("complaint 4 evidence %v", got)
	}
	// The complaint is served as signed: its evidence is in its body.
	body, _ := json.Marshal(n.get(t, "/opinions/"+c3)["body"])
	if !strings.Contains(string(body), `"refusal_index"`) {
		t.Errorf("complaint 3 body %s", body)
	}
}
