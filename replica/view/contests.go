package view

import (
	"context"
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Contest returns one contest as derived (30k §5 GET /contests/{id}): its
// options, every round with its locked pairs and winner, and
// ranked_above_winner after a fallback, with its finality: final_advisory
// once the contest is decided by an executed determination that a
// checkpoint of this replica includes (as for an MR), else provisional.
// An unknown contest wraps dag.ErrNotFound.
func (r *Reader) Contest(ctx context.Context, session dag.ID, id dag.ID) (house.ContestView, replica.Finality, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return house.ContestView{}, replica.Provisional, err
	}
	defer sp.Close()
	v, ok := sp.House().Contest(id)
	if !ok {
		return house.ContestView{}, replica.Provisional, fmt.Errorf("replica: contest %s: %w", id, dag.ErrNotFound)
	}
	fin := replica.Provisional
	// The clock, advisory: notice runs from the checkpoint time of the
	// latest option's open (§7), the evaluation is at the checkpoint time
	// of the executed determination; both this replica's.
	var cctx rules.ContestContext
	for _, d := range v.Determinations {
		if c, ok := sp.CheckpointOf(ctx, d.Tx); ok && d.Executed {
			cctx.At = c.TS
			if v.Status == house.ContestDecided {
				fin = replica.FinalAdvisory
			}
		}
	}
	for _, o := range v.Options {
		m, ok := sp.House().MR(o)
		if !ok {
			continue
		}
		var opened time.Time
		for _, tx := range m.OpenedBy {
			if c, ok := sp.CheckpointOf(ctx, tx); ok && (opened.IsZero() || c.TS.Before(opened)) {
				opened = c.TS
			}
		}
		opened = r.fiscalNoticeStart(ctx, sp, o, opened) // a fiscal option's notice starts at its first estimate (D53, estimates.go)
		if opened.IsZero() {
			cctx.NoticeStart = time.Time{}
			break
		}
		if opened.After(cctx.NoticeStart) {
			cctx.NoticeStart = opened
		}
	}
	if !cctx.At.IsZero() {
		if tv, ok := sp.House().ContestAt(id, cctx); ok {
			v = tv
		}
	}
	return v, fin, nil
}

// contestFacts fills the fact sheet inputs a contest decides: versus_base
// for a variant (D68) and ranked_above_winner for a fallback winner (D77).
func contestFacts(h *house.House, rv *Review) {
	if base := rv.Body.VariantOf; base.Valid() {
		if bp, ok := h.Patch(base); ok && rv.Review != nil {
			if p, ok := h.Patch(rv.MR); ok {
				rv.VersusBase = statute.Compare(bp.Result, p.Result)
			}
		}
	}
	for _, a := range h.RankedAboveWinner(rv.MR) {
		id, err := dag.ParseID(a.Option)
		if err != nil {
			continue
		}
		rv.RankedAboveWinner = append(rv.RankedAboveWinner, statute.RankedAbove{Option: id, AboveWinner: int(a.AboveWinner), BelowWinner: int(a.BelowWinner)})
	}
}
