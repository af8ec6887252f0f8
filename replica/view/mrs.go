package view

// This file serves the derived state: sessions, groups, branches, MRs with
// their status and tally, each labelled with this replica's finality, and
// the quarantine.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// MR is one merge request as this replica serves it.
type MR struct {
	house.MRView
	// Finality is final_advisory once the MR's outcome is decided by an
	// executed determination that a checkpoint of this replica includes;
	// an open MR is always provisional (30k §5).
	Finality replica.Finality `json:"finality"`
	// Evaluations are the determinations re-evaluated with this replica's
	// checkpoint times: the elapsed notice and the deadline, advisory on an
	// eventual node (30k §7).
	Evaluations []Evaluation `json:"evaluations"`
	// Advisories are flags judged in this replica's checkpoint time that
	// a strong node would refuse on, advisory on an eventual node
	// (advisory.go): D74's deadline_too_short in the prompt's checkpoint
	// time, beside the refusal admission makes in witnessed time.
	Advisories []Advisory `json:"advisories"`
}

// Evaluation is a determination re-evaluated over exactly its ballots at
// the checkpoint time of the checkpoint that first included it, with the
// notice counted from the checkpoint that first included the MR's open.
type Evaluation struct {
	Tx            dag.ID           `json:"tx"`
	At            *time.Time       `json:"checkpoint_time"`
	OpenedAt      *time.Time       `json:"opened_checkpoint_time"`
	Result        rules.Result     `json:"result"`
	Finality      replica.Finality `json:"finality"`
	Authoritative bool             `json:"authoritative"` // always false (D45)
}

// MRs lists the session's MRs, sorted by id.
func (r *Reader) MRs(ctx context.Context, session dag.ID) ([]MR, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	var out []MR
	for _, v := range sp.House().State().MRs {
		out = append(out, r.mrOf(ctx, sp, v))
	}
	return out, nil
}

// MR returns one merge request.
func (r *Reader) MR(ctx context.Context, session dag.ID, id dag.ID) (MR, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return MR{}, err
	}
	defer sp.Close()
	v, ok := sp.House().MR(id)
	if !ok {
		return MR{}, fmt.Errorf("replica: MR %s: %w", id, dag.ErrNotFound)
	}
	return r.mrOf(ctx, sp, v), nil
}

func (r *Reader) mrOf(ctx context.Context, sp *replica.Session, v house.MRView) MR {
	m := MR{MRView: v, Finality: replica.Provisional, Evaluations: []Evaluation{}, Advisories: []Advisory{}}
	var opened *time.Time
	for _, tx := range v.OpenedBy {
		if c, ok := sp.CheckpointOf(ctx, tx); ok && (opened == nil || c.TS.Before(*opened)) {
			t := c.TS
			opened = &t
		}
	}
	m.Advisories = advisories(v, opened)
	for _, d := range v.Determinations {
		e := Evaluation{Tx: d.Tx, OpenedAt: opened, Finality: replica.Provisional}
		ctxR := rules.Context{}
		if c, ok := sp.CheckpointOf(ctx, d.Tx); ok {
			t := c.TS
			e.At, e.Finality, ctxR.At = &t, replica.FinalAdvisory, t
		}
		if opened != nil {
			ctxR.NoticeStart = *opened
		}
		ctxR.NoticeStart = r.fiscalNoticeStart(ctx, sp, v.ID, ctxR.NoticeStart) // D53 (estimates.go)
		e.Result, _ = sp.House().Evaluate(d.Tx, ctxR)
		m.Evaluations = append(m.Evaluations, e)
		if d.Executed && e.Finality == replica.FinalAdvisory && v.Status != house.StatusOpen {
			m.Finality = replica.FinalAdvisory
		}
	}
	return m
}

// Tally is an MR's tally under its rule, with both shares and the rule's
// share (D50), and its finality, the same in Go and over HTTP (GET
// /merge-requests/{id}/tally): while the MR is open, or its outcome rests
// on nothing this node has checkpointed, the live tally, provisional (30k
// §5); once its outcome is decided by an executed determination that one
// of this node's checkpoints includes, the tally it was decided on,
// final_advisory.
type Tally struct {
	MR       dag.ID           `json:"mr"`
	Result   rules.Result     `json:"result"`
	Finality replica.Finality `json:"finality"`
}

// Tally returns an MR's tally: the live one in O(1) while the MR is open
// (the poll is folded as ballots arrive); once it is decided, the
// determinations are evaluated again (O(their ballots)) to find the one
// that makes it final_advisory.
func (r *Reader) Tally(ctx context.Context, session dag.ID, mr dag.ID) (Tally, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return Tally{}, err
	}
	defer sp.Close()
	res, ok := sp.House().Tally(mr, rules.Context{})
	if !ok {
		return Tally{}, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
	}
	t := Tally{MR: mr, Result: res, Finality: replica.Provisional}
	if v, ok := sp.House().MR(mr); ok && v.Status != house.StatusOpen {
		if m := r.mrOf(ctx, sp, v); m.Finality == replica.FinalAdvisory {
			for _, e := range m.Evaluations {
				if e.Finality == replica.FinalAdvisory {
					t.Result, t.Finality = e.Result, replica.FinalAdvisory
				}
			}
		}
	}
	return t, nil
}

// Law is the root text as it stands at the root branch's head.
type Law struct {
	Head     dag.ID           `json:"head"`
	Snapshot dag.ID           `json:"snapshot"`
	Finality replica.Finality `json:"finality"`
}

// Law returns the root branch's head and snapshot: the text as merged,
// whatever the effective dates (LawAt applies those).
func (r *Reader) Law(ctx context.Context, session dag.ID) (Law, error) {
	b, err := r.rep.Branch(ctx, session, house.RootBranch)
	if err != nil {
		return Law{}, err
	}
	if len(b.Heads) != 1 || b.Snapshot == nil {
		return Law{}, fmt.Errorf("replica: the root branch has %d heads", len(b.Heads))
	}
	return Law{Head: b.Heads[0], Snapshot: *b.Snapshot, Finality: replica.Provisional}, nil
}

// FarFuture is the effective date given to an on_merge merge whose
// determination no checkpoint of this replica includes yet: its date is
// unknown, so it (and every merge after it) is held back.
var FarFuture = statute.MustDate("9999-12-31")

// LawInForce is the root text in force on a date (30k §6 item 7, D43).
type LawInForce struct {
	*statute.InForce
	Date     statute.Date     `json:"date"`
	Finality replica.Finality `json:"finality"`
}

// LawAt returns the law in force on date d, in jurisdiction (or "" for the
// whole text). The merges into the root are taken in the order the
// derived state executed them (the chain of root heads); an on_merge
// merge is effective on the UTC date of this replica's first checkpoint
// that includes its executed determination, and held back until there is
// one. The answer is final_advisory when every merge into the root is
// checkpointed here (a merge not yet checkpointed may still change what is
// in force on d, or, undated, be held back only for want of a date), else
// provisional. With no merge in force, Head is the genesis change. The
// tree returned is hashed: it may be read concurrently,
// never edited.
func (r *Reader) LawAt(ctx context.Context, session dag.ID, d statute.Date, jurisdiction string) (*LawInForce, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	seed, ok := sp.House().Tree(sp.House().Genesis())
	if !ok {
		return nil, fmt.Errorf("replica: %s has no seed snapshot", session)
	}
	law := statute.NewLaw(seed, sp.House().Jurisdictions())
	merges := sp.House().RootMerges()
	checkpointed := make([]bool, len(merges))
	for i, m := range merges {
		before, _ := sp.House().Tree(m.Before)
		after, _ := sp.House().Tree(m.Change)
		c, inCP := sp.CheckpointOf(ctx, m.Determination)
		checkpointed[i] = inCP
		eff := FarFuture
		switch {
		case m.Effective.Dated:
			eff = m.Effective.Date
		case inCP:
			eff, _ = statute.ParseDate(c.TS.UTC().Format("2006-01-02"))
		}
		if err := law.Add(statute.Enactment{MR: m.MR, Change: m.Change, Effective: eff, Before: before, After: after}); err != nil {
			return nil, err
		}
	}
	in, err := law.At(d, jurisdiction, sp.House().OptIns(), sp.House()) // D73 choices (house opinion_members.go)
	if err != nil {
		return nil, err
	}
	if in.Merges == 0 {
		in.Head = sp.House().Genesis() // the seed's change
	}
	in.Tree.Hash()
	out := &LawInForce{InForce: in, Date: d, Finality: replica.FinalAdvisory}
	for _, ok := range checkpointed {
		if !ok {
			out.Finality = replica.Provisional
		}
	}
	if jurisdiction != "" && !r.choicesCheckpointed(ctx, sp) { // D73 (estimates.go)
		out.Finality = replica.Provisional
	}
	return out, nil
}

// District attributes (D72). A simulation session may name, in
// session.create's "districts", a table mapping roster members to a
// region and a density; tallies can then be broken down by either. The
// spec fixes neither the table's shape nor the breakdown's, so both are
// witan's (docs/deviations.md, "## node"). The table is the canonical
// JSON object
//
//	{"attributes":{"density":["rural","urban"],"region":["north","south"]},
//	 "members":{"ed25519:…":{"density":"urban","region":"north"}, …}}
//
// declaring the allowed values of both attributes (each a non-empty list
// of distinct non-empty strings, in the order breakdowns list them) and
// giving every listed member exactly one declared value of each.

// The attributes D72 allows: any other is district_attribute_invalid.
const (
	AttrRegion  = house.AttrRegion
	AttrDensity = house.AttrDensity
)

// MaxDistrictValues bounds the values one attribute may declare.
const MaxDistrictValues = house.MaxDistrictValues

// Districts is a decoded district attribute table.
type Districts = house.Districts

func districtErr(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeDistrictAttributeInvalid, Detail: fmt.Sprintf("replica: districts: "+format, args...)}
}

// DecodeDistricts decodes and checks a district attribute table
// (house.DecodeDistricts, which session.create's admission runs too).
func DecodeDistricts(b []byte) (*Districts, error) { return house.DecodeDistricts(b) }

func trunc(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// GroupTally is the tally of one district value: the MR's poll restricted
// to the members of its electorate who have that value, under the MR's
// rule, with both shares (D50). Value is "" for members of the electorate
// the table does not list.
type GroupTally struct {
	Value string      `json:"value"`
	Tally rules.Tally `json:"tally"`
}

// TallyBreakdown is an MR's live tally broken down by one district
// attribute. A breakdown's rule share is informative only: the rule
// decides on the whole electorate.
type TallyBreakdown struct {
	MR       dag.ID           `json:"mr"`
	By       string           `json:"by"`
	Result   rules.Result     `json:"result"`
	Groups   []GroupTally     `json:"groups"`
	Finality replica.Finality `json:"finality"`
}

// TallyBy returns an MR's live tally broken down by attribute by (region
// or density) of the session's district table (D72). An attribute other
// than those two, or a session without a table, is
// district_attribute_invalid; a table the store does not hold wraps
// dag.ErrNotFound. Groups follow the table's declared order, then the
// members it does not list ("") if any. Like Tally, it is provisional.
func (r *Reader) TallyBy(ctx context.Context, session dag.ID, mr dag.ID, by string) (TallyBreakdown, error) {
	if by != AttrRegion && by != AttrDensity {
		return TallyBreakdown{}, districtErr("by=%q: tallies break down by region or density only (D72)", trunc(by))
	}
	// What the House holds is copied out under the lock; the table is
	// read and the groups folded after, without holding up ingest.
	in, table, res, err := func() (house.PollInputs, dag.ID, rules.Result, error) {
		sp, err := r.rep.ReadSession(ctx, session)
		if err != nil {
			return house.PollInputs{}, dag.ID{}, rules.Result{}, err
		}
		defer sp.Close()
		in, ok := sp.House().PollInputs(mr)
		if !ok {
			return in, dag.ID{}, rules.Result{}, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
		}
		body := sp.House().SessionBody()
		if body == nil || !body.Districts.Valid() {
			return in, dag.ID{}, rules.Result{}, districtErr("the session declares no district attributes: by= is only for sessions with a districts table")
		}
		res, _ := sp.House().Tally(mr, rules.Context{})
		return in, body.Districts, res, nil
	}()
	if err != nil {
		return TallyBreakdown{}, err
	}
	raw, err := r.rep.Object(ctx, table)
	if err != nil {
		return TallyBreakdown{}, fmt.Errorf("replica: district table %s: %w", table, err)
	}
	d, err := DecodeDistricts(raw)
	if err != nil {
		return TallyBreakdown{}, err
	}
	out := TallyBreakdown{MR: mr, By: by, Result: res, Finality: replica.Provisional}
	members := map[string][]dag.Key{}
	for _, k := range in.Electorate.Members() {
		v := ""
		if m, ok := d.Members[k]; ok {
			v = m[by]
		}
		members[v] = append(members[v], k)
	}
	values := d.Values[by]
	if len(members[""]) > 0 {
		values = append(slices.Clip(values), "")
	}
	for _, v := range values {
		el, err := rules.NewElectorate(members[v])
		if err != nil {
			return TallyBreakdown{}, err
		}
		p := rules.NewPoll(in.Rule, el, mr)
		for _, b := range in.Ballots {
			if el.Has(b.Author) {
				_ = p.Add(b) // refused ballots are refused by the whole poll too
			}
		}
		out.Groups = append(out.Groups, GroupTally{Value: v, Tally: p.Tally(in.Facts)})
	}
	return out, nil
}

// MREvidence is what an evidence extract of an MR is made of (30k D45,
// httpapi's extract.go): the MR as this replica serves it (its
// determinations re-evaluated over exactly their ballots), the ids of its
// mr.open entries and the inputs of its live poll (its frozen electorate,
// the ballots it counts with their authors, the facts it is evaluated
// with).
type MREvidence struct {
	MR    MR
	Opens []dag.ID
	Poll  house.PollInputs
}

// MREvidence returns the evidence of MR id of the session, or an error
// wrapping dag.ErrNotFound. It costs O(ballots of the MR).
func (r *Reader) MREvidence(ctx context.Context, session dag.ID, id dag.ID) (MREvidence, error) {
	sp, err := r.rep.ReadSession(ctx, session)
	if err != nil {
		return MREvidence{}, err
	}
	defer sp.Close()
	v, ok := sp.House().MR(id)
	in, okP := sp.House().PollInputs(id)
	if !ok || !okP {
		return MREvidence{}, fmt.Errorf("replica: MR %s: %w", id, dag.ErrNotFound)
	}
	return MREvidence{MR: r.mrOf(ctx, sp, v), Opens: sp.House().Opens(id), Poll: in}, nil
}
