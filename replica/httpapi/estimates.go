package httpapi

// This file is GET /merge-requests/{id}/estimates (30k §8, D53, D69,
// D75): every accepted estimate on an MR side by side, each as signed and
// attributed to its author, with its totals; none official. And GET
// /merge-requests/{id}/exchanges (D67): the exchanges on an MR.

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
	e, err := s.view.Estimates(ctx, space, id)
	if err != nil {
		return err
	}
	return writeJSON(w, EstimatesAnswer{sessionLabels: s.labels(ctx, space), MREstimates: e})
}

// ExchangesAnswer is GET /merge-requests/{id}/exchanges's answer (D67):
// the exchanges on an MR in chain order and, for a conference MR, the
// chain it resolves.
type ExchangesAnswer struct {
	sessionLabels
	view.MRExchanges
}

func (s *Server) exchanges(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	e, err := s.view.Exchanges(ctx, space, id)
	if err != nil {
		return err
	}
	return writeJSON(w, ExchangesAnswer{sessionLabels: s.labels(ctx, space), MRExchanges: e})
}
