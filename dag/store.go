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
	// again.
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
	// no heads and no error.
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

// SpaceOrder returns every applied entry of space in the deterministic
// topological order of TopoOrder. It holds the space's parent map in memory.
func SpaceOrder(ctx context.Context, x Index, space string) ([]ID, error) {
	heads, err := x.Heads(ctx, space)
	if err != nil {
		return nil, err
	}
	return TopoOrder(Source(ctx, x), heads)
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

func planBatch(b Batch, v PlanView, resume []ID, max int) (*Plan, error) {
	for _, o := range b.Objects {
		if Sum(o.Data) != o.ID {
			return nil, fmt.Errorf("%w: %s", ErrObjectMismatch, o.ID)
		}
	}
	p := &Plan{}
	type key struct {
		space  string
		parent ID
	}
	batch := make(map[ID]int, len(b.Entries)) // id → index in b.Entries
	fresh := make([]Entry, 0, len(b.Entries))
	var retry []Entry // pending entries put again
	for i, e := range b.Entries {
		if err := e.Check(); err != nil {
			return nil, err
		}
		if j, ok := batch[e.ID]; ok {
			if !b.Entries[j].Equal(e) {
				return nil, fmt.Errorf("%w: %s is repeated in the batch with different content", ErrConflict, e.ID)
			}
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID)
			continue
		}
		held, st, err := v.Lookup(e.ID)
		if err != nil {
			return nil, err
		}
		if st != Absent {
			if !held.Equal(e) {
				return nil, fmt.Errorf("%w: %s", ErrConflict, e.ID)
			}
			if st == Pending && (b.Admit != nil || resume != nil) {
				// Judged again below if it was held back (or is to be
				// resumed).
				retry = append(retry, e)
				continue
			}
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID)
			continue
		}
		batch[e.ID] = i
		fresh = append(fresh, e)
	}

	// own: pending entries put again, which count as the batch's.
	own := make(map[ID]bool, len(retry))
	for _, e := range retry {
		own[e.ID] = true
	}
	// capped reports whether the pending entry id, ready to be decided,
	// is to be left for a later plan (PlanResume's max), and lists it in
	// p.Ready then.
	passed := make(map[ID]bool)
	left := make(map[ID]bool)
	capped := func(id ID, wasPending bool) bool {
		if max <= 0 || !wasPending || own[id] || passed[id] {
			return false
		}
		if len(passed) < max {
			passed[id] = true
			return false
		}
		if !left[id] {
			left[id] = true
			p.Ready = append(p.Ready, id)
		}
		return true
	}
	p.Apply = make([]Step, 0, len(fresh))
	p.Result.Applied = make([]ID, 0, len(fresh))
	applied := make(map[ID]string, len(fresh)) // applied by this plan: id → space
	refused := make(map[ID]string)             // quarantined by this plan: id → space
	heldBack := make(map[ID]bool)              // held back by Admit in this plan
	waitLocal := make(map[key][]ID)            // batch entries waiting for a parent
	decided := func(id ID) bool {
		_, a := applied[id]
		_, q := refused[id]
		return a || q
	}
	isApplied := func(id ID, space string) (bool, error) {
		if s, ok := applied[id]; ok {
			return s == space, nil
		}
		if _, ok := refused[id]; ok {
			return false, nil
		}
		e, st, err := v.Lookup(id)
		return st == Applied && e.Space == space, err
	}
	isRefused := func(id ID, space string) (bool, error) {
		if s, ok := refused[id]; ok {
			return s == space, nil
		}
		if _, ok := applied[id]; ok {
			return false, nil
		}
		e, st, err := v.Lookup(id)
		return st == Quarantined && e.Space == space, err
	}
	// ready reports whether every parent of e is applied, or names a
	// quarantined parent (the first in e's order), which dooms e.
	ready := func(e Entry) (ok bool, bad ID, err error) {
		ok = true
		for _, par := range e.Parents {
			if q, err := isRefused(par, e.Space); err != nil || q {
				return false, par, err
			}
			if a, err := isApplied(par, e.Space); err != nil {
				return false, ID{}, err
			} else if !a {
				ok = false
			}
		}
		return ok, ID{}, nil
	}
	// candidate returns a waiter of a just decided entry: from the batch,
	// or held as pending (was); ok is false when it is neither.
	candidate := func(c ID) (ce Entry, was, ok bool, err error) {
		if j, inBatch := batch[c]; inBatch {
			return b.Entries[j], false, true, nil
		}
		ce, st, err := v.Lookup(c)
		if err != nil || st != Pending {
			return Entry{}, false, false, err
		}
		return ce, true, true, nil
	}
	waiters := func(space string, id ID) ([]ID, error) {
		stored, err := v.Waiting(space, id)
		if err != nil {
			return nil, err
		}
		local := waitLocal[key{space, id}]
		if len(local)+len(stored) == 0 {
			return nil, nil // the usual case: nothing waits for id
		}
		cands := append(slices.Clone(local), stored...)
		slices.SortFunc(cands, ID.Compare)
		return slices.Compact(cands), nil
	}
	// eachWaiter calls fn, in id order, for each entry of space waiting for
	// id that is not decided yet (checked just before each call, since fn
	// may decide later ones), from the batch or held as pending (was).
	eachWaiter := func(space string, id ID, fn func(ce Entry, was bool) error) error {
		cands, err := waiters(space, id)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if decided(c) {
				continue
			}
			ce, was, ok, err := candidate(c)
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
	// quarantine refuses e and then, breadth first, every entry waiting
	// for it, transitively: they can never be applied.
	quarantine := func(e Entry, wasPending bool, rej Rejection) error {
		q := []Refusal{{Entry: e, Rejection: rej, WasPending: wasPending}}
		for i := 0; i < len(q); i++ {
			r := q[i]
			if decided(r.ID) || capped(r.ID, r.WasPending) {
				continue
			}
			refused[r.ID] = r.Space
			p.Quarantine = append(p.Quarantine, r)
			p.Result.Quarantined = append(p.Result.Quarantined, r.Rejection)
			err := eachWaiter(r.Space, r.ID, func(ce Entry, was bool) error {
				q = append(q, Refusal{Entry: ce, WasPending: was, Rejection: parentRejection(ce.ID, r.ID)})
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	// apply judges e (b.Admit) and applies it and then, breadth first,
	// every waiting entry this makes ready (an explicit queue: promotion
	// chains can be long).
	var queue []Step // reused across calls
	apply := func(e Entry, wasPending bool) error {
		queue = append(queue[:0], Step{Entry: e, WasPending: wasPending})
		for i := 0; i < len(queue); i++ {
			s := queue[i]
			if decided(s.ID) || heldBack[s.ID] || capped(s.ID, s.WasPending) {
				continue
			}
			if b.Admit != nil {
				if err := b.Admit(s.Entry); err != nil {
					if errors.Is(err, ErrHold) {
						heldBack[s.ID] = true
						continue
					}
					if CodeOf(err) == "" {
						return fmt.Errorf("dag: admit %s: %w", s.ID, err)
					}
					if err := quarantine(s.Entry, s.WasPending, rejection(s.ID, err)); err != nil {
						return err
					}
					continue
				}
			}
			applied[s.ID] = s.Space
			p.Apply = append(p.Apply, s)
			p.Result.Applied = append(p.Result.Applied, s.ID)
			err := eachWaiter(s.Space, s.ID, func(ce Entry, was bool) error {
				ok, bad, err := ready(ce)
				switch {
				case err != nil:
					return err
				case bad.Valid():
					return quarantine(ce, was, parentRejection(ce.ID, bad))
				case ok:
					queue = append(queue, Step{Entry: ce, WasPending: was})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, id := range resume {
		if decided(id) || heldBack[id] {
			continue
		}
		e, st, err := v.Lookup(id)
		if err != nil {
			return nil, err
		}
		if st != Pending {
			continue
		}
		ok, bad, err := ready(e)
		switch {
		case err != nil:
			return nil, err
		case bad.Valid():
			err = quarantine(e, true, parentRejection(e.ID, bad))
		case ok:
			err = apply(e, true)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, e := range retry {
		if decided(e.ID) {
			continue // promoted by this batch
		}
		if ok, _, err := ready(e); err != nil {
			return nil, err
		} else if !ok {
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID) // still waits for a parent
			continue
		}
		if err := apply(e, true); err != nil {
			return nil, err
		}
		if heldBack[e.ID] {
			p.Result.Pending = append(p.Result.Pending, e.ID)
		}
	}
	for _, e := range fresh {
		if decided(e.ID) || heldBack[e.ID] {
			continue
		}
		ok, bad, err := ready(e)
		if err != nil {
			return nil, err
		}
		if bad.Valid() {
			if err := quarantine(e, false, parentRejection(e.ID, bad)); err != nil {
				return nil, err
			}
			continue
		}
		if ok {
			if err := apply(e, false); err != nil {
				return nil, err
			}
			continue
		}
		for _, par := range e.Parents {
			if ok, err := isApplied(par, e.Space); err != nil {
				return nil, err
			} else if !ok {
				k := key{e.Space, par}
				waitLocal[k] = append(waitLocal[k], e.ID)
			}
		}
	}
	for _, e := range fresh {
		if decided(e.ID) {
			continue
		}
		w := Waiter{Entry: e}
		for _, par := range e.Parents {
			if ok, err := isApplied(par, e.Space); err != nil {
				return nil, err
			} else if !ok {
				w.WaitsFor = append(w.WaitsFor, par)
			}
		}
		p.Pending = append(p.Pending, w)
		p.Result.Pending = append(p.Result.Pending, e.ID)
	}
	return p, nil
}

func parentRejection(id, parent ID) Rejection {
	return Rejection{ID: id, Code: CodeUnknownParent, Detail: "parent quarantined: " + parent.String()}
}
