package author

// This file is the MR family: mr.open, ballot.cast and mr.determine (30k
// §4).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// MR kinds.
const (
	KindMerge      = "merge"
	KindGovernance = "governance"
)

// MR is a merge request's body.
type MR struct {
	// Kind is KindMerge (the default) or KindGovernance.
	Kind string
	// Source and SourceHead are what a merge merges (merge only).
	Source     string
	SourceHead dag.ID
	// Target is the branch merged into (house.RootBranch when empty) and
	// TargetHead its head when the MR opens.
	Target     string
	TargetHead dag.ID
	// Group is the electorate's group id (DefaultElectorate when empty),
	// and Members its members now: the MR freezes their snapshot. MROpen
	// fills Members from Options.Groups when they are left out.
	Group   string
	Members []dag.Key
	Rule    rules.Ref
	// Summary is optional; Supersedes names an MR this one replaces.
	Summary    string
	Supersedes dag.ID
	// EffectiveDate, "YYYY-MM-DD", makes the merge effective on that date;
	// empty means on_merge.
	EffectiveDate string
	Emergency     bool
	Fiscal        bool
	VariantOf     dag.ID
	// Set is what a governance MR sets on its target (governance only).
	Set GovSet
	// Resolutions resolve the merge's conflicts (§6 item 2; merge only).
	Resolutions []Resolution
}

// Resolution is one entry of a merge MR's resolutions: the final node at
// NID, or nil to delete it.
type Resolution struct {
	NID  string
	Node *statute.NodeSpec
}

// GovSet is what a governance MR sets: at least one member.
type GovSet struct {
	MergeRule      *rules.Ref
	GovernanceRule *rules.Ref
	Owner          string // group id, without "group:"; "" leaves it
}

// DefaultElectorate is MR.Group's default.
const DefaultElectorate = "roster"

// MRBody returns the canonical body of m in session and its id, the MR's
// id.
func MRBody(session dag.ID, m MR) ([]byte, dag.ID, error) {
	if m.Kind == "" {
		m.Kind = KindMerge
	}
	if m.Target == "" {
		m.Target = house.RootBranch
	}
	if m.Group == "" {
		m.Group = DefaultElectorate
	}
	el, err := rules.NewElectorate(m.Members)
	if err != nil {
		return nil, dag.ID{}, err
	}
	effective := map[string]any{"type": "on_merge"}
	if m.EffectiveDate != "" {
		effective = map[string]any{"type": "date", "date": m.EffectiveDate}
	}
	body := map[string]any{
		"kind": m.Kind, "session": session, "target": map[string]any{"branch": m.Target, "head": m.TargetHead},
		"electorate": map[string]any{"group": "group:" + m.Group, "snapshot": el.Snapshot()},
		"rule":       m.Rule, "effective": effective,
		"emergency": m.Emergency, "fiscal": m.Fiscal, "variant_of": optID(m.VariantOf), "supersedes": optID(m.Supersedes),
	}
	if m.Summary != "" {
		body["summary"] = m.Summary
	}
	switch m.Kind {
	case KindMerge:
		body["source"] = map[string]any{"branch": m.Source, "head": m.SourceHead}
		rs := make([]any, 0, len(m.Resolutions))
		for _, r := range m.Resolutions {
			rs = append(rs, map[string]any{"nid": r.NID, "node": r.Node})
		}
		body["resolutions"] = rs
	case KindGovernance:
		set := map[string]any{}
		if m.Set.MergeRule != nil {
			set["merge_rule"] = *m.Set.MergeRule
		}
		if m.Set.GovernanceRule != nil {
			set["governance_rule"] = *m.Set.GovernanceRule
		}
		if m.Set.Owner != "" {
			set["owner"] = "group:" + m.Set.Owner
		}
		body["set"] = set
	default:
		return nil, dag.ID{}, errors.New("author: mr.open: kind " + m.Kind + " is not merge or governance")
	}
	raw, err := dag.Marshal(body)
	if err != nil {
		return nil, dag.ID{}, err
	}
	return raw, dag.Sum(raw), nil
}

// optID is id, or JSON null when it is zero.
func optID(id dag.ID) any {
	if id.Valid() {
		return id
	}
	return nil
}

// MROpen opens m; its id is Tx.Made.
func (a *Author) MROpen(ctx context.Context, session dag.ID, m MR, parents []dag.ID) (Tx, error) {
	if len(m.Members) == 0 && a.o.Groups != nil {
		g := cmp.Or(m.Group, DefaultElectorate)
		v, err := a.o.Groups.Group(ctx, session, g)
		if err != nil {
			return Tx{}, fmt.Errorf("author: mr.open: the electorate, group %s: %w", g, err)
		}
		if len(v.Members) == 0 {
			return Tx{}, fmt.Errorf("author: mr.open: the electorate, group %s, has no members (flags %v)", g, v.Flags)
		}
		m.Members = v.Members
	}
	raw, id, err := MRBody(session, m)
	if err != nil {
		return Tx{}, err
	}
	tx, err := a.Seal(ctx, Draft{Type: dag.TxMROpen, Session: session, Parents: parents, Body: json.RawMessage(raw)})
	if err != nil {
		return Tx{}, err
	}
	tx.Made = id
	return tx, nil
}

// Ballot is a ballot on an MR: its choice ("approve", "reject",
// "abstain") and, when it replaces the author's earlier ballot, that
// ballot's id.
type Ballot struct {
	MR         dag.ID
	Choice     string
	Supersedes dag.ID
	// Emergency answers an emergency MR's request: "yes", "no", or ""
	// (left out).
	Emergency string
	// Weight, when set, is the ballot's weight (capital_vote only).
	Weight *uint64
}

// BallotCast casts b. The author does not judge the choice: a choice the
// rules do not know is built, signed, and refused by the node.
func (a *Author) BallotCast(ctx context.Context, session dag.ID, b Ballot, parents []dag.ID) (Tx, error) {
	body := map[string]any{"mr": b.MR, "choice": b.Choice, "supersedes": optID(b.Supersedes)}
	if b.Emergency != "" {
		body["emergency"] = b.Emergency
	}
	if b.Weight != nil {
		body["weight"] = *b.Weight
	}
	return a.Seal(ctx, Draft{Type: dag.TxBallotCast, Session: session, Parents: parents, Body: body})
}

// Determination closes an MR: the ballots counted and the outcome.
type Determination struct {
	MR      dag.ID
	Ballots []dag.ID
	Outcome string
}

// Determine submits d.
func (a *Author) Determine(ctx context.Context, session dag.ID, d Determination, parents []dag.ID) (Tx, error) {
	ballots := d.Ballots
	if ballots == nil {
		ballots = []dag.ID{}
	}
	return a.Seal(ctx, Draft{Type: dag.TxMRDetermine, Session: session, Parents: parents,
		Body: map[string]any{"mr": d.MR, "ballots": ballots, "outcome": d.Outcome}})
}
