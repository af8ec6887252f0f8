package dagtest

// A deliberately naive model of a dag.Store, to check the real stores
// against. It shares no code with dag.PlanBatch: a map of entries, and a
// loop over every pending entry repeated until nothing changes.

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/witan-dev/witan/dag"
)

// Reference is the model store: what a dag.Store must hold after a
// sequence of Puts, worked out by brute force. Put adds the batch's new
// entries as pending and then sweeps every pending entry, in id order,
// over and over until a sweep changes nothing: an entry with a parent
// quarantined in its space is quarantined (unknown_parent); an entry whose
// parents are all applied in its space is judged by Batch.Admit and applied
// (appended to its space's log), quarantined or held back. The indexes
// (heads, children, pending, missing) are computed from the entries each
// time they are asked for.
//
// It is quadratic or worse, keeps everything in memory, and is not safe
// for concurrent use: keep the DAGs small.
type Reference struct {
	entries map[dag.ID]refEntry
	logs    map[string][]dag.ID // per space, in the order of application
	objects map[dag.ID][]byte
}

type refEntry struct {
	dag.Entry
	status dag.Status
	rej    dag.Rejection
	// held: Admit held the entry back (ErrHold). It is judged again only
	// when it is put again.
	held bool
}

// NewReference returns an empty model store.
func NewReference() *Reference {
	return &Reference{
		entries: map[dag.ID]refEntry{},
		logs:    map[string][]dag.ID{},
		objects: map[dag.ID][]byte{},
	}
}

// Put applies b as dag.Putter.Put specifies, and returns what it did. On an
// error (a malformed entry or object, a conflict, an error without a code
// from b.Admit) it changes nothing.
//
// The Result's lists hold the right entries but not necessarily in a
// store's order: Applied is in the model's own order of application (a
// topological order, but not the planner's), and compare Duplicate as a
// set that may be larger than a store's: a pending entry put again whose
// parents were not all applied before the Put is listed there, and also in
// Applied if this Put promotes it, where a store may list it only in
// Applied.
func (r *Reference) Put(b dag.Batch) (dag.Result, error) {
	var res dag.Result
	for _, o := range b.Objects {
		if dag.Sum(o.Data) != o.ID {
			return res, fmt.Errorf("%w: %s", dag.ErrObjectMismatch, o.ID)
		}
	}
	inBatch := map[dag.ID]dag.Entry{}
	for _, e := range b.Entries {
		if err := e.Check(); err != nil {
			return res, err
		}
		if prev, ok := inBatch[e.ID]; ok && !prev.Equal(e) {
			return res, fmt.Errorf("%w: %s repeated", dag.ErrConflict, e.ID)
		}
		if held, ok := r.entries[e.ID]; ok && !held.Entry.Equal(e) {
			return res, fmt.Errorf("%w: %s", dag.ErrConflict, e.ID)
		}
		inBatch[e.ID] = e
	}

	// Work on copies, so that a failure changes nothing.
	entries := maps.Clone(r.entries)
	logs := make(map[string][]dag.ID, len(r.logs))
	for s, l := range r.logs {
		logs[s] = slices.Clone(l)
	}

	fresh := map[dag.ID]bool{}
	rejudged := map[dag.ID]bool{}
	seen := map[dag.ID]bool{}
	for _, e := range b.Entries {
		held, ok := entries[e.ID]
		switch {
		case seen[e.ID]:
			res.Duplicate = append(res.Duplicate, e.ID)
		case !ok:
			fresh[e.ID] = true
			entries[e.ID] = refEntry{Entry: e, status: dag.Pending}
		case held.status == dag.Pending && b.Admit != nil && allApplied(entries, held.Entry):
			// Held back by an earlier Admit: judged again.
			held.held = false
			entries[e.ID] = held
			rejudged[e.ID] = true
		default:
			res.Duplicate = append(res.Duplicate, e.ID)
		}
		seen[e.ID] = true
	}

	judged := map[dag.ID]bool{}
	for changed := true; changed; {
		changed = false
		for _, id := range sortedIDs(entries) {
			e := entries[id]
			if e.status != dag.Pending || e.held {
				continue
			}
			if bad, ok := quarantinedParent(entries, e.Entry); ok {
				e.status = dag.Quarantined
				e.rej = dag.Rejection{ID: id, Code: dag.CodeUnknownParent, Detail: "parent quarantined: " + bad.String()}
				entries[id] = e
				res.Quarantined = append(res.Quarantined, e.rej)
				changed = true
				continue
			}
			if !allApplied(entries, e.Entry) {
				continue
			}
			if judged[id] {
				continue // held back earlier in this Put
			}
			judged[id] = true
			if b.Admit != nil {
				if err := b.Admit(e.Entry); err != nil {
					switch {
					case errors.Is(err, dag.ErrHold):
						e.held = true
						entries[id] = e
						changed = true
						continue
					case dag.CodeOf(err) == "":
						return dag.Result{}, fmt.Errorf("dagtest: admit %s: %w", id, err)
					}
					e.status = dag.Quarantined
					e.rej = dag.Rejection{ID: id, Code: dag.CodeOf(err), Detail: dag.DetailOf(err)}
					entries[id] = e
					res.Quarantined = append(res.Quarantined, e.rej)
					changed = true
					continue
				}
			}
			e.status = dag.Applied
			entries[id] = e
			logs[e.Space] = append(logs[e.Space], id)
			res.Applied = append(res.Applied, id)
			changed = true
		}
	}
	for _, e := range b.Entries {
		if (fresh[e.ID] || rejudged[e.ID]) && entries[e.ID].status == dag.Pending {
			res.Pending = append(res.Pending, e.ID)
			delete(fresh, e.ID) // once, however often the batch repeats it
			delete(rejudged, e.ID)
		}
	}
	r.entries, r.logs = entries, logs
	for _, o := range b.Objects {
		r.objects[o.ID] = o.Data
	}
	return res, nil
}

// appliedIn reports whether id is applied in space.
func appliedIn(entries map[dag.ID]refEntry, id dag.ID, space string) bool {
	p, ok := entries[id]
	return ok && p.status == dag.Applied && p.Space == space
}

func allApplied(entries map[dag.ID]refEntry, e dag.Entry) bool {
	for _, p := range e.Parents {
		if !appliedIn(entries, p, e.Space) {
			return false
		}
	}
	return true
}

func quarantinedParent(entries map[dag.ID]refEntry, e dag.Entry) (dag.ID, bool) {
	for _, p := range e.Parents {
		if pe, ok := entries[p]; ok && pe.status == dag.Quarantined && pe.Space == e.Space {
			return p, true
		}
	}
	return dag.ID{}, false
}

func sortedIDs[V any](m map[dag.ID]V) []dag.ID {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// Has returns the status of id.
func (r *Reference) Has(id dag.ID) dag.Status {
	return r.entries[id].status // Absent for an id not held
}

// Get returns the entry held under id, in any status.
func (r *Reference) Get(id dag.ID) (dag.Entry, bool) {
	e, ok := r.entries[id]
	return e.Entry, ok
}

// Object returns the data of object id.
func (r *Reference) Object(id dag.ID) ([]byte, bool) {
	o, ok := r.objects[id]
	return o, ok
}

// Log returns the applied entries of space in the model's order of
// application: one linear extension of the space's DAG, not necessarily a
// store's.
func (r *Reference) Log(space string) []dag.ID {
	return slices.Clone(r.logs[space])
}

// Heads returns the applied entries of space that no applied entry lists
// as a parent, sorted.
func (r *Reference) Heads(space string) []dag.ID {
	out := []dag.ID{}
	for _, id := range r.logs[space] {
		if len(r.Children(id)) == 0 {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// Children returns the applied entries that list id as a parent, sorted.
func (r *Reference) Children(id dag.ID) []dag.ID {
	out := []dag.ID{}
	for _, c := range sortedIDs(r.entries) {
		if e := r.entries[c]; e.status == dag.Applied && slices.Contains(e.Parents, id) {
			out = append(out, c)
		}
	}
	return out
}

// Pending returns the pending entries of space, sorted.
func (r *Reference) Pending(space string) []dag.ID {
	return r.with(space, dag.Pending)
}

// Missing returns what the pending entries of space list as parents and
// the space does not hold applied or pending, sorted. A quarantined id is
// never missing (in another space: in the entry's own space the entry
// would be quarantined too).
func (r *Reference) Missing(space string) []dag.ID {
	set := map[dag.ID]bool{}
	for _, id := range r.Pending(space) {
		for _, p := range r.entries[id].Parents {
			pe, ok := r.entries[p]
			switch {
			case !ok:
				set[p] = true
			case pe.status == dag.Quarantined:
			case pe.Space != space:
				set[p] = true
			}
		}
	}
	return sortedIDs(set)
}

// Quarantine returns the quarantined entries of space with their
// rejections, sorted by id.
func (r *Reference) Quarantine(space string) []dag.Rejection {
	out := []dag.Rejection{}
	for _, id := range r.with(space, dag.Quarantined) {
		out = append(out, r.entries[id].rej)
	}
	return out
}

// Spaces returns the spaces with at least one entry, sorted.
func (r *Reference) Spaces() []string {
	set := map[string]bool{}
	for _, e := range r.entries {
		set[e.Space] = true
	}
	out := slices.Collect(maps.Keys(set))
	slices.Sort(out)
	return out
}

func (r *Reference) with(space string, st dag.Status) []dag.ID {
	out := []dag.ID{}
	for _, id := range sortedIDs(r.entries) {
		if e := r.entries[id]; e.status == st && e.Space == space {
			out = append(out, id)
		}
	}
	return out
}
