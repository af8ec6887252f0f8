package httpapi

// This file is GET /merge-requests/{id}/estimates (30k §8, D53, D69,
// D75): every accepted estimate on an MR side by side, each as signed and
// attributed to its author, with its totals; none official.

import (
	"net/http"

	"github.com/witan-dev/witan/replica/view"
)

// EstimatesAnswer is GET /merge-requests/{id}/estimates's answer.
type EstimatesAnswer struct {
	sessionLabels
	view.MREstimates
}

func (s *Server) estimates(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	e, err := s.view.Estimates(ctx, sessionID(space), id)
	if err != nil {
		return err
	}
	return writeJSON(w, EstimatesAnswer{sessionLabels: s.labels(ctx, space), MREstimates: e})
}
