package httpapi

// This file is /law?date=&jurisdiction= (30k §6 item 7, D43, D58, D70,
// D73): the root text in force on a date, as the replica computes it
// (replica.LawAt: statute.Law over the merges into the root in the order
// the House executed them).

import (
	"net/http"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/statute"
)

// LawOnAnswer is GET /law?date=…'s answer.
type LawOnAnswer struct {
	sessionLabels
	Date         statute.Date      `json:"date"`
	Jurisdiction string            `json:"jurisdiction,omitempty"`
	Head         dag.ID            `json:"head"`
	HeadSnapshot dag.ID            `json:"head_snapshot"`
	Snapshot     dag.ID            `json:"snapshot"`
	Merges       int               `json:"merges_in_force"`
	HeldBack     []dag.ID          `json:"held_back"`
	Root         *statute.NodeSpec `json:"root"`
	Finality     replica.Finality  `json:"finality"`
}

func (s *Server) lawOn(w http.ResponseWriter, r *http.Request, space dag.ID, date, jurisdiction string) error {
	ctx := r.Context()
	day, err := statute.ParseDate(date)
	if date == "" {
		// The date defaults to today (UTC): the one clock read of the
		// shell, never of the replica.
		day, err = statute.ParseDate(time.Now().UTC().Format(time.DateOnly))
	}
	if err != nil {
		return problemf(dag.CodeSchema, "date: %v", err)
	}
	in, err := s.view.LawAt(ctx, space, day, jurisdiction)
	if err != nil {
		return err
	}
	a := LawOnAnswer{sessionLabels: s.labels(ctx, space), Date: day, Jurisdiction: jurisdiction,
		Head: in.Head, HeadSnapshot: in.HeadSnapshot, Snapshot: in.Snapshot, Merges: in.Merges,
		HeldBack: in.HeldBack, Finality: in.Finality}
	if a.HeldBack == nil {
		a.HeldBack = []dag.ID{}
	}
	spec, ok := in.Tree.Spec(in.Tree.Root())
	if !ok {
		return problemf(CodeInternal, "law in force has no root")
	}
	a.Root = spec
	return writeJSON(w, a)
}
