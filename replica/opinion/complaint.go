package opinion

// This file is complaints (30k §8 "Complaints", D39, D79): an opinion's
// complaint member and an observer's responds_to. What is judged here is
// what every replica judges alike from the body and the complaint's
// causal past: the complaint's shape, protocol complaints
// (complaint_invalid), addressees in the observers group
// (addressee_invalid) and every receipt's signature by the node it names
// (evidence_invalid). A refusal's inclusion in the named node's refusal
// log is not judged here: that log is node-local and never synced, so no
// replica can judge it alike at admission (docs/deviations.md).

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/witan-dev/witan/dag"
)

// Complaint is a decoded complaint member.
type Complaint struct {
	Respondent   Subject // type node|group|key|spec, id
	Issue        string
	AddressedTo  []dag.Key
	Evidence     []ComplaintEvidence
	RemedySought string
}

// ComplaintEvidence is one item of a complaint's evidence: exactly one of
// a signed receipt (its canonical JSON, signature verified at admission),
// a refusal-log reference, or an envelope (canonical JSON, not judged).
type ComplaintEvidence struct {
	Receipt  json.RawMessage `json:"receipt,omitempty"`
	Refusal  *RefusalRef     `json:"refusal,omitempty"`
	Envelope json.RawMessage `json:"envelope,omitempty"`
}

// RefusalRef names one entry of a node's refusal log (D40).
type RefusalRef struct {
	Node  dag.Key `json:"node"`
	Index uint64  `json:"index"`
}

// Complaint enumerations (§8).
var (
	RespondentTypes = []string{"node", "group", "key", "spec"}
	Issues          = []string{"refusal", "quarantine", "rate_limit", "opinion_policy", "equal_access", "entrenchment", "protocol", "other"}
)

// MaxRemedy is remedy_sought's limit in characters (§8: "<=1000 chars").
const MaxRemedy = 1000

type wireComplaint struct {
	Respondent *struct {
		Type *string `json:"type"`
		ID   *string `json:"id"`
	} `json:"respondent"`
	Issue        *string                      `json:"issue"`
	AddressedTo  []string                     `json:"addressed_to"`
	Evidence     []map[string]json.RawMessage `json:"evidence"`
	RemedySought *string                      `json:"remedy_sought"`
}

// decodeComplaint decodes the complaint member strictly (the body is
// already canonical JSON).
func decodeComplaint(raw json.RawMessage) (*Complaint, error) {
	var w wireComplaint
	if err := strict(raw, &w, "complaint"); err != nil {
		return nil, err
	}
	if w.Respondent == nil || w.Respondent.Type == nil || w.Respondent.ID == nil || w.Issue == nil || w.Evidence == nil || w.RemedySought == nil {
		return nil, schemaf("complaint: respondent {type, id}, issue, evidence and remedy_sought are required")
	}
	c := &Complaint{Respondent: Subject{Type: *w.Respondent.Type, ID: *w.Respondent.ID}, Issue: *w.Issue, RemedySought: *w.RemedySought}
	if !oneOf(c.Respondent.Type, RespondentTypes) {
		return nil, schemaf("complaint.respondent.type %q is not one of %v", dag.Trunc(c.Respondent.Type), RespondentTypes)
	}
	if c.Respondent.ID == "" || len(c.Respondent.ID) > MaxText {
		return nil, schemaf("complaint.respondent.id: 1 to %d bytes", MaxText)
	}
	if !oneOf(c.Issue, Issues) {
		return nil, schemaf("complaint.issue %q is not one of %v", dag.Trunc(c.Issue), Issues)
	}
	if utf8.RuneCountInString(c.RemedySought) > MaxRemedy {
		return nil, schemaf("complaint.remedy_sought is longer than %d characters", MaxRemedy)
	}
	if len(w.AddressedTo) > MaxList || len(w.Evidence) > MaxList {
		return nil, schemaf("complaint: more than %d addressees or evidence items", MaxList)
	}
	for _, s := range w.AddressedTo {
		k, err := dag.ParseKey(s)
		if err != nil {
			return nil, schemaf("complaint.addressed_to: %v", err)
		}
		c.AddressedTo = append(c.AddressedTo, k)
	}
	for i, e := range w.Evidence {
		if len(e) != 1 {
			return nil, schemaf("complaint.evidence[%d]: exactly one of receipt, refusal, envelope", i)
		}
		var x ComplaintEvidence
		for name, v := range e {
			switch name {
			case "receipt", "envelope":
				if len(v) == 0 || v[0] != '{' {
					return nil, schemaf("complaint.evidence[%d].%s: want an object", i, name)
				}
				if name == "receipt" {
					x.Receipt = v
				} else {
					x.Envelope = v
				}
			case "refusal":
				var r struct {
					Node  *string `json:"node"`
					Index *uint64 `json:"index"`
				}
				if err := strict(v, &r, "complaint.evidence.refusal"); err != nil || r.Node == nil || r.Index == nil {
					return nil, schemaf("complaint.evidence[%d].refusal: want {node, index}", i)
				}
				k, err := dag.ParseKey(*r.Node)
				if err != nil {
					return nil, schemaf("complaint.evidence[%d].refusal.node: %v", i, err)
				}
				x.Refusal = &RefusalRef{Node: k, Index: *r.Index}
			default:
				return nil, schemaf("complaint.evidence[%d]: unknown member %q", i, dag.Trunc(name))
			}
		}
		c.Evidence = append(c.Evidence, x)
	}
	return c, nil
}

// decodeRespondsTo decodes responds_to: a list of opinion ids (D79).
func decodeRespondsTo(raw json.RawMessage) ([]dag.ID, error) {
	var ss []string
	if err := strict(raw, &ss, "responds_to"); err != nil {
		return nil, err
	}
	return ids(ss, "responds_to")
}

// CheckComplaint judges a complaint against its causal past, in this
// order: a protocol complaint names the spec and the spec is named only
// by a protocol complaint (complaint_invalid); every addressee is in the
// session's observers group there (addressee_invalid, isObserver); every
// receipt in evidence verifies by the node key it names over
// "oth/0.10-receipt\n" + JCS(receipt without "sig") (evidence_invalid).
func CheckComplaint(c *Complaint, isObserver func(dag.Key) bool) error {
	if (c.Respondent.Type == "spec") != (c.Issue == "protocol") {
		return codef(dag.CodeComplaintInvalid, "respondent.type spec goes with issue protocol and only with it (respondent %s, issue %s)", c.Respondent.Type, c.Issue)
	}
	for _, k := range c.AddressedTo {
		if isObserver == nil || !isObserver(k) {
			return codef(dag.CodeAddresseeInvalid, "addressed_to %s is not in the session's observers group", k)
		}
	}
	for i, e := range c.Evidence {
		if e.Receipt != nil {
			if err := VerifyReceipt(e.Receipt); err != nil {
				return codef(dag.CodeEvidenceInvalid, "evidence[%d]: %v", i, err)
			}
		}
	}
	return nil
}

// VerifyReceipt checks a signed receipt (30k §5, D39) given as JSON: its
// "sig" (base64url, unpadded) by its "node" key over the receipt
// domain and the JCS of every other member.
func VerifyReceipt(raw []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return schemaf("receipt: %v", err)
	}
	var sig, node string
	if json.Unmarshal(m["sig"], &sig) != nil || json.Unmarshal(m["node"], &node) != nil {
		return schemaf("receipt: no sig or node")
	}
	k, err := dag.ParseKey(node)
	if err != nil {
		return schemaf("receipt.node: %v", err)
	}
	s, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return schemaf("receipt.sig: %v", err)
	}
	delete(m, "sig")
	b, err := json.Marshal(m)
	if err != nil {
		return schemaf("receipt: %v", err)
	}
	msg, err := dag.Canonicalize(b)
	if err != nil {
		return schemaf("receipt: %v", err)
	}
	if !dag.Verify(k, dag.DomainReceipt, msg, s) {
		return codef(dag.CodeEvidenceInvalid, "the receipt's signature does not verify by %s", k)
	}
	return nil
}
