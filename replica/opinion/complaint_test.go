package opinion_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/opinion"
)

// TestComplaintDecode: the complaint member's shape (§8 "Complaints"),
// each refusal worked out from the spec's JSON: respondent {type, id},
// issue, evidence items of exactly one kind, remedy_sought ≤ 1000
// characters; responds_to a list of ids.
func TestComplaintDecode(t *testing.T) {
	key := "ed25519:" + strings.Repeat("A", 43)
	good := func() map[string]any {
		return map[string]any{"respondent": map[string]any{"type": "node", "id": key}, "issue": "refusal",
			"evidence": []any{map[string]any{"refusal": map[string]any{"node": key, "index": 3}}}, "remedy_sought": "r"}
	}
	body := func(c any, extra ...any) []byte {
		m := map[string]any{"subject": map[string]any{"type": "spec", "id": "30k"}, "author_kind": "member", "on_behalf_of": nil,
			"stance": "neutral", "summary": "s", "body": "b", "proposes": []any{}, "replies_to": nil, "evidence": []any{}, "complaint": c}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		b, err := dag.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	o, err := opinion.Decode(body(good()))
	if err != nil || o.Complaint == nil || o.Complaint.Issue != "refusal" || len(o.Complaint.Evidence) != 1 ||
		o.Complaint.Evidence[0].Refusal == nil || o.Complaint.Evidence[0].Refusal.Index != 3 {
		t.Fatalf("good complaint: %v %+v", err, o)
	}
	bad := map[string]func(m map[string]any){
		"respondent type": func(m map[string]any) { m["respondent"] = map[string]any{"type": "court", "id": "x"} },
		"issue":           func(m map[string]any) { m["issue"] = "grievance" },
		"no remedy":       func(m map[string]any) { delete(m, "remedy_sought") },
		"long remedy":     func(m map[string]any) { m["remedy_sought"] = strings.Repeat("é", 1001) },
		"two kinds": func(m map[string]any) {
			m["evidence"] = []any{map[string]any{"refusal": nil, "envelope": map[string]any{}}}
		},
		"unknown kind":     func(m map[string]any) { m["evidence"] = []any{map[string]any{"ticket": 1}} },
		"receipt not obj":  func(m map[string]any) { m["evidence"] = []any{map[string]any{"receipt": "sig"}} },
		"bad addressee":    func(m map[string]any) { m["addressed_to"] = []any{"someone"} },
		"unknown member":   func(m map[string]any) { m["severity"] = "high" },
		"refusal no index": func(m map[string]any) { m["evidence"] = []any{map[string]any{"refusal": map[string]any{"node": key}}} },
	}
	for name, f := range bad {
		m := good()
		f(m)
		if _, err := opinion.Decode(body(m)); !errors.Is(err, opinion.ErrSchema) {
			t.Errorf("%s: %v, want schema", name, err)
		}
	}
	if _, err := opinion.Decode(body(nil, "responds_to", []any{"not an id"})); !errors.Is(err, opinion.ErrSchema) {
		t.Errorf("responds_to: %v, want schema", err)
	}
	if o, err := opinion.Decode(body(nil, "responds_to", []any{dag.Sum([]byte("c")).String()})); err != nil || len(o.RespondsTo) != 1 {
		t.Errorf("responds_to: %v", err)
	}
	// Protocol complaints and addressees (D79).
	proto := &opinion.Complaint{Respondent: opinion.Subject{Type: "spec", ID: "30k"}, Issue: "protocol"}
	if err := opinion.CheckComplaint(proto, nil); err != nil {
		t.Errorf("protocol complaint: %v", err)
	}
	proto.Issue = "other"
	if err := opinion.CheckComplaint(proto, nil); dag.CodeOf(err) != dag.CodeComplaintInvalid {
		t.Errorf("spec with other: %v", err)
	}
	// A receipt signed here over "oth/0.10-receipt\n" + JCS(without sig)
	// verifies; the same with one member changed does not.
	signer, err := dag.SignerFromSeed([]byte(strings.Repeat("r", 32)))
	if err != nil {
		t.Fatal(err)
	}
	plain := map[string]any{"tx": "sha256:x", "status": "rejected", "refusal_index": 0, "node": signer.Key().String()}
	msg, _ := dag.Marshal(plain)
	plain["sig"] = base64.RawURLEncoding.EncodeToString(signer.Sign(dag.DomainReceipt, msg))
	rc, _ := json.Marshal(plain)
	if err := opinion.VerifyReceipt(rc); err != nil {
		t.Errorf("signed receipt: %v", err)
	}
	plain["status"] = "accepted"
	rc, _ = json.Marshal(plain)
	if err := opinion.VerifyReceipt(rc); dag.CodeOf(err) != dag.CodeEvidenceInvalid {
		t.Errorf("changed receipt: %v, want evidence_invalid", err)
	}
}
