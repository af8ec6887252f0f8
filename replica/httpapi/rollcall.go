package httpapi

// This file is GET /export/rollcall?session= (30k D46): the members-by-MRs
// choice matrix for research, from view.RollCall.

import (
	"net/http"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// RollCallAnswer is GET /export/rollcall's answer, in the spec's shape:
// choices[i][j] is members[i]'s effective choice on mrs[j]
// ("approve|reject|abstain|void", or null for no counted ballot, which is
// also what a member outside that MR's electorate gets), finality[j] the
// MR's finality. weights is null: witan evaluates no capital_vote (OQ-20).
type RollCallAnswer struct {
	sessionLabels
	Members       []dag.Key          `json:"members"`
	MRs           []dag.ID           `json:"mrs"`
	Choices       [][]*string        `json:"choices"`
	Weights       *[][]*uint64       `json:"weights"`
	Finality      []replica.Finality `json:"finality"`
	Authoritative bool               `json:"authoritative"`
}

func (s *Server) rollcall(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	rc, err := s.view.RollCall(ctx, space)
	if err != nil {
		return err
	}
	a := RollCallAnswer{sessionLabels: s.labels(ctx, space), Members: rc.Members, MRs: rc.MRs,
		Choices: make([][]*string, len(rc.Choices)), Finality: rc.Finality}
	if a.Members == nil {
		a.Members = []dag.Key{}
	}
	if a.MRs == nil {
		a.MRs, a.Finality = []dag.ID{}, []replica.Finality{}
	}
	for i, row := range rc.Choices {
		a.Choices[i] = make([]*string, len(row))
		for j := range row {
			if row[j] != "" {
				a.Choices[i][j] = &row[j]
			}
		}
	}
	return writeJSON(w, a)
}
