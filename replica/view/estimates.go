package view

// This file feeds the opinion members beyond the first part to the
// views: the accepted estimates to the fact sheet (D53, D69) and the
// start of fiscal notice (D53); jurisdiction choices to /law's finality
// (D73).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/opinion"
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
func (r *Reader) fiscalNoticeStart(ctx context.Context, sp *replica.Session, mr dag.ID, opened time.Time) time.Time {
	body, ok := sp.House().MRBody(mr)
	if !ok || !body.Fiscal {
		return opened
	}
	var first time.Time
	for _, id := range sp.House().EstimateOpinions(mr) {
		if c, ok := sp.CheckpointOf(ctx, id); ok && (first.IsZero() || c.TS.Before(first)) {
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
func (r *Reader) choicesCheckpointed(ctx context.Context, sp *replica.Session) bool {
	for _, id := range sp.House().ChoiceOpinions() {
		if _, ok := sp.CheckpointOf(ctx, id); !ok {
			return false
		}
	}
	return true
}

// EstimateView is one accepted estimate on an MR as GET
// /merge-requests/{id}/estimates shows it: the estimate member as signed
// (by_year, if_permanent, distribution, ...), attributed to its author,
// with its totals (D69). None is official.
type EstimateView struct {
	Opinion    dag.ID          `json:"opinion"`
	Author     dag.Key         `json:"author"`
	AuthorKind string          `json:"author_kind"`
	Estimate   json.RawMessage `json:"estimate"`
	// AsWritten sums by_year's outlays; IfPermanent sums if_permanent's,
	// null when it is null or absent.
	AsWritten   string           `json:"as_written"`
	IfPermanent *string          `json:"if_permanent"`
	Finality    replica.Finality `json:"finality"`
}

// MREstimates is every accepted estimate on one MR, side by side (D53,
// D69, D75), sorted by opinion id.
type MREstimates struct {
	MR            dag.ID         `json:"mr"`
	Estimates     []EstimateView `json:"estimates"`
	Authoritative bool           `json:"authoritative"` // always false (D45): no estimate is official
	// Finality is final_advisory once every listed estimate is in a
	// checkpoint of this replica (a new estimate may still arrive).
	Finality replica.Finality `json:"finality"`
}

// Estimates returns every accepted estimate on MR mr. An unknown MR wraps
// dag.ErrNotFound.
func (r *Reader) Estimates(ctx context.Context, session dag.ID, mr dag.ID) (MREstimates, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return MREstimates{}, err
	}
	defer sp.Close()
	if _, ok := sp.House().MRBody(mr); !ok {
		return MREstimates{}, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
	}
	out := MREstimates{MR: mr, Estimates: []EstimateView{}, Finality: replica.FinalAdvisory}
	for _, id := range sp.House().EstimateOpinions(mr) {
		v, ok := sp.House().Opinion(id)
		if !ok {
			continue
		}
		var members struct {
			Estimate json.RawMessage `json:"estimate"`
		}
		if err := json.Unmarshal(v.Body, &members); err != nil {
			continue
		}
		o, err := opinion.DecodeCanonical(v.Body)
		if err != nil || o.Estimate == nil {
			continue
		}
		e := EstimateView{Opinion: id, Author: v.Author, AuthorKind: v.Kind, Estimate: members.Estimate,
			AsWritten: sumAmounts(opinion.Outlays(o.Estimate.ByYear)), Finality: sp.OpinionFinality(ctx, id)}
		if o.Estimate.IfPermanent != nil {
			p := sumAmounts(opinion.Outlays(o.Estimate.IfPermanent))
			e.IfPermanent = &p
		}
		if e.Finality != replica.FinalAdvisory {
			out.Finality = replica.Provisional
		}
		out.Estimates = append(out.Estimates, e)
	}
	return out, nil
}

// sumAmounts adds decimal integers (opinion.IsAmount holds for each).
func sumAmounts(s []string) string {
	t := new(big.Int)
	for _, a := range s {
		v, _ := new(big.Int).SetString(a, 10)
		if v != nil {
			t.Add(t, v)
		}
	}
	return t.String()
}
