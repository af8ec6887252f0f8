package rules

import (
	"time"

	"github.com/witan-dev/witan/dag"
)

// Floors the spec puts on rules, for the replica to apply where they
// belong (session.create, governance MRs, mr.open). They are helpers; no
// evaluation depends on them.
const (
	// MinWindow is the least time, in seconds, between the open of an MR
	// (or of a later contest.open) and an on_deadline rule's deadline or a
	// contest's ranking deadline (D74). The spec measures it in checkpoint
	// time; witan's replica measures it in witnessed time (docs/deviations.md).
	MinWindow = 259200
	// RootNoticeFloor is the least min_notice, in seconds, of the root
	// branch's merge_rule (D42).
	RootNoticeFloor = 259200
)

// Entrenched reports whether r meets the entrenchment floor of D38 for a
// session's root_governance_rule: a threshold_vote with basis electorate
// and num/den >= 2/3. (The reversion threshold, used only for reverting
// MRs, is not part of the floor.)
func (r *Rule) Entrenched() bool {
	if r.kind != KindThresholdVote || r.threshold.Basis != BasisElectorate {
		return false
	}
	return cmpProducts(r.threshold.Num, 3, 2, r.threshold.Den) >= 0
}

// MeetsRootNotice reports whether r meets the notice floor of D42 for the
// root branch's merge_rule: min_notice of at least RootNoticeFloor seconds.
func (r *Rule) MeetsRootNotice() bool {
	n, ok := r.MinNotice()
	return ok && n >= RootNoticeFloor
}

// CheckWindow checks D74's minimum window: for an on_deadline rule, the
// deadline must be at least MinWindow seconds after openedAt, the time of
// the later of mr.open and contest.open. It returns a *dag.ProtocolError
// with code deadline_too_short, or nil (always nil for rules without a
// deadline). The caller chooses the clock: the spec's checkpoint time is
// per replica on an eventual node, so witan's replica passes the
// witnessed time at the open, which every replica computes alike, and
// refuses on the result.
func (r *Rule) CheckWindow(openedAt time.Time) error {
	if r.kind != KindThresholdVote || r.threshold.Closing != OnDeadline {
		return nil
	}
	if el := elapsedSeconds(openedAt, r.threshold.Deadline); el < MinWindow {
		return dag.Errorf(dag.CodeDeadlineTooShort, "rules: deadline %s is %ds after open at %s; D74 needs %ds",
			r.threshold.Deadline.Format(time.RFC3339Nano), el, openedAt.UTC().Format(time.RFC3339Nano), MinWindow)
	}
	return nil
}
