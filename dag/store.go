package dag

// This file defines the Store: small interfaces that a backend composes,
// the entry model, and Plan, the causal bookkeeping every backend shares.
// The backends are MemStore (mem.go) and dag/badgerstore; both pass the
// conformance suite in dag/storetest.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// ErrNotFound is wrapped by every lookup of an id that a store or
// ParentSource does not hold. Test for it with errors.Is.
var ErrNotFound = errors.New("dag: not found")

// ErrConflict is wrapped by Put when a batch holds an entry whose id is
// already held (or repeated in the batch) with a different space, parents
// or data. Content-addressed ids make this a caller's bug or an attack.
var ErrConflict = errors.New("dag: entry conflicts with the entry already held under its id")

// ErrInvalidEntry is wrapped by Put for an entry that is malformed: zero id,
// empty space, zero or repeated parent, or itself among its parents.
var ErrInvalidEntry = errors.New("dag: invalid entry")

// ErrObjectMismatch is wrapped by Put for an object whose id is not the
// SHA-256 of its data.
var ErrObjectMismatch = errors.New("dag: object id is not the hash of its data")

// ErrHold is wrapped by a Batch.Admit error that cannot judge an entry
// yet (it names an object that has not arrived): the entry stays pending,
// its parents all applied, until it is put again, when it is judged again.
var ErrHold = errors.New("dag: entry held back by Admit")

// ErrUnheldSpace is wrapped by the error of an Index's Heads for a space
// of which no entry is applied, where the Index tells that apart from an
// empty answer (node.Node does: a space it does not hold is an error to
// its callers, not an empty list).
var ErrUnheldSpace = errors.New("dag: no applied entry of the space is held")

// HeadsOf is x.Heads with a space x holds nothing of (ErrUnheldSpace) as
// no heads: for sync, which pulls and answers spaces it holds nothing of
// yet.
func HeadsOf(ctx context.Context, x Index, space string) ([]ID, error) {
	hs, err := x.Heads(ctx, space)
	if errors.Is(err, ErrUnheldSpace) {
		return nil, nil
	}
	return hs, err
}

// Entry is a node of a space's causal DAG: a 30k envelope (ID = tx id,
// Parents = its parents) or a CAT7 memory block (ID = block hash, Parents =
// its lineage). Data is the entry's canonical bytes. The store does not
// recompute ID from Data: a memory block's id is not the hash of its bytes,
// so checking ids is the caller's duty (dag.DecodeEnvelope does it for
// envelopes).
type Entry struct {
	ID      ID
	Space   string
	Parents []ID
	Data    []byte
}

// Equal reports whether e and o are the same entry.
func (e Entry) Equal(o Entry) bool {
	return e.ID == o.ID && e.Space == o.Space && slices.Equal(e.Parents, o.Parents) && bytes.Equal(e.Data, o.Data)
}

// Check reports ErrInvalidEntry for a malformed entry.
func (e Entry) Check() error {
	switch {
	case !e.ID.Valid():
		return fmt.Errorf("%w: zero id", ErrInvalidEntry)
	case e.Space == "":
		return fmt.Errorf("%w: %s has an empty space", ErrInvalidEntry, e.ID)
	case len(e.Space) > MaxSpaceLen:
		return fmt.Errorf("%w: %s: space name is %d bytes, more than %d", ErrInvalidEntry, e.ID, len(e.Space), MaxSpaceLen)
	}
	for i, p := range e.Parents {
		if !p.Valid() {
			return fmt.Errorf("%w: %s has a zero parent", ErrInvalidEntry, e.ID)
		}
		if p == e.ID {
			return fmt.Errorf("%w: %s is its own parent", ErrInvalidEntry, e.ID)
		}
		if slices.Contains(e.Parents[:i], p) {
			return fmt.Errorf("%w: %s lists parent %s twice", ErrInvalidEntry, e.ID, p)
		}
	}
	return nil
}

// MaxSpaceLen bounds a space's name in bytes.
const MaxSpaceLen = 1024

// Object is a content-addressed blob that entries refer to (a change, an MR
// body, a rule text): its ID is the SHA-256 of Data, which Put checks.
type Object struct {
	ID   ID
	Data []byte
}

// NewObject returns the object holding data.
func NewObject(data []byte) Object { return Object{ID: Sum(data), Data: data} }

// Batch is what one Put commits atomically: all of it or none of it.
type Batch struct {
	Entries []Entry
	Objects []Object
	// Admit, when set, judges each entry right before the store applies
	// it: entries of the batch and pending entries this batch promotes,
	// in causal order, every parent already applied (and admitted). The
	// store, not the caller, knows when an entry's parents are all in, so
	// validation against the causal past has to happen here for entries
	// that waited. An error carrying a 30k code (CodeOf(err) != "") refuses
	// the entry: the store holds it as Quarantined with that code, in the
	// same transaction, and quarantines the entries waiting on it
	// (transitively). An error wrapping ErrHold keeps the entry pending
	// (and what waits on it) until it is put again. Any other error
	// without a code is an internal failure: the whole Put fails and
	// writes nothing. Admit is called under the
	// store's write lock: it may read committed objects (ObjectGetter;
	// the batch's own objects are not visible yet) but must not call any
	// other method of the store.
	Admit func(Entry) error
	// DropRefused, when true, keeps nothing of the entries this Put
	// refuses (Admit's refusals and the entries quarantined for a refused
	// or quarantined parent, pending ones included): they are reported in
	// Result.Quarantined but the store does not hold them afterwards
	// (Has says Absent). The caller keeps its own bounded record of them.
	DropRefused bool
	// KeepObject, when set, is asked for each object of Objects after
	// Admit has judged the batch's entries, and only those it returns true
	// for are written: attachments enter the store only with an entry
	// that needs them.
	KeepObject func(ID) bool
}

// Status is what a store holds of an entry.
type Status uint8

const (
	// Absent: the store does not hold the entry.
	Absent Status = iota
	// Pending: the store holds the entry, but some parent has not been
	// applied in its space yet. Pending entries are durable but are not in
	// the space's DAG: no index, head or log position sees them.
	Pending
	// Applied: the entry and all its ancestors are in the space's DAG.
	Applied
	// Quarantined: Batch.Admit refused the entry, or one of its parents
	// is quarantined. The store keeps it, with its code, so that it is
	// never judged again; it is not in the space's DAG.
	Quarantined
)

func (s Status) String() string {
	switch s {
	case Absent:
		return "absent"
	case Pending:
		return "pending"
	case Applied:
		return "applied"
	case Quarantined:
		return "quarantined"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Result says what a Put did with each entry of its batch.
type Result struct {
	// Applied lists the entries applied by this Put, in the order they
	// took their log positions: entries of the batch and pending entries
	// (of this or earlier batches) promoted because their parents landed.
	// Every entry comes after its parents.
	Applied []ID
	// Pending lists the entries of the batch that now wait for parents
	// or were held back by Batch.Admit (ErrHold).
	Pending []ID
	// Duplicate lists the entries of the batch that were already held
	// (applied, pending or quarantined) or repeated within the batch.
	Duplicate []ID
	// Quarantined lists the entries this Put quarantined, in the order it
	// judged them: entries of the batch and pending entries (of this or
	// earlier batches) that Batch.Admit refused or whose parent was
	// quarantined.
	Quarantined []Rejection
}

// Rejection is a quarantined entry with the reason: the 30k code and a
// detail for people.
type Rejection struct {
	ID     ID     `json:"id"`
	Code   Code   `json:"code"`
	Detail string `json:"detail"`
}

// rejection records a refusal by Batch.Admit.
func rejection(id ID, err error) Rejection {
	return Rejection{ID: id, Code: CodeOf(err), Detail: DetailOf(err)}
}

// DetailOf is err's message without its leading code: a ProtocolError
// prints "code: detail", and one wrapped in another with the same code
// repeats it. For records that carry the code in a field of their own
// (Rejection, receipts, problem+json).
func DetailOf(err error) string {
	c := CodeOf(err)
	d := err.Error()
	for p := string(c) + ": "; c != "" && strings.HasPrefix(d, p); {
		d = d[len(p):]
	}
	return d
}

// Getter reads applied entries.
type Getter interface {
	// Get returns the applied entry id. An entry the store does not hold,
	// or holds only as pending, returns an error wrapping ErrNotFound.
	Get(ctx context.Context, id ID) (Entry, error)
}

// Haser tells what the store holds of an entry.
type Haser interface {
	// Has returns the status of id (Applied, Pending or Quarantined); an
	// entry not held is Absent with a nil error.
	Has(ctx context.Context, id ID) (Status, error)
}

// ObjectGetter reads objects.
type ObjectGetter interface {
	// Object returns the data of object id, or an error wrapping
	// ErrNotFound when the store does not hold it.
	Object(ctx context.Context, id ID) ([]byte, error)
}

// Putter writes batches.
type Putter interface {
	// Put commits b atomically and durably: when it returns nil every
	// entry and object of b is held and survives a crash. Entries whose
	// parents are all applied in their space are applied (as are pending
	// entries this unblocks, transitively); the rest become pending.
	// Nothing is applied out of causal order. A malformed entry, an
	// object whose id is not its hash, a conflict (ErrConflict) or an
	// error without a code from b.Admit fails the whole batch and writes
	// nothing. Entries b.Admit refuses are quarantined (see Batch.Admit).
	// Putting an entry again (applied, pending or quarantined) is a no-op
	// reported in Result.Duplicate: a quarantined entry is never judged
	// again. The exception is a pending entry whose parents are all
	// applied (Admit held it back, ErrHold): putting it again judges it
	// again. Put keeps none of b's slices once it returns (as io.Writer
	// keeps no p): the caller may reuse them.
	Put(ctx context.Context, b Batch) (Result, error)
}

// Index reads the causal index of the applied entries.
type Index interface {
	// Parents returns the parents of applied entry id as it lists them,
	// or an error wrapping ErrNotFound when id is not applied.
	Parents(ctx context.Context, id ID) ([]ID, error)
	// Children returns the applied entries that list id as a parent,
	// sorted by id; an id with no children (or not held) has none.
	Children(ctx context.Context, id ID) ([]ID, error)
	// Heads returns the heads of space: its applied entries that no
	// applied entry lists as a parent, sorted by id. An unknown space has
	// no heads and no error, or, from an Index that tells it apart (a
	// node.Node), an error wrapping ErrUnheldSpace (HeadsOf reads it as
	// no heads).
	Heads(ctx context.Context, space string) ([]ID, error)
	// Position returns the log position of applied entry id in its space:
	// 1 for the first entry this replica applied there, then 2, 3, … in
	// the order of application, with no gaps. Positions are local to the
	// replica. An id not applied returns an error wrapping ErrNotFound.
	Position(ctx context.Context, id ID) (uint64, error)
	// Log returns up to limit applied entries of space in log order,
	// starting after position after (0 for the beginning). limit <= 0
	// means no limit.
	Log(ctx context.Context, space string, after uint64, limit int) ([]ID, error)
	// Pending returns the ids of the pending entries of space, sorted.
	Pending(ctx context.Context, space string) ([]ID, error)
	// Missing returns the ids that pending entries of space list as
	// parents but that the store holds neither applied nor pending in
	// that space, sorted: what sync must fetch. It never lists a
	// quarantined id.
	Missing(ctx context.Context, space string) ([]ID, error)
	// Quarantine returns the quarantined entries of space with their
	// codes, sorted by id; an unknown space has none and no error.
	Quarantine(ctx context.Context, space string) ([]Rejection, error)
	// Spaces returns the names of the spaces with at least one entry
	// (applied, pending or quarantined), sorted.
	Spaces(ctx context.Context) ([]string, error)
}

// Store is everything a replica needs from storage. Implementations are
// safe for concurrent use.
type Store interface {
	Getter
	Haser
	ObjectGetter
	Putter
	Index
	io.Closer
}

// ReadLog returns up to limit (0: all) applied entries of space in log
// order, starting after position after, as Log and then Get of each id
// would. A store that reads them in one go (a LogEntries method of that
// meaning, as dag/badgerstore's) is asked to.
func ReadLog(ctx context.Context, st interface {
	Getter
	Index
}, space string, after uint64, limit int) ([]Entry, error) {
	if lr, ok := st.(interface {
		LogEntries(ctx context.Context, space string, after uint64, limit int) ([]Entry, error)
	}); ok {
		return lr.LogEntries(ctx, space, after, limit)
	}
	ids, err := st.Log(ctx, space, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		e, err := st.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// SpaceOrder returns every applied entry of space in the deterministic
// topological order of TopoOrder. It holds the space's parent map in memory.
func SpaceOrder(ctx context.Context, x Index, space string) ([]ID, error) {
	heads, err := HeadsOf(ctx, x, space)
	if err != nil {
		return nil, err
	}
	return TopoOrder(ctx, Source(x), heads)
}

// PlanView is what Plan reads from a backend, inside the transaction that
// will commit the plan.
type PlanView interface {
	// Lookup returns the entry held under id and its status (Applied,
	// Pending or Quarantined), or Absent with a zero Entry and nil error.
	Lookup(id ID) (Entry, Status, error)
	// Waiting returns the pending entries of space that list parent among
	// their parents not yet applied.
	Waiting(space string, parent ID) ([]ID, error)
}

// Step is one entry of a Plan to apply.
type Step struct {
	Entry
	// WasPending is true when the backend holds the entry as pending and
	// must drop its pending record and waiting index.
	WasPending bool
}

// Waiter is an entry to hold as pending.
type Waiter struct {
	Entry
	// WaitsFor lists the parents not applied once the plan is: from now
	// on, Waiting(Space, p) must return the entry for each p here, until
	// the entry is applied.
	WaitsFor []ID
}

// Refusal is an entry of a Plan to quarantine.
type Refusal struct {
	Entry
	Rejection Rejection
	// WasPending is true when the backend holds the entry as pending and
	// must drop its pending record and waiting index.
	WasPending bool
}

// Plan is what a backend must write for one batch. Apply, Quarantine and
// Pending are disjoint.
type Plan struct {
	// Apply lists the entries to apply, each after its parents. For each,
	// in order, a backend writes the entry with the next log position of
	// its space, indexes it as a child of each parent, removes its parents
	// from the space's heads and adds it.
	Apply []Step
	// Pending lists the batch's entries to hold as pending.
	Pending []Waiter
	// Quarantine lists the entries to hold as quarantined, with their
	// rejections; the order does not matter.
	Quarantine []Refusal
	// Result is the Put result to return once the plan is committed.
	Result Result
	// Ready lists the pending entries that the plan found ready to decide
	// but left pending because it reached PlanResume's max.
	Ready []ID
}

// PlanBatch decides what a Put of b does, given the backend's current state
// v. It is the causal bookkeeping shared by every backend: a backend reads
// through v and writes the plan within one transaction. It fails, and the
// backend must write nothing, on a malformed entry or object, a conflict,
// or an error without a code from b.Admit.
//
// A parent counts as present only when it is applied in the entry's own
// space; an entry whose parent is held in another space stays pending. A
// parent counts as quarantined likewise only in the entry's own space: an
// entry with a quarantined parent is quarantined (unknown_parent) without
// being judged, whether it arrives before or after that parent.
func PlanBatch(b Batch, v PlanView) (*Plan, error) {
	return planBatch(b, v, nil, 0)
}

// PlanResume is PlanBatch for a backend that commits a long promotion in
// steps, so that neither a transaction nor the plan held in memory grows
// with it.
//
// ready lists pending entries whose parents are all applied, or one of
// them quarantined, that no Put decided: what a promotion cut off by a
// crash left, or what the previous step's Plan.Ready left (ids that are not
// such entries are skipped). The plan first decides them as a Put would
// have (b.Admit judges each, in causal order, then what it unblocks,
// transitively), then plans b. They are reported in Result.Applied or
// Result.Quarantined like any promoted pending entry; one that b.Admit
// holds back (ErrHold) stays pending, unreported.
//
// With max > 0 the plan decides at most max pending entries that are not
// in b (entries of b are always decided, a pending entry put again
// included): the ones it finds ready beyond that it leaves pending, in
// Plan.Ready, not judged. The backend writes the plan, then plans them with
// PlanResume(Batch{Admit: b.Admit}, v, plan.Ready, max), and so on until
// Plan.Ready is empty; an entry of b left waiting for one of them is
// pending in the first plan's Result and promoted in a later one.
func PlanResume(b Batch, v PlanView, ready []ID, max int) (*Plan, error) {
	return planBatch(b, v, ready, max)
}

// planner holds what planBatch knows while it decides one batch: the batch,
// the backend's view, and what this plan has decided so far (which shadows
// the view). Its methods are the steps of the decision; run drives them.
// State that a new rule needs (a bound on pending entries, say) belongs
// here as a field, and its check in the method that decides the entries it
// bounds (hold, for pending ones).
type planner struct {
	b      Batch
	v      PlanView
	resume []ID // PlanResume's ready list
	max    int  // PlanResume's max; 0 for no cap
	p      *Plan

	scratch *planScratch // where batch, fresh and applied come from, if pooled

	batch map[ID]int // fresh entries of the batch: id → index in b.Entries
	fresh []Entry    // entries of the batch not held before, in batch order
	retry []Entry    // pending entries put again
	own   map[ID]bool

	// passed and left count the pending entries decided and left for a
	// later plan under max (see capped).
	passed map[ID]bool
	left   map[ID]bool

	applied   map[ID]string    // applied by this plan: id → space
	refused   map[ID]string    // quarantined by this plan: id → space
	heldBack  map[ID]bool      // held back by Admit in this plan
	waitLocal map[waitKey][]ID // batch entries waiting for a parent
	seen      map[ID]heldState // parents looked up in the view (parentState)
	queue     []Step           // apply's queue, reused across calls
}

// waitKey names the entries of space that wait for parent.
type waitKey struct {
	space  string
	parent ID
}

func planBatch(b Batch, v PlanView, resume []ID, max int) (*Plan, error) {
	for _, o := range b.Objects {
		if Sum(o.Data) != o.ID {
			return nil, fmt.Errorf("%w: %s", ErrObjectMismatch, o.ID)
		}
	}
	pl := &planner{b: b, v: v, resume: resume, max: max, p: &Plan{}}
	defer pl.release()
	if err := pl.sort(); err != nil {
		return nil, err
	}
	if err := pl.run(); err != nil {
		return nil, err
	}
	return pl.p, nil
}

// planScratch is what a planner keeps only while it plans, sized by its
// batch: kept for the next plan rather than allocated for each (a fresh
// sync's Puts allocated some 330 bytes an entry for them).
type planScratch struct {
	batch   map[ID]int
	fresh   []Entry
	applied map[ID]string
}

// planScratches holds the scratch of plans of up to maxPlanScratch entries.
var planScratches = sync.Pool{New: func() any {
	return &planScratch{batch: map[ID]int{}, applied: map[ID]string{}}
}}

// maxPlanScratch bounds the batches whose scratch is kept (a map keeps the
// room it once took).
const maxPlanScratch = 1 << 14

// release gives the planner's scratch back, emptied.
func (pl *planner) release() {
	if pl.scratch == nil {
		return
	}
	sc := pl.scratch
	pl.scratch, pl.batch, pl.fresh, pl.applied = nil, nil, nil, nil
	clear(sc.batch)
	clear(sc.fresh[:cap(sc.fresh)]) // the entries' data
	sc.fresh = sc.fresh[:0]
	clear(sc.applied)
	planScratches.Put(sc)
}

// sort checks the batch's entries and sorts them: fresh ones, pending ones
// put again (retry), and duplicates, which go straight to the result.
func (pl *planner) sort() error {
	b, p := pl.b, pl.p
	if len(b.Entries) <= maxPlanScratch {
		pl.scratch = planScratches.Get().(*planScratch)
		pl.batch, pl.fresh = pl.scratch.batch, slices.Grow(pl.scratch.fresh, len(b.Entries))
		pl.scratch.fresh = pl.fresh
	} else {
		pl.batch = make(map[ID]int, len(b.Entries))
		pl.fresh = make([]Entry, 0, len(b.Entries))
	}
	for i, e := range b.Entries {
		if err := e.Check(); err != nil {
			return err
		}
		if j, ok := pl.batch[e.ID]; ok {
			if !b.Entries[j].Equal(e) {
				return fmt.Errorf("%w: %s is repeated in the batch with different content", ErrConflict, e.ID)
			}
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID)
			continue
		}
		held, st, err := pl.v.Lookup(e.ID)
		if err != nil {
			return err
		}
		if st != Absent {
			if !held.Equal(e) {
				return fmt.Errorf("%w: %s", ErrConflict, e.ID)
			}
			if st == Pending && (b.Admit != nil || pl.resume != nil) {
				// Judged again below if it was held back (or is to be
				// resumed).
				pl.retry = append(pl.retry, e)
				continue
			}
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID)
			continue
		}
		pl.batch[e.ID] = i
		pl.fresh = append(pl.fresh, e)
	}
	// own: pending entries put again, which count as the batch's.
	pl.own = make(map[ID]bool, len(pl.retry))
	for _, e := range pl.retry {
		pl.own[e.ID] = true
	}
	pl.passed = make(map[ID]bool)
	pl.left = make(map[ID]bool)
	p.Apply = make([]Step, 0, len(pl.fresh))
	p.Result.Applied = make([]ID, 0, len(pl.fresh))
	if pl.scratch != nil {
		pl.applied = pl.scratch.applied
	} else {
		pl.applied = make(map[ID]string, len(pl.fresh))
	}
	pl.refused = make(map[ID]string)
	pl.heldBack = make(map[ID]bool)
	pl.waitLocal = make(map[waitKey][]ID)
	return nil
}

// run decides, in this order, the resumed entries, the pending entries put
// again, and the fresh entries of the batch, then lists what stays pending.
func (pl *planner) run() error {
	p := pl.p
	for _, id := range pl.resume {
		if pl.decided(id) || pl.heldBack[id] {
			continue
		}
		e, st, err := pl.v.Lookup(id)
		if err != nil {
			return err
		}
		if st != Pending {
			continue
		}
		ok, bad, err := pl.ready(e)
		switch {
		case err != nil:
			return err
		case bad.Valid():
			err = pl.quarantine(e, true, parentRejection(e.ID, bad))
		case ok:
			err = pl.apply(e, true)
		}
		if err != nil {
			return err
		}
	}
	for _, e := range pl.retry {
		if pl.decided(e.ID) {
			continue // promoted by this batch
		}
		if ok, _, err := pl.ready(e); err != nil {
			return err
		} else if !ok {
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID) // still waits for a parent
			continue
		}
		if err := pl.apply(e, true); err != nil {
			return err
		}
		if pl.heldBack[e.ID] {
			p.Result.Pending = append(p.Result.Pending, e.ID)
		}
	}
	for _, e := range pl.fresh {
		if pl.decided(e.ID) || pl.heldBack[e.ID] {
			continue
		}
		ok, bad, err := pl.ready(e)
		if err != nil {
			return err
		}
		if bad.Valid() {
			if err := pl.quarantine(e, false, parentRejection(e.ID, bad)); err != nil {
				return err
			}
			continue
		}
		if ok {
			if err := pl.apply(e, false); err != nil {
				return err
			}
			continue
		}
		for _, par := range e.Parents {
			if ok, err := pl.isApplied(par, e.Space); err != nil {
				return err
			} else if !ok {
				k := waitKey{e.Space, par}
				pl.waitLocal[k] = append(pl.waitLocal[k], e.ID)
			}
		}
	}
	for _, e := range pl.fresh {
		if pl.decided(e.ID) {
			continue
		}
		if err := pl.hold(e); err != nil {
			return err
		}
	}
	return nil
}

// hold lists fresh entry e, which some parent keeps from being decided, as
// pending, with the parents it waits for.
func (pl *planner) hold(e Entry) error {
	w := Waiter{Entry: e}
	for _, par := range e.Parents {
		if ok, err := pl.isApplied(par, e.Space); err != nil {
			return err
		} else if !ok {
			w.WaitsFor = append(w.WaitsFor, par)
		}
	}
	pl.p.Pending = append(pl.p.Pending, w)
	pl.p.Result.Pending = append(pl.p.Result.Pending, e.ID)
	return nil
}

// capped reports whether the pending entry id, ready to be decided, is to
// be left for a later plan (PlanResume's max), and lists it in Plan.Ready
// then.
func (pl *planner) capped(id ID, wasPending bool) bool {
	if pl.max <= 0 || !wasPending || pl.own[id] || pl.passed[id] {
		return false
	}
	if len(pl.passed) < pl.max {
		pl.passed[id] = true
		return false
	}
	if !pl.left[id] {
		pl.left[id] = true
		pl.p.Ready = append(pl.p.Ready, id)
	}
	return true
}

// decided reports whether this plan applied or quarantined id.
func (pl *planner) decided(id ID) bool {
	_, a := pl.applied[id]
	_, q := pl.refused[id]
	return a || q
}

// isApplied reports whether id is applied in space, by this plan or before.
func (pl *planner) isApplied(id ID, space string) (bool, error) {
	applied, _, err := pl.parentState(id, space)
	return applied, err
}

// parentState reports whether id is applied, or quarantined, in space, by
// this plan or before. What the backend held before the plan is read once
// per id (seen): the view does not change while the plan is made, and
// what the plan decides is in applied and refused, read first.
func (pl *planner) parentState(id ID, space string) (applied, refused bool, err error) {
	if s, ok := pl.applied[id]; ok {
		return s == space, false, nil
	}
	if s, ok := pl.refused[id]; ok {
		return false, s == space, nil
	}
	h, ok := pl.seen[id]
	if !ok {
		e, st, err := pl.v.Lookup(id)
		if err != nil {
			return false, false, err
		}
		h = heldState{space: e.Space, st: st}
		if pl.seen == nil {
			pl.seen = make(map[ID]heldState)
		}
		pl.seen[id] = h
	}
	return h.st == Applied && h.space == space, h.st == Quarantined && h.space == space, nil
}

// heldState is what the backend held of an id before the plan.
type heldState struct {
	space string
	st    Status
}

// ready reports whether every parent of e is applied, or names a
// quarantined parent (the first in e's order), which dooms e.
func (pl *planner) ready(e Entry) (ok bool, bad ID, err error) {
	ok = true
	for _, par := range e.Parents {
		a, q, err := pl.parentState(par, e.Space)
		if err != nil || q {
			return false, par, err
		}
		if !a {
			ok = false
		}
	}
	return ok, ID{}, nil
}

// candidate returns a waiter of a just decided entry: from the batch, or
// held as pending (was); ok is false when it is neither.
func (pl *planner) candidate(c ID) (ce Entry, was, ok bool, err error) {
	if j, inBatch := pl.batch[c]; inBatch {
		return pl.b.Entries[j], false, true, nil
	}
	ce, st, err := pl.v.Lookup(c)
	if err != nil || st != Pending {
		return Entry{}, false, false, err
	}
	return ce, true, true, nil
}

// waiters returns the entries of space waiting for id, from the batch and
// from the backend, sorted and without repeats.
func (pl *planner) waiters(space string, id ID) ([]ID, error) {
	stored, err := pl.v.Waiting(space, id)
	if err != nil {
		return nil, err
	}
	local := pl.waitLocal[waitKey{space, id}]
	if len(local)+len(stored) == 0 {
		return nil, nil // the usual case: nothing waits for id
	}
	cands := append(slices.Clone(local), stored...)
	slices.SortFunc(cands, ID.Compare)
	return slices.Compact(cands), nil
}

// eachWaiter calls fn, in id order, for each entry of space waiting for id
// that is not decided yet (checked just before each call, since fn may
// decide later ones), from the batch or held as pending (was).
func (pl *planner) eachWaiter(space string, id ID, fn func(ce Entry, was bool) error) error {
	cands, err := pl.waiters(space, id)
	if err != nil {
		return err
	}
	for _, c := range cands {
		if pl.decided(c) {
			continue
		}
		ce, was, ok, err := pl.candidate(c)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := fn(ce, was); err != nil {
			return err
		}
	}
	return nil
}

// quarantine refuses e and then, breadth first, every entry waiting for it,
// transitively: they can never be applied.
func (pl *planner) quarantine(e Entry, wasPending bool, rej Rejection) error {
	q := []Refusal{{Entry: e, Rejection: rej, WasPending: wasPending}}
	for i := 0; i < len(q); i++ {
		r := q[i]
		if pl.decided(r.ID) || pl.capped(r.ID, r.WasPending) {
			continue
		}
		pl.refused[r.ID] = r.Space
		pl.p.Quarantine = append(pl.p.Quarantine, r)
		pl.p.Result.Quarantined = append(pl.p.Result.Quarantined, r.Rejection)
		err := pl.eachWaiter(r.Space, r.ID, func(ce Entry, was bool) error {
			q = append(q, Refusal{Entry: ce, WasPending: was, Rejection: parentRejection(ce.ID, r.ID)})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// apply judges e (Batch.Admit) and applies it and then, breadth first,
// every waiting entry this makes ready (an explicit queue: promotion chains
// can be long).
func (pl *planner) apply(e Entry, wasPending bool) error {
	pl.queue = append(pl.queue[:0], Step{Entry: e, WasPending: wasPending})
	for i := 0; i < len(pl.queue); i++ {
		s := pl.queue[i]
		if pl.decided(s.ID) || pl.heldBack[s.ID] || pl.capped(s.ID, s.WasPending) {
			continue
		}
		if pl.b.Admit != nil {
			if err := pl.b.Admit(s.Entry); err != nil {
				if errors.Is(err, ErrHold) {
					pl.heldBack[s.ID] = true
					continue
				}
				if CodeOf(err) == "" {
					return fmt.Errorf("dag: admit %s: %w", s.ID, err)
				}
				if err := pl.quarantine(s.Entry, s.WasPending, rejection(s.ID, err)); err != nil {
					return err
				}
				continue
			}
		}
		pl.applied[s.ID] = s.Space
		pl.p.Apply = append(pl.p.Apply, s)
		pl.p.Result.Applied = append(pl.p.Result.Applied, s.ID)
		err := pl.eachWaiter(s.Space, s.ID, func(ce Entry, was bool) error {
			ok, bad, err := pl.ready(ce)
			switch {
			case err != nil:
				return err
			case bad.Valid():
				return pl.quarantine(ce, was, parentRejection(ce.ID, bad))
			case ok:
				pl.queue = append(pl.queue, Step{Entry: ce, WasPending: was})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func parentRejection(id, parent ID) Rejection {
	return Rejection{ID: id, Code: CodeUnknownParent, Detail: "parent quarantined: " + parent.String()}
}
