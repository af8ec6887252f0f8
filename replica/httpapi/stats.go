package httpapi

// This file serves GET /stats (30k §5, §8, D35): one metric of the
// closed registry for one scope, as of a cut of the record, with
// finality. It never publishes odds or rankings of its own: a ranking is
// only ever an outside author's opinion that the node checks.

import (
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/view"
)

// StatsAnswer is GET /stats's answer.
type StatsAnswer struct {
	sessionLabels
	view.Stat
}

// stats answers ?metric= (required; metric_unknown outside the registry),
// ?scope= (session, an MR id, a member key or group:<id>; default
// session) and ?as_of= (a checkpoint root of this node or an entry id;
// default the latest checkpoint).
func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	metric := q.Get("metric")
	if metric == "" {
		return problemf(dag.CodeSchema, "metric is required")
	}
	scope := q.Get("scope")
	if scope == "" {
		scope = "session"
	}
	var asOf dag.ID
	if a := q.Get("as_of"); a != "" {
		if asOf, err = dag.ParseID(a); err != nil {
			return problemf(dag.CodeSchema, "as_of: %v", err)
		}
	}
	st, err := s.view.Stats(ctx, space, metric, scope, asOf)
	if err != nil {
		return err
	}
	return writeJSON(w, StatsAnswer{sessionLabels: s.labels(ctx, space), Stat: st})
}
