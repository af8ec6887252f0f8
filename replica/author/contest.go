package author

// This file is the contest family: contest.open, contest.rank and
// contest.determine (30k §7, D47, D68, D71). A variant is an mr.open with
// MR.VariantOf (mr.go).

import (
	"context"
	"encoding/json"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// Contest groups competing MRs: its options and, optionally, the ranking
// deadline.
type Contest struct {
	Options  []dag.ID
	Deadline time.Time // zero: none
}

// ContestOpen opens c. A contest's id is the tx id of its contest.open
// (Tx.ID, also Tx.Made). The body is the rules package's own form
// (rules.ContestOpenBody).
func (a *Author) ContestOpen(ctx context.Context, session dag.ID, c Contest, parents []dag.ID) (Tx, error) {
	raw, err := rules.ContestOpenBody{Options: c.Options, Deadline: c.Deadline}.MarshalJSON()
	if err != nil {
		return Tx{}, err
	}
	tx, err := a.Seal(ctx, Draft{Type: dag.TxContestOpen, Session: session, Parents: parents, Body: json.RawMessage(raw)})
	if err != nil {
		return Tx{}, err
	}
	tx.Made = tx.ID
	return tx, nil
}

// Ranking is a member's ranking of a contest's options, best first; the
// zero ID stands for the status quo. Supersedes names the member's earlier
// ranking it replaces.
type Ranking struct {
	Contest    dag.ID
	Order      []dag.ID
	Supersedes dag.ID
}

// ContestRank submits r.
func (a *Author) ContestRank(ctx context.Context, session dag.ID, r Ranking, parents []dag.ID) (Tx, error) {
	names := make([]string, len(r.Order))
	for i, o := range r.Order {
		if o.Valid() {
			names[i] = o.String()
		} else {
			names[i] = rules.StatusQuo
		}
	}
	return a.Seal(ctx, Draft{Type: dag.TxContestRank, Session: session, Parents: parents,
		Body: map[string]any{"contest": r.Contest, "ranking": names, "supersedes": optID(r.Supersedes)}})
}

// ContestDetermination closes a contest: the rankings counted, the outcome
// ("approved", "rejected" or "pending") and the winner: an MR, the status
// quo (StatusQuo), or none (both unset).
type ContestDetermination struct {
	Contest   dag.ID
	Rankings  []dag.ID
	Outcome   string
	Winner    dag.ID
	StatusQuo bool
}

// ContestDetermine submits d.
func (a *Author) ContestDetermine(ctx context.Context, session dag.ID, d ContestDetermination, parents []dag.ID) (Tx, error) {
	rankings := d.Rankings
	if rankings == nil {
		rankings = []dag.ID{}
	}
	var winner any
	switch {
	case d.StatusQuo:
		winner = rules.StatusQuo
	case d.Winner.Valid():
		winner = d.Winner
	}
	return a.Seal(ctx, Draft{Type: dag.TxContestDetermine, Session: session, Parents: parents,
		Body: map[string]any{"contest": d.Contest, "rankings": rankings, "outcome": d.Outcome, "winner": winner}})
}
