package author

// This file is the short path to a session ready for a vote: one call
// makes the session.create and the two groups it names, with the rules
// and their texts chosen, instead of a dozen declarations.

import (
	"context"
	"errors"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// The plain-language texts of NewSession's rules (30k §5: a rule names
// its text, which must be known or attached).
var (
	MajorityText  = []byte("A merge request passes when more than half of the electorate approves it, with at least half of the electorate voting, after three days of notice.")
	TwoThirdsText = []byte("A change of how the root text is governed passes when at least two thirds of the electorate approve it, with at least half of the electorate voting.")
)

// NewSession is a session made by Author.NewSession, ready for its first
// merge request: submit Txs in order.
type NewSession struct {
	// Session is the session's id, the space to name it by.
	Session dag.ID
	// Genesis is the seed's change: the root branch's first head, an MR's
	// TargetHead.
	Genesis dag.ID
	// Rule is the root branch's merge rule (a majority of the roster, with
	// the root's minimum notice), for an MR on the root.
	Rule rules.Ref
	// Txs are the session.create, the roster group (every member; the
	// author its admin) and the registrar group (the author), each the
	// child of the one before.
	Txs []Tx
}

// NewSession makes a session on seed whose roster is members (the author
// among them or not) and whose registrar is the author, with a majority
// merge rule on the root and the entrenched two-thirds governance rule
// (D38), their texts attached (MajorityText, TwoThirdsText). label names
// it; simulation labels it a simulation (30k §3).
func (a *Author) NewSession(ctx context.Context, label string, seed *statute.Tree, members []dag.Key, simulation bool) (NewSession, error) {
	if len(members) == 0 {
		return NewSession{}, errors.New("author: NewSession: no members")
	}
	majority, err := Majority(house.MinRootNotice, dag.Sum(MajorityText))
	if err != nil {
		return NewSession{}, err
	}
	twoThirds, err := TwoThirds(dag.Sum(TwoThirdsText))
	if err != nil {
		return NewSession{}, err
	}
	create, err := a.SessionCreate(ctx, Session{Label: label, Seed: seed, Simulation: simulation, Registrar: "registrar", Roster: "roster",
		RootRule: majority, RootGovernanceRule: twoThirds, Texts: [][]byte{MajorityText, TwoThirdsText}})
	if err != nil {
		return NewSession{}, err
	}
	me := []dag.Key{a.Key()}
	roster, err := a.GroupCreate(ctx, create.Made, Group{ID: "roster", Members: members, Admins: me}, []dag.ID{create.ID})
	if err != nil {
		return NewSession{}, err
	}
	registrar, err := a.GroupCreate(ctx, create.Made, Group{ID: "registrar", Members: me, Admins: me}, []dag.ID{roster.ID})
	if err != nil {
		return NewSession{}, err
	}
	genesis, err := house.Genesis(seed.Hash()).ID()
	if err != nil {
		return NewSession{}, err
	}
	return NewSession{Session: create.Made, Genesis: genesis, Rule: majority, Txs: []Tx{create, roster, registrar}}, nil
}
