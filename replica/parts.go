package replica

// This file feeds the opinion members of issue 18's second half to the
// views: the accepted estimates to the fact sheet (D53, D69) and the
// start of fiscal notice (D53); jurisdiction choices to /law's finality
// (D73).

import (
	"context"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// partsFacts adds what the accepted estimates give a review's fact sheet.
func partsFacts(h *house.House, rv *Review) {
	rv.Estimates = h.Estimates(rv.MR)
	rv.Env.Feasibility = h.Feasibility(rv.MR) // effective_before_feasible, feasibility (D70)
}

// fiscalNoticeStart is when notice starts for MR mr, given when it
// starts for an ordinary MR (opened: the checkpoint time of the checkpoint
// including the mr.open, zero when none does). For an MR with fiscal:
// true, notice starts only once an accepted estimate on it exists (D53):
// the later of opened and the checkpoint time of this replica's first
// checkpoint that includes an estimate on it; zero (not started) while no
// checkpoint includes one. Notice is advisory on an eventual node (it is
// recorded in each evaluation's timing, never refused); the refusal D53
// also states is house's causal estimate_missing.
func (r *Replica) fiscalNoticeStart(ctx context.Context, sp *space, mr dag.ID, opened time.Time) time.Time {
	body, ok := sp.h.MRBody(mr)
	if !ok || !body.Fiscal {
		return opened
	}
	var first time.Time
	for _, id := range sp.h.EstimateOpinions(mr) {
		if c, ok := sp.checkpointOf(r.position(ctx, id)); ok && (first.IsZero() || c.TS.Before(first)) {
			first = c.TS
		}
	}
	if first.IsZero() || opened.IsZero() {
		return time.Time{}
	}
	if first.After(opened) {
		return first
	}
	return opened
}

// choicesCheckpointed reports whether every accepted jurisdiction choice
// (D73) is in a checkpoint of this replica: /law?jurisdiction= is
// final_advisory only then, since a choice not yet checkpointed may still
// change what is in force.
func (r *Replica) choicesCheckpointed(ctx context.Context, sp *space) bool {
	for _, id := range sp.h.ChoiceOpinions() {
		if _, ok := sp.checkpointOf(r.position(ctx, id)); !ok {
			return false
		}
	}
	return true
}
