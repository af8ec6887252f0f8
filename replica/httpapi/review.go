package httpapi

// This file serves an MR's derived review — /diff, /checks and /facts —
// from the replica's own record of the MR (view.Review: the patch its
// House derived at open, against the open-time target head, and the
// Change DAG as the House executed it). Nothing here derives the session
// again.

import (
	"errors"
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/view"
	"github.com/witan-dev/witan/rules"
)

// mrFinality is the finality of what describes an MR's outcome.
func (s *Server) mrFinality(r *http.Request, space dag.ID, id dag.ID) replica.Finality {
	if m, err := s.view.MR(r.Context(), space, id); err == nil {
		return m.Finality
	}
	return replica.Provisional
}

func (s *Server) reviewHandler(what string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		space, err := s.spaceOf(r)
		if err != nil {
			return err
		}
		id, err := parseIDParam(r, "id")
		if err != nil {
			return err
		}
		rv, err := s.view.Review(ctx, space, id)
		if errors.Is(err, view.ErrGovernanceMR) {
			return problemf(dag.CodeSchema, "MR %s is a governance MR: it changes rules, not text, so it has no diff, checks or fact sheet", id)
		}
		if err != nil {
			return err
		}
		fin := s.mrFinality(r, space, id)
		labels := s.labels(ctx, space)
		var view any
		switch what {
		case "diff":
			d := rv.Diff()
			if d == nil {
				return problemf(dag.CodeSchema, "MR %s: the patch does not apply: %v", id, rv.Review.Err)
			}
			view = d.View(id.String())
		case "checks":
			view = rv.Checks()
		case "facts":
			fs, err := rv.Facts(fin)
			if err != nil {
				return err
			}
			view = fs
		}
		ans := map[string]any{what: view, "mr": id, "merge_base": rv.Base, "session": labels.Session,
			"simulation": labels.Simulation, "finality": fin}
		if what == "facts" {
			// Beside the fact sheet (whose members §6 fixes): the
			// threshold the MR's rule applies, the reversion threshold
			// of D41 when the sheet lists reverts.
			ans["rule_threshold"] = ruleThreshold(rv)
		}
		return writeJSON(w, ans)
	}
}

// RuleThreshold is the threshold a threshold_vote MR is judged by: num/den
// of its rule, or the rule's reversion num/den when the MR reverts text
// (D41). Reversion is true in that case.
type RuleThreshold struct {
	Num       uint64 `json:"num"`
	Den       uint64 `json:"den"`
	Reversion bool   `json:"reversion"`
}

// ruleThreshold returns rv's threshold, or nil for a rule without one.
func ruleThreshold(rv *view.Review) *RuleThreshold {
	r, err := rules.Compile(rv.Body.Rule)
	if err != nil {
		return nil
	}
	th, ok := r.Threshold()
	if !ok {
		return nil
	}
	if rv.RuleFacts.Reverts && th.Reversion != nil {
		return &RuleThreshold{Num: th.Reversion.Num, Den: th.Reversion.Den, Reversion: true}
	}
	return &RuleThreshold{Num: th.Num, Den: th.Den}
}
