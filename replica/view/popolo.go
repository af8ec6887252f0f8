package view

// This file is the snapshot behind the Popolo export (30k D30, GET
// /export/popolo): a session's members, groups and vote events, taken
// under the replica's lock in a compact form (one byte per electorate
// member per MR, the frozen electorates shared, not copied) so that the
// HTTP layer can stream the export, which at S11 scale is a hundred
// megabytes of JSON, without holding the lock or the whole answer.

import (
	"context"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/rules"
)

// Popolo is a session's voting record as of one moment of this replica.
type Popolo struct {
	// Label is the session's label (session.create), the legislature's name.
	Label string
	// Entries is the size of this replica's log of the session when the
	// snapshot was taken; Checkpointed the size of its latest checkpoint.
	Entries, Checkpointed uint64
	// StateFinality is the finality of what the groups say (persons,
	// organizations, memberships): final_advisory when the latest
	// checkpoint includes every entry of the session, else provisional.
	// It is conservative: a group unchanged since a checkpoint is still
	// provisional while any later entry is unchecked, since the House
	// does not say which entries made a group what it is.
	StateFinality replica.Finality
	Groups        []house.GroupView
	Events        []PopoloEvent // one per MR, sorted by MR id
}

// PopoloEvent is one MR's vote event: its view, finality (the MR's, as
// GET /merge-requests/{id} labels it), and each electorate member's
// effective choice in the live poll, by position in Electorate (see
// house.Choices for the codes).
type PopoloEvent struct {
	MR         house.MRView
	Finality   replica.Finality
	Electorate *rules.Electorate
	Choices    []uint8
}

// Vote returns the i-th electorate member's id (the key's string form,
// kept by the electorate) and their choice ("approve", "reject",
// "abstain", "void", or "" for no counted ballot).
func (e *PopoloEvent) Vote(i int) (string, string) {
	k := e.Electorate.NameAt(i)
	switch c := e.Choices[i]; c {
	case 0:
		return k, ""
	case house.ChoiceVoid:
		return k, "void"
	default:
		return k, rules.Choice(c).String()
	}
}

// Popolo takes the snapshot of a session's voting record. It holds the
// replica's lock for O(groups' members + MRs × electorate) simple steps
// (tens of milliseconds at S11 scale); what it returns is never changed
// by the replica afterwards.
func (r *Reader) Popolo(ctx context.Context, session dag.ID) (*Popolo, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	st := sp.House().State()
	p := &Popolo{Label: st.Label, Entries: uint64(len(sp.Log())), Groups: st.Groups, StateFinality: replica.Provisional}
	if n := len(sp.Checkpoints()); n > 0 {
		p.Checkpointed = sp.Checkpoints()[n-1].Size
		if p.Checkpointed >= p.Entries {
			p.StateFinality = replica.FinalAdvisory
		}
	}
	for _, v := range st.MRs { // sorted by id
		ev := PopoloEvent{MR: v, Finality: r.mrOf(ctx, sp, v).Finality}
		if el, ch, ok := sp.House().Choices(v.ID); ok {
			ev.Electorate, ev.Choices = el, ch
		} else {
			ev.Electorate, _ = rules.NewElectorate(nil)
		}
		p.Events = append(p.Events, ev)
	}
	return p, nil
}
