package view

// This file serves the session's Change DAG as the House recorded it —
// changes, their snapshots, and a merge MR's review (the patch derived at
// open, against its open-time target head) — so that readers such as the
// HTTP API never derive the session again. Everything returned is
// immutable and hashed before the replica's lock is released, so callers
// may read it concurrently while the replica ingests.

import (
	"context"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// ErrGovernanceMR is returned by Review for a governance MR: it changes a
// branch's rules or owner, not its text, so it has no diff, checks or fact
// sheet.
var ErrGovernanceMR = errors.New("replica: a governance MR has no text review")

// Change returns a change of a session's Change DAG as the derived state
// recorded it: the genesis change, every appended change, and every
// executed merge change with its real parents (the target head it was
// executed on, which may have moved since the MR opened, and the source
// head). The change is shared with the derived state: do not modify it.
// An unknown change wraps dag.ErrNotFound.
func (r *Reader) Change(ctx context.Context, session dag.ID, id dag.ID) (*statute.Change, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	c, ok := sp.House().Change(id)
	if !ok {
		return nil, fmt.Errorf("replica: change %s: %w", id, dag.ErrNotFound)
	}
	return c, nil
}

// Snapshot returns the snapshot of a change of the session's Change DAG
// (a branch head, a merge change, the genesis change). The tree is shared
// with the derived state: read it, never edit it (Clone first). An
// unknown change wraps dag.ErrNotFound.
func (r *Reader) Snapshot(ctx context.Context, session dag.ID, change dag.ID) (*statute.Tree, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	t, ok := sp.House().Tree(change)
	if !ok {
		return nil, fmt.Errorf("replica: change %s: %w", change, dag.ErrNotFound)
	}
	t.Hash() // hashed trees may be read concurrently
	return t, nil
}

// Review is a merge MR's text review as 30k §6 items 5 and 6 describe it:
// the patch derived when the MR opened, applied to the snapshot of its
// open-time target head, with what the checks and the fact sheet know of
// the session. A merge executed later on a moved target head applies the
// same ops to the moved head; the review stays the one the electorate
// voted on.
type Review struct {
	MR   dag.ID
	Body *house.MR
	// Base is the merge-base of the MR's heads in the Change DAG.
	Base dag.ID
	// Review holds the target snapshot, the ops and the merged snapshot.
	Review *statute.Review
	// Env is the session and MR context of the checks and the fact sheet.
	Env statute.Env
	// History is the root's heads up to the MR's target head, for the
	// fact sheet's reverts (D41); nil when the MR does not target the
	// root.
	History statute.Prior
	// Formalizations are the session's accepted formalizations (D28), for
	// the fact sheet's anchor_drift (opinions.go).
	Formalizations []statute.Formalization
	// Proposals are the origin inputs (D36, house.Proposals).
	Proposals []statute.Proposal
	// RuleFacts are the facts the MR's rule is evaluated with, as its
	// House decided them at open (reverts, D41; structure).
	RuleFacts rules.Facts
	// VersusSuperseded is the structural diff from the MR this one
	// supersedes (D48), else nil.
	VersusSuperseded *statute.Diff
	// VersusBase and RankedAboveWinner are what a contest adds to the fact
	// sheet (contests.go): a contest hook.
	VersusBase        *statute.Diff
	RankedAboveWinner []statute.RankedAbove
	// Estimates are the accepted estimates on the MR (D53, D69), for
	// estimates and estimate_totals (estimates.go).
	Estimates []statute.Estimate
}

// Diff returns the structural diff of the review (nil when the ops do not
// apply).
func (rv *Review) Diff() *statute.Diff { return rv.Review.Diff() }

// Checks runs the checks of 30k §6 item 5.
func (rv *Review) Checks() *statute.Checks { return statute.RunChecks(rv.Review, rv.Env) }

// Facts computes the fact sheet of 30k §6 item 6, labelled with finality.
func (rv *Review) Facts(finality replica.Finality) (*statute.FactSheet, error) {
	return statute.Facts(rv.Review, rv.Env, statute.FactInputs{History: rv.History, Finality: string(finality),
		VersusSuperseded: rv.VersusSuperseded, VersusBase: rv.VersusBase, RankedAboveWinner: rv.RankedAboveWinner,
		Formalizations: rv.Formalizations, Proposals: rv.Proposals, Estimates: rv.Estimates})
}

// Review returns merge MR mr's review. An unknown MR wraps
// dag.ErrNotFound; a governance MR is ErrGovernanceMR.
func (r *Reader) Review(ctx context.Context, session dag.ID, mr dag.ID) (*Review, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	body, ok := sp.House().MRBody(mr)
	if !ok {
		return nil, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
	}
	p, ok := sp.House().Patch(mr)
	if !ok {
		return nil, fmt.Errorf("%w: MR %s", ErrGovernanceMR, mr)
	}
	target, ok := sp.House().Tree(body.Target.Head)
	if !ok {
		// An admitted merge MR's target head is in the Change DAG.
		return nil, fmt.Errorf("replica: MR %s: target head %s has no snapshot", mr, body.Target.Head)
	}
	base, err := statute.MergeBase(houseChanges{sp.House()}, body.Source.Head, body.Target.Head)
	if err != nil {
		return nil, fmt.Errorf("replica: MR %s: merge-base: %w", mr, err)
	}
	target.Hash()
	p.Result.Hash()
	rv := &Review{MR: mr, Body: body, Base: base, Review: statute.ReviewOf(target, p)}
	rv.Env = statute.Env{MR: mr, Profile: sp.House().Profile(), Jurisdictions: sp.House().Jurisdictions(),
		// Published as the House decided at admission, from the MR's
		// causal past only (D56): /checks and admission agree.
		Fiscal: body.Fiscal, Effective: body.Effective, Published: sp.House().Published(mr)}
	if body.Target.Branch == house.RootBranch {
		rv.History = rootHistory(sp.House(), body.Target.Head)
	}
	rv.Formalizations = sp.House().Formalizations()
	rv.Proposals = sp.House().Proposals(mr)
	rv.RuleFacts, _ = sp.House().RuleFacts(mr)
	if old := body.Supersedes; old.Valid() {
		if op, ok := sp.House().Patch(old); ok {
			rv.VersusSuperseded = statute.Compare(op.Result, p.Result)
		}
	}
	contestFacts(sp.House(), rv) // contest hook
	partsFacts(sp.House(), rv)   // estimates, ... (estimates.go)
	return rv, nil
}

// rootHistory records the root's heads in the order they became heads,
// from the genesis change up to head (the current head for a review of an
// MR opened on it). It is nil when head is not one of the root's heads.
func rootHistory(h *house.House, head dag.ID) statute.Prior {
	hist := statute.NewRootHistory()
	cur := h.Genesis()
	t, ok := h.Tree(cur)
	if !ok {
		return nil
	}
	hist.Add(cur, t)
	for _, m := range h.RootMerges() {
		if cur == head {
			break
		}
		cur = m.Change
		if t, ok = h.Tree(cur); !ok {
			return nil
		}
		hist.Add(cur, t)
	}
	if cur != head {
		return nil
	}
	return hist
}

// houseChanges is the Change DAG of a House as a dag.ParentSource. Use it
// only under the replica's lock.
type houseChanges struct{ h *house.House }

func (c houseChanges) Parents(_ context.Context, id dag.ID) ([]dag.ID, error) {
	ch, ok := c.h.Change(id)
	if !ok {
		return nil, fmt.Errorf("replica: change %s: %w", id, dag.ErrNotFound)
	}
	return ch.Parents, nil
}
