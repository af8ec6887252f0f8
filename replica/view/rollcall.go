package view

// This file is the roll call (30k D46, GET /export/rollcall): the
// members-by-MRs matrix of each member's effective choice on each MR.

import (
	"context"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/rules"
)

// RollCall is the roll-call matrix of a session: Choices[i][j] is member
// Members[i]'s effective choice on MR MRs[j] — "approve", "reject",
// "abstain", "void" (the member equivocated, D-rules) or "" for no counted
// ballot —, and Finality[j] the MR's finality.
type RollCall struct {
	Members  []dag.Key
	MRs      []dag.ID
	Choices  [][]string
	Finality []replica.Finality
}

// RollCall returns the session's roll call over every MR (sorted by id)
// and every member of an MR's frozen electorate (sorted). A member's
// choice is what the MR's rule counts for them: their ballots alone are
// folded into a poll of the MR's rule and electorate (rules.Poll), so
// superseding ballots and equivocation are resolved exactly as the tally
// resolves them.
func (r *Reader) RollCall(ctx context.Context, session dag.ID) (*RollCall, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	rc := &RollCall{MRs: sp.House().MRs()}
	slices.SortFunc(rc.MRs, func(a, b dag.ID) int { return a.Compare(b) })
	type cell struct {
		member dag.Key
		mr     int
		choice string
	}
	var cells []cell
	seen := map[dag.Key]bool{}
	for j, mr := range rc.MRs {
		v, _ := sp.House().MR(mr)
		rc.Finality = append(rc.Finality, r.mrOf(ctx, sp, v).Finality)
		in, ok := sp.House().PollInputs(mr)
		if !ok {
			continue
		}
		for _, k := range in.Electorate.Members() {
			if !seen[k] {
				seen[k] = true
				rc.Members = append(rc.Members, k)
			}
		}
		by := map[dag.Key][]rules.Ballot{}
		var order []dag.Key
		for _, b := range in.Ballots {
			if _, ok := by[b.Author]; !ok {
				order = append(order, b.Author)
			}
			by[b.Author] = append(by[b.Author], b)
		}
		for _, k := range order {
			p := rules.NewPoll(in.Rule, in.Electorate, mr)
			for _, b := range by[k] {
				_ = p.Add(b) // an invalid ballot is not counted, as in the tally
			}
			t := p.Tally(in.Facts)
			c := ""
			switch {
			case t.Void > 0:
				c = "void"
			case t.Approve > 0:
				c = "approve"
			case t.Reject > 0:
				c = "reject"
			case t.Abstain > 0:
				c = "abstain"
			}
			cells = append(cells, cell{k, j, c})
		}
	}
	slices.SortFunc(rc.Members, func(a, b dag.Key) int { return a.Compare(b) })
	row := make(map[dag.Key]int, len(rc.Members))
	rc.Choices = make([][]string, len(rc.Members))
	for i, k := range rc.Members {
		row[k] = i
		rc.Choices[i] = make([]string, len(rc.MRs))
	}
	for _, c := range cells {
		rc.Choices[row[c.member]][c.mr] = c.choice
	}
	return rc, nil
}

// RootMerges returns the session's merges into the root branch in the
// order the derived state executed them (the law's history, /history).
func (r *Reader) RootMerges(ctx context.Context, session dag.ID) ([]house.Merge, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	return sp.House().RootMerges(), nil
}

// Merges returns the session's executed merges into every branch, in the
// order the derived state executed them (house.House.Merges).
func (r *Reader) Merges(ctx context.Context, session dag.ID) ([]house.Merge, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	return sp.House().Merges(), nil
}
