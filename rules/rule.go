package rules

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
)

// The rule kinds of 30k §7.
const (
	KindAlwaysAllow         = "always_allow"
	KindDesignatedApprovers = "designated_approvers"
	KindThresholdVote       = "threshold_vote"
	KindCapitalVote         = "capital_vote"
)

// Cmp is a threshold_vote comparison: "gt" or "gte".
type Cmp string

// Comparisons of threshold_vote.
const (
	CmpGT  Cmp = "gt"
	CmpGTE Cmp = "gte"
)

// Basis is a threshold_vote basis: what D counts.
type Basis string

// Bases of threshold_vote: D = N for electorate, D = A + R for votes_cast.
const (
	BasisElectorate Basis = "electorate"
	BasisVotesCast  Basis = "votes_cast"
)

// Closing is how a threshold_vote poll closes.
type Closing string

// Closing modes of threshold_vote.
const (
	// OnThreshold approves as soon as the rule passes and rejects as soon as
	// approval is impossible; it needs no clock.
	OnThreshold Closing = "on_threshold"
	// OnDeadline stays pending until the deadline and then approves, expires
	// (quorum unmet) or rejects.
	OnDeadline Closing = "on_deadline"
)

// Threshold is the parameters of a threshold_vote rule.
type Threshold struct {
	Num, Den             uint64 // 0 < Num <= Den
	Cmp                  Cmp
	Basis                Basis
	QuorumNum, QuorumDen uint64 // 0 <= QuorumNum <= QuorumDen, QuorumDen > 0
	Closing              Closing
	// Deadline is the on_deadline closing time (RFC 3339 UTC on the wire);
	// zero for on_threshold.
	Deadline time.Time
	// Reversion, when set, replaces Num/Den for an MR whose fact sheet has
	// any reverts (D41).
	Reversion *Ratio
}

// Approvers is the parameters of a designated_approvers rule.
type Approvers struct {
	Group    string // "group:<id>"
	Required uint64 // at least 1
}

// Rule is a compiled, checked rule reference. It is immutable and safe to
// share between polls and goroutines.
type Rule struct {
	ref       Ref
	kind      string
	threshold Threshold
	approvers Approvers
}

// Compile checks ref against its kind and returns the Rule to evaluate.
// Errors are *dag.ProtocolError values: rule_unknown for a kind (or
// version) witan does not know, rule_not_supported for a kind witan knows
// but an eventual node cannot evaluate (capital_vote), schema for
// parameters that do not fit the kind.
func Compile(ref Ref) (*Rule, error) {
	info, ok := Lookup(ref.Kind)
	if !ok {
		return nil, dag.Errorf(dag.CodeRuleUnknown, "rules: unknown rule kind %q", truncate(ref.Kind))
	}
	if ref.Version != info.Version {
		return nil, dag.Errorf(dag.CodeRuleUnknown, "rules: %s version %d is unknown (witan knows version %d)", ref.Kind, ref.Version, info.Version)
	}
	if !info.Supported {
		return nil, dag.Errorf(dag.CodeRuleNotSupported, "rules: %s needs a strong node; witan is an eventual node", ref.Kind)
	}
	if !ref.TextRef.Valid() {
		return nil, schemaf("rule reference: zero text_ref")
	}
	if ref.MinNotice != nil && (*ref.MinNotice < 0 || *ref.MinNotice > dag.MaxSafeInteger) {
		return nil, schemaf("rule reference: min_notice %d out of range", *ref.MinNotice)
	}
	params := ref.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	canon, err := dag.Canonicalize(params)
	if err != nil {
		return nil, schemaf("%s params: %v", ref.Kind, err)
	}
	f, err := object(canon, ref.Kind+" params")
	if err != nil {
		return nil, err
	}
	r := &Rule{ref: ref, kind: ref.Kind}
	r.ref.Params = append(json.RawMessage(nil), canon...)
	switch ref.Kind {
	case KindAlwaysAllow:
		err = f.only()
	case KindDesignatedApprovers:
		r.approvers, err = compileApprovers(f)
	case KindThresholdVote:
		r.threshold, err = compileThreshold(f)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

func compileApprovers(f fields) (Approvers, error) {
	var a Approvers
	if err := f.only("approvers", "required"); err != nil {
		return a, err
	}
	g, err := f.str("approvers", true)
	if err != nil {
		return a, err
	}
	if !strings.HasPrefix(g, "group:") || len(g) == len("group:") {
		return a, schemaf("%s: approvers %q is not group:<id>", f.what, truncate(g))
	}
	a.Group = g
	if a.Required, err = f.uint("required", true); err != nil {
		return a, err
	}
	if a.Required < 1 {
		return a, schemaf("%s: required must be at least 1", f.what)
	}
	return a, nil
}

func compileThreshold(f fields) (Threshold, error) {
	var t Threshold
	if err := f.only("num", "den", "cmp", "basis", "quorum_num", "quorum_den", "closing", "deadline", "reversion"); err != nil {
		return t, err
	}
	var err error
	if t.Num, err = f.uint("num", true); err != nil {
		return t, err
	}
	if t.Den, err = f.uint("den", true); err != nil {
		return t, err
	}
	if t.Num == 0 || t.Num > t.Den {
		return t, schemaf("%s: need 0 < num <= den, got %d/%d", f.what, t.Num, t.Den)
	}
	cmp, err := f.str("cmp", true)
	if err != nil {
		return t, err
	}
	switch t.Cmp = Cmp(cmp); t.Cmp {
	case CmpGT, CmpGTE:
	default:
		return t, schemaf("%s: cmp %q is not gt or gte", f.what, truncate(cmp))
	}
	basis, err := f.str("basis", true)
	if err != nil {
		return t, err
	}
	switch t.Basis = Basis(basis); t.Basis {
	case BasisElectorate, BasisVotesCast:
	default:
		return t, schemaf("%s: basis %q is not electorate or votes_cast", f.what, truncate(basis))
	}
	if t.QuorumNum, err = f.uint("quorum_num", true); err != nil {
		return t, err
	}
	if t.QuorumDen, err = f.uint("quorum_den", true); err != nil {
		return t, err
	}
	if t.QuorumDen == 0 || t.QuorumNum > t.QuorumDen {
		return t, schemaf("%s: need 0 <= quorum_num <= quorum_den and quorum_den > 0, got %d/%d", f.what, t.QuorumNum, t.QuorumDen)
	}
	closing, err := f.str("closing", true)
	if err != nil {
		return t, err
	}
	switch t.Closing = Closing(closing); t.Closing {
	case OnThreshold:
		if t.Basis != BasisElectorate {
			return t, schemaf("%s: on_threshold requires basis electorate", f.what)
		}
		if f.present("deadline") {
			return t, schemaf("%s: deadline is only for on_deadline closing", f.what)
		}
	case OnDeadline:
		if t.Deadline, err = f.time("deadline"); err != nil {
			return t, err
		}
	default:
		return t, schemaf("%s: closing %q is not on_threshold or on_deadline", f.what, truncate(closing))
	}
	if f.present("reversion") {
		rv, err := object(f.raw["reversion"], f.what+" reversion")
		if err != nil {
			return t, err
		}
		if err := rv.only("num", "den"); err != nil {
			return t, err
		}
		var q Ratio
		if q.Num, err = rv.uint("num", true); err != nil {
			return t, err
		}
		if q.Den, err = rv.uint("den", true); err != nil {
			return t, err
		}
		if q.Num == 0 || q.Num > q.Den {
			return t, schemaf("%s: need 0 < num <= den, got %d/%d", rv.what, q.Num, q.Den)
		}
		t.Reversion = &q
	}
	return t, nil
}

// Kind returns the rule's kind.
func (r *Rule) Kind() string { return r.kind }

// Ref returns the reference the rule was compiled from, with its params in
// canonical form.
func (r *Rule) Ref() Ref {
	ref := r.ref
	ref.Params = append(json.RawMessage(nil), r.ref.Params...)
	return ref
}

// Threshold returns the parameters of a threshold_vote rule; ok is false
// for other kinds.
func (r *Rule) Threshold() (t Threshold, ok bool) {
	t = r.threshold
	if t.Reversion != nil {
		rv := *t.Reversion
		t.Reversion = &rv
	}
	return t, r.kind == KindThresholdVote
}

// Approvers returns the parameters of a designated_approvers rule; ok is
// false for other kinds. The caller freezes Approvers.Group at MR open and
// passes its members as the electorate.
func (r *Rule) Approvers() (a Approvers, ok bool) {
	return r.approvers, r.kind == KindDesignatedApprovers
}

// MinNotice returns the rule's notice period in seconds; ok is false when
// the rule has none.
func (r *Rule) MinNotice() (seconds int64, ok bool) {
	if r.ref.MinNotice == nil {
		return 0, false
	}
	return *r.ref.MinNotice, true
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
