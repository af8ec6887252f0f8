package opinion

// This file judges an opinion at its causal point: who may publish it
// (author kinds, D15, D37, D78, D61), what a non-member must disclose
// (D32, D60), and whether its content holds up against the record it
// cites (verified quotes D21, findings D20, corrections D25,
// formalizations D28).

import (
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
	"golang.org/x/text/unicode/norm"
)

// DefaultKeyAging is witan's key_aging period in seconds (D61's default).
// It is part of admission, so it is fixed for every witan replica rather
// than chosen per node (docs/deviations.md).
const DefaultKeyAging = 86400

// Standing is what the opinion's causal past says about its signer.
type Standing struct {
	// Member: the signer is in the session's roster.
	Member bool
	// Observer: the signer is in the session's observers group (D78).
	Observer bool
	// PrincipalMember: the opinion's disclosure.principal is in the
	// roster (read for a delegate).
	PrincipalMember bool
	// GroupExists: the group on_behalf_of names exists (not conflicted);
	// GroupAdmin: the signer is one of its admins (read for a group).
	GroupExists, GroupAdmin bool
	// Registered: a key.register of the signer is in the causal past.
	// KeyAge is then the witnessed time elapsed since it, in seconds
	// (open point 12: docs/deviations.md).
	Registered bool
	KeyAge     int64
	// KeyAging is the required age; 0 means DefaultKeyAging.
	KeyAging int64
	// IsObserver reports whether a key is in the session's observers
	// group in the causal past (a complaint's addressees, D79); nil
	// means nobody is.
	IsObserver func(dag.Key) bool
}

// observerForbidden are the members that make an observer's opinion more
// than a plain opinion on the spec (D78).
var observerForbidden = []string{"estimate", "feasibility", "forecast", "resolution", "ranking", "translation",
	"exchange", "attest", "jurisdiction_choice"}

// NonMember reports whether the author kind speaks for someone other than
// a roster member, and so owes the full disclosure.
func NonMember(kind string) bool { return kind != "member" }

// CheckAuthor judges the signer and the disclosure, and a complaint
// (CheckComplaint). Codes: observer_not_allowed, not_authorized,
// group_not_authorized, disclosure_missing, key_too_new, schema,
// complaint_invalid, addressee_invalid, evidence_invalid.
func CheckAuthor(o *Opinion, s Standing) error {
	if s.Observer {
		if o.Subject.Type != "spec" && o.Subject.Type != "rfc" {
			return codef(dag.CodeObserverNotAllowed, "an observer may publish opinions only on spec or rfc, not on a %s", o.Subject.Type)
		}
		if len(o.Proposes) > 0 {
			return codef(dag.CodeObserverNotAllowed, "an observer's opinion may not propose changes")
		}
		for _, m := range o.Restricted {
			if oneOf(m, observerForbidden) {
				return codef(dag.CodeObserverNotAllowed, "an observer's opinion may not carry %s", m)
			}
		}
		if o.AuthorKind == "group" || o.AuthorKind == "member" {
			return codef(dag.CodeObserverNotAllowed, "an observer may not sign a %s opinion", o.AuthorKind)
		}
	}
	for _, m := range o.Restricted {
		if !Served(m) {
			return schemaf("%s is not served by this node yet (L2 part not built)", m)
		}
	}
	if o.Parts.err != nil {
		return o.Parts.err // a malformed estimate, ... (members.go)
	}
	switch o.AuthorKind {
	case "member":
		if !s.Member {
			return codef(dag.CodeNotAuthorized, "author_kind member: the signer is not a roster member")
		}
	case "delegate":
		if o.Disclosure == nil || !o.Disclosure.Principal.Valid() {
			return codef(dag.CodeDisclosureMissing, "a delegate must name disclosure.principal")
		}
		if !s.PrincipalMember {
			return codef(dag.CodeNotAuthorized, "delegate: principal %s is not a roster member", o.Disclosure.Principal)
		}
	case "implementation":
		if o.Subject.Type != "rfc" && o.Subject.Type != "spec" {
			return schemaf("author_kind implementation speaks about the protocol: subject.type must be rfc or spec, not %s", o.Subject.Type)
		}
	case "group":
		if !s.GroupExists || !s.GroupAdmin {
			return codef(dag.CodeGroupNotAuthorized, "the signer is not an admin of group %q in the opinion's causal past", o.OnBehalfOf)
		}
	}
	if o.Mirror != nil && o.AuthorKind != "member" {
		return codef(dag.CodeNotAuthorized, "only a member publishes a statement mirror (D52)")
	}
	if NonMember(o.AuthorKind) {
		if err := checkDisclosure(o); err != nil {
			return err
		}
	}
	if d := o.Disclosure; d != nil && d.AIAssistance != "" && d.AIAssistance != "none" && d.Tool == "" {
		return codef(dag.CodeDisclosureMissing, "ai_assistance %s: disclosure.tool must name the model and tool", d.AIAssistance)
	}
	if d := o.Disclosure; d != nil && d.AIAssistance == "generated" && len(o.Findings) > 0 {
		if o.Method == nil || len(o.Method.Inputs) == 0 {
			return codef(dag.CodeDisclosureMissing, "generated findings: method.inputs must list every protocol object given to the model")
		}
	}
	if !s.Member {
		aging := s.KeyAging
		if aging == 0 {
			aging = DefaultKeyAging
		}
		if !s.Registered {
			return codef(dag.CodeKeyTooNew, "a non-member key publishes only after its key.register (D61), and none is in the causal past")
		}
		if s.KeyAge < aging {
			return codef(dag.CodeKeyTooNew, "the key was registered %d witnessed seconds before, less than key_aging %d", s.KeyAge, aging)
		}
	}
	if o.Complaint != nil {
		if err := CheckComplaint(o.Complaint, s.IsObserver); err != nil {
			return err
		}
	}
	return nil
}

// checkDisclosure: the disclosure every non-member kind owes (§8, D32,
// D60), identical for every kind.
func checkDisclosure(o *Opinion) error {
	d := o.Disclosure
	var missing []string
	if d == nil {
		missing = []string{"disclosure"}
	} else {
		for _, m := range []struct {
			name string
			ok   bool
		}{{"funding", d.HasFunding}, {"affiliations", d.HasAffiliations}, {"ai_assistance", d.AIAssistance != ""},
			{"stakes", d.HasStakes}, {"foreign_principal", d.HasForeign}} {
			if !m.ok {
				missing = append(missing, m.name)
			}
		}
	}
	if len(missing) > 0 {
		return codef(dag.CodeDisclosureMissing, "a %s opinion must disclose %s", o.AuthorKind, strings.Join(missing, ", "))
	}
	return nil
}

// Record answers from the opinion's causal past only.
type Record interface {
	// Node returns node nid of snapshot asOf; snapshot is false when no
	// snapshot asOf is in the causal past.
	Node(asOf dag.ID, nid string) (heading, text string, found, snapshot bool)
	// Opinion returns the signer and body of an accepted opinion in the
	// causal past.
	Opinion(id dag.ID) (author dag.Key, body string, ok bool)
	// HasObject reports whether the node holds object id (a formalization
	// source).
	HasObject(id dag.ID) bool
}

// Check judges the content of o, signed by author, against the record of
// its causal past. Codes: quote_mismatch, correction_invalid,
// anchor_invalid, unknown_parent (replies_to not in the causal past).
func Check(o *Opinion, author dag.Key, r Record) error {
	for i, q := range o.Quotes {
		want := norm.NFC.String(q.Text)
		if q.Object.Valid() {
			_, body, ok := r.Opinion(q.Object)
			if !ok {
				return codef(dag.CodeQuoteMismatch, "quotes[%d]: opinion %s is not in the causal past", i, q.Object)
			}
			if !strings.Contains(norm.NFC.String(body), want) {
				return codef(dag.CodeQuoteMismatch, "quotes[%d]: the text does not occur in the body of opinion %s", i, q.Object)
			}
			continue
		}
		heading, text, found, snap := r.Node(q.AsOf, q.NID)
		switch {
		case !snap:
			return codef(dag.CodeQuoteMismatch, "quotes[%d]: snapshot %s is not in the causal past", i, q.AsOf)
		case !found:
			return codef(dag.CodeQuoteMismatch, "quotes[%d]: snapshot %s has no node %q", i, q.AsOf, dag.Trunc(q.NID))
		case !strings.Contains(norm.NFC.String(heading), want) && !strings.Contains(norm.NFC.String(text), want):
			return codef(dag.CodeQuoteMismatch, "quotes[%d]: the text does not occur exactly in the heading or text of %q at %s", i, dag.Trunc(q.NID), q.AsOf)
		}
	}
	if o.Corrects.Valid() {
		a, _, ok := r.Opinion(o.Corrects)
		if !ok {
			return codef(dag.CodeCorrectionInvalid, "corrects: opinion %s is not in the causal past", o.Corrects)
		}
		if a != author {
			return codef(dag.CodeCorrectionInvalid, "corrects: opinion %s is by %s, not by the signer", o.Corrects, a)
		}
	}
	if o.RepliesTo.Valid() {
		if _, _, ok := r.Opinion(o.RepliesTo); !ok {
			return codef(dag.CodeUnknownParent, "replies_to: opinion %s is not in the causal past", o.RepliesTo)
		}
	}
	if f := o.Formalization; f != nil {
		for _, a := range f.Anchors {
			if a.Quote < 0 || a.Quote >= len(o.Quotes) || o.Quotes[a.Quote].NID == "" {
				return codef(dag.CodeAnchorInvalid, "anchor %q: quote %d is not a verified quote of statute text", dag.Trunc(a.Rule), a.Quote)
			}
		}
		if !r.HasObject(f.Source) {
			return codef(dag.CodeAnchorInvalid, "formalization source %s does not resolve", f.Source)
		}
	}
	return nil
}

// AnchoredNIDs returns the nids a formalization's anchors point at,
// sorted, each once (for anchor_drift).
func AnchoredNIDs(o *Opinion) []string {
	if o.Formalization == nil {
		return nil
	}
	var out []string
	for _, a := range o.Formalization.Anchors {
		if a.Quote >= 0 && a.Quote < len(o.Quotes) && o.Quotes[a.Quote].NID != "" {
			out = append(out, o.Quotes[a.Quote].NID)
		}
	}
	return sortedUnique(out)
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
