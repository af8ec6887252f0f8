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
)

func (s Status) String() string {
	switch s {
	case Absent:
		return "absent"
	case Pending:
		return "pending"
	case Applied:
		return "applied"
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
	// Pending lists the entries of the batch that now wait for parents.
	Pending []ID
	// Duplicate lists the entries of the batch that were already held
	// (applied or pending) or repeated within the batch.
	Duplicate []ID
}

// Getter reads applied entries.
type Getter interface {
	// Get returns the applied entry id. An entry the store does not hold,
	// or holds only as pending, returns an error wrapping ErrNotFound.
	Get(ctx context.Context, id ID) (Entry, error)
}

// Haser tells what the store holds of an entry.
type Haser interface {
	// Has returns the status of id; an entry not held is Absent with a nil
	// error.
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
	// object whose id is not its hash, or a conflict (ErrConflict) fails
	// the whole batch and writes nothing. Putting an entry again is a
	// no-op reported in Result.Duplicate.
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
	// that space, sorted: what sync must fetch.
	Missing(ctx context.Context, space string) ([]ID, error)
	// Spaces returns the names of the spaces with at least one entry
	// (applied or pending), sorted.
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
	// Lookup returns the entry held under id and its status (Applied or
	// Pending), or Absent with a zero Entry and nil error.
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

// Plan is what a backend must write for one batch.
type Plan struct {
	// Apply lists the entries to apply, each after its parents. For each,
	// in order, a backend writes the entry with the next log position of
	// its space, indexes it as a child of each parent, removes its parents
	// from the space's heads and adds it.
	Apply []Step
	// Pending lists the batch's entries to hold as pending.
	Pending []Waiter
	// Result is the Put result to return once the plan is committed.
	Result Result
}

// PlanBatch decides what a Put of b does, given the backend's current state
// v. It is the causal bookkeeping shared by every backend: a backend reads
// through v and writes the plan within one transaction. It fails, and the
// backend must write nothing, on a malformed entry or object or a conflict.
//
// A parent counts as present only when it is applied in the entry's own
// space; an entry whose parent is held in another space stays pending.
func PlanBatch(b Batch, v PlanView) (*Plan, error) {
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
			p.Result.Duplicate = append(p.Result.Duplicate, e.ID)
			continue
		}
		batch[e.ID] = i
		fresh = append(fresh, e)
	}

	p.Apply = make([]Step, 0, len(fresh))
	p.Result.Applied = make([]ID, 0, len(fresh))
	applied := make(map[ID]string, len(fresh)) // applied by this plan: id → space
	waitLocal := make(map[key][]ID)            // batch entries waiting for a parent
	isApplied := func(id ID, space string) (bool, error) {
		if s, ok := applied[id]; ok {
			return s == space, nil
		}
		e, st, err := v.Lookup(id)
		return st == Applied && e.Space == space, err
	}
	ready := func(e Entry) (bool, error) {
		for _, par := range e.Parents {
			ok, err := isApplied(par, e.Space)
			if !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	}
	// apply applies e and then, breadth first, every waiting entry this
	// makes ready (an explicit queue: promotion chains can be long).
	var queue []Step // reused across calls
	apply := func(e Entry, wasPending bool) error {
		queue = append(queue[:0], Step{Entry: e, WasPending: wasPending})
		for i := 0; i < len(queue); i++ {
			s := queue[i]
			if _, done := applied[s.ID]; done {
				continue
			}
			applied[s.ID] = s.Space
			p.Apply = append(p.Apply, s)
			p.Result.Applied = append(p.Result.Applied, s.ID)
			stored, err := v.Waiting(s.Space, s.ID)
			if err != nil {
				return err
			}
			local := waitLocal[key{s.Space, s.ID}]
			if len(local)+len(stored) == 0 {
				continue // the usual case: nothing waits for s
			}
			cands := append(slices.Clone(local), stored...)
			slices.SortFunc(cands, ID.Compare)
			cands = slices.Compact(cands)
			for _, c := range cands {
				if _, done := applied[c]; done {
					continue
				}
				j, inBatch := batch[c]
				var ce Entry
				if inBatch {
					ce = b.Entries[j]
				}
				was := false
				if !inBatch {
					var st Status
					if ce, st, err = v.Lookup(c); err != nil {
						return err
					}
					if st != Pending {
						continue
					}
					was = true
				}
				ok, err := ready(ce)
				if err != nil {
					return err
				}
				if ok {
					queue = append(queue, Step{Entry: ce, WasPending: was})
				}
			}
		}
		return nil
	}
	for _, e := range fresh {
		if _, done := applied[e.ID]; done {
			continue
		}
		ok, err := ready(e)
		if err != nil {
			return nil, err
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
		if _, done := applied[e.ID]; done {
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
