package httpapi

// This file serves an MR's derived review — /diff, /checks and /facts —
// from the replica's own record of the MR (replica.Review: the patch its
// House derived at open, against the open-time target head, and the
// Change DAG as the House executed it). Nothing here derives the session
// again.

import (
	"errors"
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// mrFinality is the finality of what describes an MR's outcome.
func (s *Server) mrFinality(r *http.Request, space string, id dag.ID) replica.Finality {
	if m, err := s.rep.MR(r.Context(), space, id); err == nil {
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
		rv, err := s.rep.Review(ctx, space, id)
		if errors.Is(err, replica.ErrGovernanceMR) {
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
		return writeJSON(w, map[string]any{what: view, "mr": id, "merge_base": rv.Base, "session": labels.Session,
			"simulation": labels.Simulation, "finality": fin})
	}
}
