package rules

import (
	"time"

	"github.com/witan-dev/witan/dag"
)

// Outcome is the outcome of a rule over a set of ballots (30k §4,
// Determination).
type Outcome string

// Outcomes.
const (
	Pending  Outcome = "pending"
	Approved Outcome = "approved"
	Rejected Outcome = "rejected"
	Expired  Outcome = "expired"
)

// Reason says why an outcome is what it is. A Result lists every reason
// that applies, in a fixed order.
type Reason string

// Reasons.
const (
	ReasonAllowed              Reason = "always_allowed"        // always_allow approves
	ReasonApprovalsReached     Reason = "approvals_reached"     // designated_approvers: A >= required
	ReasonApprovalsUnreachable Reason = "approvals_unreachable" // designated_approvers: n - R - V < required
	ReasonThresholdMet         Reason = "threshold_met"         // threshold_vote passes
	ReasonThresholdNotMet      Reason = "threshold_not_met"     // on_deadline: quorum met, threshold not
	ReasonThresholdUnreachable Reason = "threshold_unreachable" // on_threshold: (N-R-V)*den cmp num*N fails
	ReasonQuorumUnreachable    Reason = "quorum_unreachable"    // on_threshold: (N-V)*quorum_den < quorum_num*N
	ReasonQuorumUnmet          Reason = "quorum_unmet"          // on_deadline: expired
	ReasonEmptyElectorate      Reason = "empty_electorate"      // N = 0: no approval is ever possible
	ReasonReversion            Reason = "reversion_threshold"   // the reversion threshold replaced num/den (D41)
	ReasonStructureFailed      Reason = "structure_failed"      // approval withheld: structure blocks
	ReasonDeadlineNotReached   Reason = "deadline_not_reached"  // on_deadline before the deadline
	ReasonNoticeNotElapsed     Reason = "notice_not_elapsed"    // approval withheld until notice elapses
	ReasonEmergencyDesignated  Reason = "emergency_designated"  // D49: yes*3 >= 2*N on an emergency MR
)

// Facts are what a rule's outcome depends on besides its ballots. The
// caller derives them from the MR and its fact sheet. The zero value is an
// ordinary MR whose structure check passes.
type Facts struct {
	// Reverts is true when the MR's fact sheet lists any reverts (D41).
	Reverts bool
	// StructureFailed is true when the MR's structure check fails; an
	// approval is then withheld (the outcome stays pending) whatever the
	// rule says, since only structure blocks (§6).
	StructureFailed bool
	// Emergency is true when the MR requests emergency handling (D49).
	Emergency bool
	// ShortNotice is true for an MR that needs only min(min_notice, 86400)
	// seconds of notice: an amendment touching only nodes the superseded MR
	// touched (D48), or a variant (D68).
	ShortNotice bool
}

// Context is the input of an evaluation besides the ballots.
type Context struct {
	Facts Facts
	// At is the evaluation time: the time of the caller's checkpoint (an
	// eventual node's checkpoint time, OPEN-POINTS #7). Zero means unknown,
	// in which case no deadline is reached and no notice has elapsed.
	At time.Time
	// NoticeStart is when the notice period began: the checkpoint time of
	// the checkpoint that included mr.open, or for a fiscal MR the later
	// time at which its first estimate was accepted (D53). Zero means not
	// yet started.
	NoticeStart time.Time
}

// Tally is the count of one poll, with every share of D50 side by side.
// It is exact: shares are rationals, never floats.
type Tally struct {
	Electorate   uint64 `json:"electorate"`    // N
	Approve      uint64 `json:"approve"`       // A, effective approvals
	Reject       uint64 `json:"reject"`        // R
	Abstain      uint64 `json:"abstain"`       // B
	Void         uint64 `json:"void"`          // V, members voided by equivocation
	Cast         uint64 `json:"cast"`          // A + R + B
	EmergencyYes uint64 `json:"emergency_yes"` // effective ballots answering emergency "yes"
	Ballots      uint64 `json:"ballots"`       // distinct valid ballots folded, void ones included

	ApproveOfCast       Ratio      `json:"approve_of_cast"`       // A/(A+R)
	ApproveOfElectorate Ratio      `json:"approve_of_electorate"` // A/N
	RuleShare           *RuleShare `json:"rule_share"`            // nil for always_allow
}

// RuleShare names the share the rule actually tests and the threshold it
// must reach (D50).
type RuleShare struct {
	// Name is approve_of_electorate or approve_of_cast for threshold_vote,
	// approvals_of_required for designated_approvers.
	Name      string `json:"name"`
	Basis     string `json:"basis"`
	Share     Ratio  `json:"share"`
	Cmp       Cmp    `json:"cmp"`
	Threshold Ratio  `json:"threshold"`
}

// Timing is what the clock had to say, recorded with a determination: an
// eventual node treats deadlines and notice as advisory (§7).
type Timing struct {
	Deadline        *time.Time `json:"deadline"`         // on_deadline only
	DeadlineReached bool       `json:"deadline_reached"` // At >= Deadline
	NoticeRequired  *int64     `json:"notice_required"`  // seconds; nil when the rule has no notice
	NoticeElapsed   *int64     `json:"notice_elapsed"`   // whole seconds from NoticeStart to At; nil if either is unknown
	NoticeMet       bool       `json:"notice_met"`       // no notice required, or elapsed >= required
}

// Result is the evaluation of a poll.
type Result struct {
	Kind string `json:"kind"`
	// Outcome is the outcome at Context.At: deadlines and notice honoured,
	// as a strong node would apply them. It is what a live view shows.
	Outcome Outcome `json:"outcome"`
	// IfClosed is the outcome of closing the poll now over exactly these
	// ballots, with deadline and notice taken as met: approved, rejected or
	// expired for on_deadline; equal to Outcome's ballot part otherwise. An
	// eventual node checks a determination's outcome against IfClosed and
	// records Timing beside it.
	IfClosed            Outcome   `json:"if_closed"`
	Tally               Tally     `json:"tally"`
	Voided              []dag.Key `json:"voided"`
	Invalid             []Invalid `json:"invalid"`
	Reasons             []Reason  `json:"reasons"`
	EmergencyDesignated bool      `json:"emergency_designated"`
	Timing              Timing    `json:"timing"`
}

// Tally returns the poll's tally in O(1).
func (p *Poll) Tally(f Facts) Tally {
	t := Tally{
		Electorate: p.n, Approve: p.a, Reject: p.r, Abstain: p.b, Void: p.v,
		Cast: p.a + p.r + p.b, EmergencyYes: p.emergencyYes, Ballots: p.ballots,
		ApproveOfCast:       Ratio{p.a, p.a + p.r},
		ApproveOfElectorate: Ratio{p.a, p.n},
	}
	switch p.rule.kind {
	case KindThresholdVote:
		th := p.rule.threshold
		num, den := th.ratio(f)
		rs := &RuleShare{Basis: string(th.Basis), Cmp: th.Cmp, Threshold: Ratio{num, den}}
		if th.Basis == BasisElectorate {
			rs.Name, rs.Share = "approve_of_electorate", t.ApproveOfElectorate
		} else {
			rs.Name, rs.Share = "approve_of_cast", t.ApproveOfCast
		}
		t.RuleShare = rs
	case KindDesignatedApprovers:
		t.RuleShare = &RuleShare{
			Name: "approvals_of_required", Basis: "approvers",
			Share: Ratio{p.a, p.rule.approvers.Required}, Cmp: CmpGTE, Threshold: Ratio{1, 1},
		}
	}
	return t
}

// ratio returns the threshold in force: reversion for an MR that reverts.
func (t Threshold) ratio(f Facts) (num, den uint64) {
	if f.Reverts && t.Reversion != nil {
		return t.Reversion.Num, t.Reversion.Den
	}
	return t.Num, t.Den
}

// decide applies the rule to the counts, ignoring the clock.
func (p *Poll) decide(f Facts) (Outcome, []Reason) {
	N, A, R, B, V := p.n, p.a, p.r, p.b, p.v
	switch p.rule.kind {
	case KindAlwaysAllow:
		return Approved, []Reason{ReasonAllowed}
	case KindDesignatedApprovers:
		req := p.rule.approvers.Required
		if A >= req {
			return Approved, []Reason{ReasonApprovalsReached}
		}
		if N-R-V < req {
			return Rejected, []Reason{ReasonApprovalsUnreachable}
		}
		return Pending, nil
	}
	th := p.rule.threshold
	num, den := th.ratio(f)
	var reasons []Reason
	if f.Reverts && th.Reversion != nil {
		reasons = append(reasons, ReasonReversion)
	}
	quorum := cmpProducts(A+R+B, th.QuorumDen, th.QuorumNum, N) >= 0
	D := N
	if th.Basis == BasisVotesCast {
		D = A + R
	}
	if quorum && D > 0 && th.Cmp.holds(A, den, num, D) {
		return Approved, append(reasons, ReasonThresholdMet)
	}
	if th.Closing == OnDeadline {
		if !quorum {
			return Expired, append(reasons, ReasonQuorumUnmet)
		}
		return Rejected, append(reasons, ReasonThresholdNotMet)
	}
	// on_threshold: reject as soon as approval is impossible.
	n := len(reasons)
	if N == 0 {
		reasons = append(reasons, ReasonEmptyElectorate)
	}
	if !th.Cmp.holds(N-R-V, den, num, N) {
		reasons = append(reasons, ReasonThresholdUnreachable)
	}
	if cmpProducts(N-V, th.QuorumDen, th.QuorumNum, N) < 0 {
		reasons = append(reasons, ReasonQuorumUnreachable)
	}
	if len(reasons) > n {
		return Rejected, reasons
	}
	return Pending, reasons
}

// Result evaluates the poll in ctx. It costs O(1) plus the size of the
// voided and invalid lists.
func (p *Poll) Result(ctx Context) Result {
	res := Result{
		Kind:    p.rule.kind,
		Tally:   p.Tally(ctx.Facts),
		Voided:  p.Voided(),
		Invalid: p.Invalid(),
	}
	closed, reasons := p.decide(ctx.Facts)
	if closed == Approved && ctx.Facts.StructureFailed {
		closed = Pending
		reasons = append(reasons, ReasonStructureFailed)
	}
	res.IfClosed = closed
	res.Outcome = closed

	res.EmergencyDesignated = ctx.Facts.Emergency && cmpProducts(p.emergencyYes, 3, 2, p.n) >= 0
	if res.EmergencyDesignated {
		reasons = append(reasons, ReasonEmergencyDesignated)
	}

	if p.rule.kind == KindThresholdVote && p.rule.threshold.Closing == OnDeadline {
		d := p.rule.threshold.Deadline
		res.Timing.Deadline = &d
		res.Timing.DeadlineReached = !ctx.At.IsZero() && !ctx.At.Before(d)
		if !res.Timing.DeadlineReached {
			res.Outcome = Pending
			reasons = append(reasons, ReasonDeadlineNotReached)
		}
	}

	res.Timing.NoticeMet = true
	if req, ok := p.rule.MinNotice(); ok {
		if ctx.Facts.ShortNotice || res.EmergencyDesignated {
			req = min(req, 86400)
		}
		res.Timing.NoticeRequired = &req
		res.Timing.NoticeMet = false
		if !ctx.At.IsZero() && !ctx.NoticeStart.IsZero() {
			el := elapsedSeconds(ctx.NoticeStart, ctx.At)
			res.Timing.NoticeElapsed = &el
			res.Timing.NoticeMet = el >= req
		}
		if res.Outcome == Approved && !res.Timing.NoticeMet {
			res.Outcome = Pending
			reasons = append(reasons, ReasonNoticeNotElapsed)
		}
	}
	if reasons == nil {
		reasons = []Reason{}
	}
	res.Reasons = reasons
	return res
}

// elapsedSeconds returns the whole seconds from a to b, rounded down; it is
// negative when b is before a.
func elapsedSeconds(a, b time.Time) int64 {
	s := b.Unix() - a.Unix()
	if b.Nanosecond() < a.Nanosecond() {
		s--
	}
	return s
}

// Evaluate is the pure function of 30k §7: it compiles ref, freezes
// electorate, folds ballots (in any order; repeats are ignored) and
// evaluates them in ctx. It is Compile, NewElectorate, NewPoll, Add for
// each ballot and Poll.Result in one call; replicas that receive ballots
// one at a time keep the Poll instead. Refused ballots are reported in
// Result.Invalid, not as an error; the error is Compile's or
// NewElectorate's.
func Evaluate(ref Ref, electorate []dag.Key, mr dag.ID, ballots []Ballot, ctx Context) (Result, error) {
	rule, err := Compile(ref)
	if err != nil {
		return Result{}, err
	}
	el, err := NewElectorate(electorate)
	if err != nil {
		return Result{}, err
	}
	p := NewPoll(rule, el, mr)
	for _, b := range ballots {
		_ = p.Add(b) // refusals are recorded in the poll
	}
	return p.Result(ctx), nil
}
