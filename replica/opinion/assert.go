package opinion

// This file is the closed registry of assertions (D22) and their
// evaluation against the current record.

import (
	"encoding/json"
	"strings"

	"github.com/witan-dev/witan/dag"
	"golang.org/x/text/unicode/norm"
)

// The assertion kinds of D22, sorted. Others are assertion_unknown.
var AssertionKinds = []string{"authored", "ballot_choice", "mr_outcome", "tally", "text_contains"}

// Assertion is one claim about the record. Its wire form is flat: the
// kind and the kind's params as members of one object, e.g.
// {"kind":"ballot_choice","member":"ed25519:…","mr":"sha256:…","choice":"reject"}
// (docs/wire-format.md).
type Assertion struct {
	Kind    string
	Member  dag.Key // ballot_choice
	MR      dag.ID  // ballot_choice, mr_outcome, tally
	Choice  string  // ballot_choice: approve | reject | abstain
	Outcome string  // mr_outcome: approved | rejected | expired
	Approve uint64  // tally
	Reject  uint64
	Abstain uint64
	Object  dag.ID  // authored
	Author  dag.Key // authored
	AsOf    dag.ID  // text_contains
	NID     string
	Text    string
}

type wireBallotChoice struct {
	Kind   string `json:"kind"`
	Member string `json:"member"`
	MR     string `json:"mr"`
	Choice string `json:"choice"`
}

type wireOutcome struct {
	Kind    string `json:"kind"`
	MR      string `json:"mr"`
	Outcome string `json:"outcome"`
}

type wireTally struct {
	Kind    string  `json:"kind"`
	MR      string  `json:"mr"`
	Approve *uint64 `json:"approve"`
	Reject  *uint64 `json:"reject"`
	Abstain *uint64 `json:"abstain"`
}

type wireAuthored struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Author string `json:"author"`
}

type wireTextContains struct {
	Kind string `json:"kind"`
	AsOf string `json:"as_of"`
	NID  string `json:"nid"`
	Text string `json:"text"`
}

// DecodeAssertion decodes one assertion: assertion_unknown for a kind
// outside the registry, schema for anything else that is wrong.
func DecodeAssertion(b []byte) (*Assertion, error) {
	var k map[string]json.RawMessage
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, schemaf("assertion: %v", err)
	}
	var kind string
	if raw, ok := k["kind"]; !ok || json.Unmarshal(raw, &kind) != nil {
		return nil, schemaf("assertion: kind is required")
	}
	a := &Assertion{Kind: kind}
	var err error
	switch kind {
	case "ballot_choice":
		var w wireBallotChoice
		if err = strict(b, &w, "ballot_choice"); err != nil {
			return nil, err
		}
		if a.Member, err = dag.ParseKey(w.Member); err != nil {
			return nil, schemaf("ballot_choice member: %v", err)
		}
		if a.MR, err = dag.ParseID(w.MR); err != nil {
			return nil, schemaf("ballot_choice mr: %v", err)
		}
		if !oneOf(w.Choice, []string{"approve", "reject", "abstain"}) {
			return nil, schemaf("ballot_choice choice %q is not approve, reject or abstain", dag.Trunc(w.Choice))
		}
		a.Choice = w.Choice
	case "mr_outcome":
		var w wireOutcome
		if err = strict(b, &w, "mr_outcome"); err != nil {
			return nil, err
		}
		if a.MR, err = dag.ParseID(w.MR); err != nil {
			return nil, schemaf("mr_outcome mr: %v", err)
		}
		if !oneOf(w.Outcome, []string{"approved", "rejected", "expired"}) {
			return nil, schemaf("mr_outcome outcome %q is not approved, rejected or expired", dag.Trunc(w.Outcome))
		}
		a.Outcome = w.Outcome
	case "tally":
		var w wireTally
		if err = strict(b, &w, "tally"); err != nil {
			return nil, err
		}
		if a.MR, err = dag.ParseID(w.MR); err != nil {
			return nil, schemaf("tally mr: %v", err)
		}
		if w.Approve == nil || w.Reject == nil || w.Abstain == nil {
			return nil, schemaf("tally needs approve, reject and abstain")
		}
		a.Approve, a.Reject, a.Abstain = *w.Approve, *w.Reject, *w.Abstain
	case "authored":
		var w wireAuthored
		if err = strict(b, &w, "authored"); err != nil {
			return nil, err
		}
		if a.Object, err = dag.ParseID(w.Object); err != nil {
			return nil, schemaf("authored object: %v", err)
		}
		if a.Author, err = dag.ParseKey(w.Author); err != nil {
			return nil, schemaf("authored author: %v", err)
		}
	case "text_contains":
		var w wireTextContains
		if err = strict(b, &w, "text_contains"); err != nil {
			return nil, err
		}
		if a.AsOf, err = dag.ParseID(w.AsOf); err != nil {
			return nil, schemaf("text_contains as_of: %v", err)
		}
		if w.NID == "" || len(w.NID) > MaxText || w.Text == "" || len(w.Text) > MaxQuoteText {
			return nil, schemaf("text_contains needs nid and text")
		}
		a.NID, a.Text = w.NID, w.Text
	default:
		return nil, codef(dag.CodeAssertionUnknown, "assertion kind %q is not in the registry %v", dag.Trunc(kind), AssertionKinds)
	}
	return a, nil
}

// Assertion results (D22).
const (
	Holds        = "holds"
	Fails        = "fails"
	Undetermined = "undetermined"
)

// BallotStanding is a member's standing on an MR, as the record has it now.
type BallotStanding struct {
	MRKnown bool
	// Ballots are the member's ballots on the MR (tx ids): what the
	// answer depends on.
	Ballots []dag.ID
	Void    bool   // the member's ballots void each other (equivocation)
	Choice  string // the effective ballot's choice; "" with no ballot
	// Decided is true once the MR has an executed determination: the
	// effective ballot can no longer change.
	Decided       bool
	Determination dag.ID
}

// MRStanding is an MR's decision, as the record has it now.
type MRStanding struct {
	Known bool
	// Executed is true once a determination of the MR is executed; then
	// Determination names it and Outcome and the counts are its
	// re-evaluation over exactly its listed ballots.
	Executed                 bool
	Determination            dag.ID
	Outcome                  string
	Approve, Reject, Abstain uint64
}

// Facts is the current record as Evaluate reads it. Every method answers
// from the whole record (not a causal past): evaluations are recomputed
// as the record changes.
type Facts interface {
	Ballot(member dag.Key, mr dag.ID) BallotStanding
	MR(mr dag.ID) MRStanding
	// Author returns the signer of an accepted entry, or the author of a
	// change object with the entry that brought it (dep); ok is false
	// when the record holds neither.
	Author(object dag.ID) (author dag.Key, dep dag.ID, ok bool)
	// Node returns node nid of snapshot asOf; snapshot is false when the
	// record holds no such snapshot.
	Node(asOf dag.ID, nid string) (heading, text string, found, snapshot bool)
}

// Result is one evaluated quote or assertion of GET
// /opinions/{id}/evaluation. Index is the quote's index in quotes, or the
// finding's index in findings for an assertion.
type Result struct {
	Kind   string `json:"kind"` // quote | assertion
	Index  int    `json:"index"`
	Result string `json:"result"`
	// Deps are the entries the answer reads (besides the opinion); Open
	// is true while it reads an MR with no executed determination. The
	// caller turns both into a finality.
	Deps []dag.ID `json:"-"`
	Open bool     `json:"-"`
}

// Evaluate evaluates every quote and every finding's assertion of o
// against the record f. Quotes were verified at admission and hold; an
// assertion holds, fails or is undetermined as D22's table says.
func Evaluate(o *Opinion, f Facts) []Result {
	out := []Result{}
	for i := range o.Quotes {
		out = append(out, Result{Kind: "quote", Index: i, Result: Holds})
	}
	for i, fd := range o.Findings {
		if fd.Assertion != nil {
			r := EvaluateAssertion(fd.Assertion, f)
			r.Index = i
			out = append(out, r)
		}
	}
	return out
}

// EvaluateAssertion evaluates one assertion (Index is left 0).
func EvaluateAssertion(a *Assertion, f Facts) Result {
	r := Result{Kind: "assertion", Result: Undetermined}
	switch a.Kind {
	case "ballot_choice":
		b := f.Ballot(a.Member, a.MR)
		r.Deps, r.Open = b.Ballots, !b.Decided
		if b.Decided {
			r.Deps = append(r.Deps, b.Determination)
		}
		switch {
		case !b.MRKnown || len(b.Ballots) == 0:
			r.Result = Undetermined
		case b.Void || b.Choice != a.Choice:
			r.Result = Fails
		default:
			r.Result = Holds
		}
	case "mr_outcome", "tally":
		m := f.MR(a.MR)
		if !m.Known || !m.Executed {
			r.Open = true
			return r
		}
		r.Deps = []dag.ID{m.Determination}
		ok := m.Outcome == a.Outcome
		if a.Kind == "tally" {
			ok = m.Approve == a.Approve && m.Reject == a.Reject && m.Abstain == a.Abstain
		}
		r.Result = Fails
		if ok {
			r.Result = Holds
		}
	case "authored":
		k, dep, ok := f.Author(a.Object)
		if !ok {
			return r
		}
		r.Deps = []dag.ID{dep}
		r.Result = Fails
		if k == a.Author {
			r.Result = Holds
		}
	case "text_contains":
		_, text, found, snap := f.Node(a.AsOf, a.NID)
		if !snap {
			return r
		}
		r.Result = Fails
		if found && strings.Contains(norm.NFC.String(text), norm.NFC.String(a.Text)) {
			r.Result = Holds
		}
	}
	return r
}
