package httpapi

import (
	"net/http"

	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/rules"
)

// ContestAnswer is GET /contests/{id}'s answer (30k §5, D47, D71, D77):
// the contest's options, its pairwise matrix, every round with its
// locked pairs and winner, ranked_above_winner after a fallback, and the
// result. The result is that of the executed determination when there is
// one, else the live evaluation over every ranking admitted. finality is
// final_advisory once the contest is decided by an executed
// determination a checkpoint of this node includes, else provisional (an
// eventual node never emits final).
type ContestAnswer struct {
	sessionLabels
	house.ContestView
	RankedAboveWinner []rules.AboveWinner `json:"ranked_above_winner"`
	Authoritative     bool                `json:"authoritative"`
	Finality          replica.Finality    `json:"finality"`
}

func (s *Server) contest(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	v, fin, err := s.view.Contest(ctx, space, id)
	if err != nil {
		return err
	}
	return writeJSON(w, ContestAnswer{sessionLabels: s.labels(ctx, space), ContestView: v,
		RankedAboveWinner: v.Result.RankedAboveWinner, Finality: fin})
}
