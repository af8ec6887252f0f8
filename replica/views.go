package replica

// This file serves the derived state: sessions, groups, branches, MRs with
// their status and tally, each labelled with this replica's finality, and
// the quarantine.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Sessions returns the spaces that hold a session, sorted.
func (r *Replica) Sessions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name, sp := range r.spaces {
		if sp.h.Counts().Entries > 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// State returns the derived state of a session (a pure function of the
// accepted entries: identical on every replica holding them) and its hash.
func (r *Replica) State(ctx context.Context, spaceName string) (*house.State, dag.ID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, dag.ID{}, err
	}
	st := sp.h.State()
	id, err := st.Hash()
	return st, id, err
}

func (r *Replica) session(ctx context.Context, name string) (*space, error) {
	if r.closed {
		return nil, ErrClosed
	}
	sp, err := r.space(ctx, name)
	if err != nil {
		return nil, err
	}
	if sp.h.Counts().Entries == 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSpace, name)
	}
	return sp, nil
}

// MR is one merge request as this replica serves it.
type MR struct {
	house.MRView
	// Finality is final_advisory once the MR's outcome is decided by an
	// executed determination that a checkpoint of this replica includes;
	// an open MR is always provisional (30k §5).
	Finality Finality `json:"finality"`
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
	Tx            dag.ID       `json:"tx"`
	At            *time.Time   `json:"checkpoint_time"`
	OpenedAt      *time.Time   `json:"opened_checkpoint_time"`
	Result        rules.Result `json:"result"`
	Finality      Finality     `json:"finality"`
	Authoritative bool         `json:"authoritative"` // always false (D45)
}

// MRs lists the session's MRs, sorted by id.
func (r *Replica) MRs(ctx context.Context, spaceName string) ([]MR, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, err
	}
	var out []MR
	for _, v := range sp.h.State().MRs {
		out = append(out, r.mrOf(ctx, sp, v))
	}
	return out, nil
}

// MR returns one merge request.
func (r *Replica) MR(ctx context.Context, spaceName string, id dag.ID) (MR, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return MR{}, err
	}
	v, ok := sp.h.MR(id)
	if !ok {
		return MR{}, fmt.Errorf("replica: MR %s: %w", id, dag.ErrNotFound)
	}
	return r.mrOf(ctx, sp, v), nil
}

func (r *Replica) mrOf(ctx context.Context, sp *space, v house.MRView) MR {
	m := MR{MRView: v, Finality: Provisional, Evaluations: []Evaluation{}, Advisories: []Advisory{}}
	var opened *time.Time
	for _, tx := range v.OpenedBy {
		if c, ok := sp.checkpointOf(r.position(ctx, tx)); ok && (opened == nil || c.TS.Before(*opened)) {
			t := c.TS
			opened = &t
		}
	}
	m.Advisories = advisories(v, opened)
	for _, d := range v.Determinations {
		e := Evaluation{Tx: d.Tx, OpenedAt: opened, Finality: Provisional}
		ctxR := rules.Context{}
		if c, ok := sp.checkpointOf(r.position(ctx, d.Tx)); ok {
			t := c.TS
			e.At, e.Finality, ctxR.At = &t, FinalAdvisory, t
		}
		if opened != nil {
			ctxR.NoticeStart = *opened
		}
		ctxR.NoticeStart = r.fiscalNoticeStart(ctx, sp, v.ID, ctxR.NoticeStart) // D53 (parts.go)
		e.Result, _ = sp.h.Evaluate(d.Tx, ctxR)
		m.Evaluations = append(m.Evaluations, e)
		if d.Executed && e.Finality == FinalAdvisory && v.Status != house.StatusOpen {
			m.Finality = FinalAdvisory
		}
	}
	return m
}

// Tally is the live tally of an MR under its rule, with both shares and the
// rule's share (D50). A live tally is always provisional (30k §5).
type Tally struct {
	MR       dag.ID       `json:"mr"`
	Result   rules.Result `json:"result"`
	Finality Finality     `json:"finality"`
}

// Tally returns an MR's live tally in O(1): the poll is folded as ballots
// arrive.
func (r *Replica) Tally(ctx context.Context, spaceName string, mr dag.ID) (Tally, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return Tally{}, err
	}
	res, ok := sp.h.Tally(mr, rules.Context{})
	if !ok {
		return Tally{}, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
	}
	return Tally{MR: mr, Result: res, Finality: Provisional}, nil
}

// Group returns one group as derived, without deriving the whole state.
func (r *Replica) Group(ctx context.Context, spaceName, id string) (house.GroupView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return house.GroupView{}, err
	}
	if g, ok := sp.h.Group(id); ok {
		return g, nil
	}
	return house.GroupView{}, fmt.Errorf("replica: group %q: %w", id, dag.ErrNotFound)
}

// Branches returns the session's branches as derived, sorted by name,
// without deriving the whole state.
func (r *Replica) Branches(ctx context.Context, spaceName string) ([]house.BranchView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, err
	}
	return sp.h.Branches(), nil
}

// Branch returns one branch as derived, without deriving the whole state.
func (r *Replica) Branch(ctx context.Context, spaceName, name string) (house.BranchView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return house.BranchView{}, err
	}
	if b, ok := sp.h.Branch(name); ok {
		return b, nil
	}
	return house.BranchView{}, fmt.Errorf("replica: branch %q: %w", name, dag.ErrNotFound)
}

// Law is the root text as it stands at the root branch's head.
type Law struct {
	Head     dag.ID   `json:"head"`
	Snapshot dag.ID   `json:"snapshot"`
	Finality Finality `json:"finality"`
}

// Law returns the root branch's head and snapshot: the text as merged,
// whatever the effective dates (LawAt applies those).
func (r *Replica) Law(ctx context.Context, spaceName string) (Law, error) {
	b, err := r.Branch(ctx, spaceName, house.RootBranch)
	if err != nil {
		return Law{}, err
	}
	if len(b.Heads) != 1 || b.Snapshot == nil {
		return Law{}, fmt.Errorf("replica: the root branch has %d heads", len(b.Heads))
	}
	return Law{Head: b.Heads[0], Snapshot: *b.Snapshot, Finality: Provisional}, nil
}

// Quarantine returns the refused entries of a space that the quarantine's
// bounded record still holds, sorted by id. Nothing refused is stored:
// the record is kept in memory, per source, oldest forgotten first.
func (r *Replica) Quarantine(spaceName string) []house.Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.quar.rejections(spaceName)
}

// Refusals returns up to limit records of the quarantine for space (""
// for every space) with Seq after after, oldest first, and whether more
// follow: the quarantine's pages.
func (r *Replica) Refusals(space string, after uint64, limit int) ([]Refusal, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.quar.page(space, after, limit)
}

// Refused returns the quarantine's record of id, if it holds one.
func (r *Replica) Refused(id dag.ID) (Refusal, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.quar.get(id)
	if !ok {
		return Refusal{}, false
	}
	return *q, true
}

// MissingFrom returns the parents, neither held nor refused, of the
// pending entries of space that source sent (dag.WithSource): what to
// ask that source for. Entries other sources sent are not its to
// produce, so a flood from one peer never makes a pull from another ask
// for more.
func (r *Replica) MissingFrom(ctx context.Context, space, source string) ([]dag.ID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wait.missingFrom(ctx, r.store, r.quar, space, source)
}

// PendingStats returns the counters of the entries waiting for parents.
func (r *Replica) PendingStats() PendingStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wait.stats()
}

// QuarantineStats returns the quarantine's counters (a metric).
func (r *Replica) QuarantineStats() QuarantineStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.quar.stats()
}

// Pending returns the entries of a space waiting for parents or for
// objects, sorted: the store's pending entries, which survive a restart.
func (r *Replica) Pending(ctx context.Context, spaceName string) ([]dag.ID, error) {
	return r.store.Pending(ctx, spaceName)
}

// Heads returns the causal frontier of a space (GET /heads).
func (r *Replica) Heads(ctx context.Context, spaceName string) ([]dag.ID, error) {
	return r.store.Heads(ctx, spaceName)
}

// Log returns up to limit accepted entries of a space in this replica's
// log order after position after (GET /log).
func (r *Replica) Log(ctx context.Context, spaceName string, after uint64, limit int) ([]dag.ID, error) {
	return r.store.Log(ctx, spaceName, after, limit)
}

// FarFuture is the effective date given to an on_merge merge whose
// determination no checkpoint of this replica includes yet: its date is
// unknown, so it (and every merge after it) is held back.
var FarFuture = statute.MustDate("9999-12-31")

// LawInForce is the root text in force on a date (30k §6 item 7, D43).
type LawInForce struct {
	*statute.InForce
	Date     statute.Date `json:"date"`
	Finality Finality     `json:"finality"`
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
func (r *Replica) LawAt(ctx context.Context, spaceName string, d statute.Date, jurisdiction string) (*LawInForce, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, err
	}
	seed, ok := sp.h.Tree(sp.h.Genesis())
	if !ok {
		return nil, fmt.Errorf("replica: %s has no seed snapshot", spaceName)
	}
	law := statute.NewLaw(seed, sp.h.Jurisdictions())
	merges := sp.h.RootMerges()
	checkpointed := make([]bool, len(merges))
	for i, m := range merges {
		before, _ := sp.h.Tree(m.Before)
		after, _ := sp.h.Tree(m.Change)
		c, inCP := sp.checkpointOf(r.position(ctx, m.Determination))
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
	in, err := law.At(d, jurisdiction, sp.h.OptIns(), sp.h) // D73 choices (house parts.go)
	if err != nil {
		return nil, err
	}
	if in.Merges == 0 {
		in.Head = sp.h.Genesis() // the seed's change
	}
	in.Tree.Hash()
	out := &LawInForce{InForce: in, Date: d, Finality: FinalAdvisory}
	for _, ok := range checkpointed {
		if !ok {
			out.Finality = Provisional
		}
	}
	if jurisdiction != "" && !r.choicesCheckpointed(ctx, sp) { // D73 (parts.go)
		out.Finality = Provisional
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
	MR       dag.ID       `json:"mr"`
	By       string       `json:"by"`
	Result   rules.Result `json:"result"`
	Groups   []GroupTally `json:"groups"`
	Finality Finality     `json:"finality"`
}

// TallyBy returns an MR's live tally broken down by attribute by (region
// or density) of the session's district table (D72). An attribute other
// than those two, or a session without a table, is
// district_attribute_invalid; a table the store does not hold wraps
// dag.ErrNotFound. Groups follow the table's declared order, then the
// members it does not list ("") if any. Like Tally, it is provisional.
func (r *Replica) TallyBy(ctx context.Context, spaceName string, mr dag.ID, by string) (TallyBreakdown, error) {
	if by != AttrRegion && by != AttrDensity {
		return TallyBreakdown{}, districtErr("by=%q: tallies break down by region or density only (D72)", trunc(by))
	}
	// What the House holds is copied out under the lock; the table is
	// read and the groups folded after, without holding up ingest.
	in, table, res, err := func() (house.PollInputs, dag.ID, rules.Result, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		sp, err := r.session(ctx, spaceName)
		if err != nil {
			return house.PollInputs{}, dag.ID{}, rules.Result{}, err
		}
		in, ok := sp.h.PollInputs(mr)
		if !ok {
			return in, dag.ID{}, rules.Result{}, fmt.Errorf("replica: MR %s: %w", mr, dag.ErrNotFound)
		}
		body := sp.h.SessionBody()
		if body == nil || !body.Districts.Valid() {
			return in, dag.ID{}, rules.Result{}, districtErr("the session declares no district attributes: by= is only for sessions with a districts table")
		}
		res, _ := sp.h.Tally(mr, rules.Context{})
		return in, body.Districts, res, nil
	}()
	if err != nil {
		return TallyBreakdown{}, err
	}
	raw, err := r.store.Object(ctx, table)
	if err != nil {
		return TallyBreakdown{}, fmt.Errorf("replica: district table %s: %w", table, err)
	}
	d, err := DecodeDistricts(raw)
	if err != nil {
		return TallyBreakdown{}, err
	}
	out := TallyBreakdown{MR: mr, By: by, Result: res, Finality: Provisional}
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
