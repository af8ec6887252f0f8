package replica

// The bound on entries waiting for parents. A peer may send entries whose
// parents it never produces; they wait in the store (pending), durably,
// and without a bound a flood of them from many peer ids fills the disk
// and slows every later sync. waiting charges each pending entry to the
// source that sent it and keeps at most so many per source, per space and
// in all, evicting the oldest first: the evicted entries are removed from
// the store (badgerstore.Store.DropPending), as if they had never come.

import (
	"context"
	"slices"

	"github.com/witan-dev/witan/dag"
)

// Defaults of the pending bounds (Options.PendingPerSource,
// PendingPerSpace, PendingMax).
const (
	DefaultPendingPerSource = 8192
	DefaultPendingPerSpace  = 65536
	DefaultPendingMax       = 262144
)

// PendingStats counts the entries waiting for parents.
type PendingStats struct {
	// Held is the number of pending entries charged now.
	Held int `json:"held"`
	// Evicted counts the pending entries removed to stay within the
	// bounds since Open.
	Evicted uint64 `json:"evicted"`
	// Sources is the number of sources with pending entries.
	Sources int `json:"sources"`
}

// dropper is a store that can remove pending entries (both of ours can).
type dropper interface {
	DropPending(ctx context.Context, space string, ids []dag.ID) (int, error)
}

type waitRec struct {
	id            dag.ID
	space, source string
	parents       []dag.ID // nil for entries found in the store at Open
}

// waiting is the charge sheet of pending entries. Not safe for concurrent
// use (the Replica's mutex guards it).
type waiting struct {
	perSource, perSpace, max int
	byID                     map[dag.ID]*waitRec
	bySource, bySpace        map[string][]*waitRec // oldest first; stale records skipped
	nSource, nSpace          map[string]int
	all                      []*waitRec
	evicted                  uint64
}

func newWaiting(perSource, perSpace, max int) *waiting {
	if perSource <= 0 {
		perSource = DefaultPendingPerSource
	}
	if perSpace <= 0 {
		perSpace = DefaultPendingPerSpace
	}
	if max <= 0 {
		max = DefaultPendingMax
	}
	return &waiting{perSource: perSource, perSpace: perSpace, max: max, byID: map[dag.ID]*waitRec{},
		bySource: map[string][]*waitRec{}, bySpace: map[string][]*waitRec{}, nSource: map[string]int{}, nSpace: map[string]int{}}
}

func (w *waiting) live(r *waitRec) bool { return w.byID[r.id] == r }

// add charges a pending entry and returns the records it evicts to stay
// within the bounds (possibly of other spaces or sources).
func (w *waiting) add(r *waitRec) []*waitRec {
	if w.byID[r.id] != nil {
		return nil
	}
	w.byID[r.id] = r
	w.bySource[r.source] = append(w.bySource[r.source], r)
	w.bySpace[r.space] = append(w.bySpace[r.space], r)
	w.all = append(w.all, r)
	w.nSource[r.source]++
	w.nSpace[r.space]++
	var out []*waitRec
	for w.nSource[r.source] > w.perSource {
		out = append(out, w.evict(w.bySource, r.source))
	}
	for w.nSpace[r.space] > w.perSpace {
		out = append(out, w.evict(w.bySpace, r.space))
	}
	for len(w.byID) > w.max {
		out = append(out, w.evictAll())
	}
	w.evicted += uint64(len(out))
	return out
}

// evict removes the oldest live record of list m[k].
func (w *waiting) evict(m map[string][]*waitRec, k string) *waitRec {
	l := m[k]
	for i, x := range l {
		if w.live(x) {
			m[k] = l[i+1:]
			w.remove(x.id)
			return x
		}
	}
	return nil // counts say there is one
}

func (w *waiting) evictAll() *waitRec {
	for i, x := range w.all {
		if w.live(x) {
			w.all = w.all[i+1:]
			w.remove(x.id)
			return x
		}
	}
	return nil
}

// remove forgets id (applied, refused or evicted).
func (w *waiting) remove(id dag.ID) {
	r := w.byID[id]
	if r == nil {
		return
	}
	delete(w.byID, id)
	w.nSource[r.source]--
	w.nSpace[r.space]--
	if w.nSource[r.source] == 0 {
		delete(w.nSource, r.source)
		delete(w.bySource, r.source)
	} else {
		w.bySource[r.source] = compactRecs(w, w.bySource[r.source], w.nSource[r.source])
	}
	if w.nSpace[r.space] == 0 {
		delete(w.nSpace, r.space)
		delete(w.bySpace, r.space)
	} else {
		w.bySpace[r.space] = compactRecs(w, w.bySpace[r.space], w.nSpace[r.space])
	}
	if len(w.all) > 64 && len(w.all) > 2*len(w.byID) {
		w.all = compactRecs(w, w.all, 0)
	}
}

// compactRecs drops stale records from l once they are most of it.
func compactRecs(w *waiting, l []*waitRec, live int) []*waitRec {
	if len(l) > 64 && len(l) > 2*live {
		return slices.DeleteFunc(l, func(x *waitRec) bool { return !w.live(x) })
	}
	return l
}

// missingFrom returns the parents, not held, of the pending entries of
// space charged to source, sorted: what to ask that source for.
func (w *waiting) missingFrom(ctx context.Context, st dag.Haser, q *quarantine, space, source string) ([]dag.ID, error) {
	seen := map[dag.ID]bool{}
	var out []dag.ID
	for _, r := range w.bySource[source] {
		if !w.live(r) || r.space != space {
			continue
		}
		for _, p := range r.parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			if _, refused := q.get(p); refused || w.byID[p] != nil {
				continue
			}
			s, err := st.Has(ctx, p)
			if err != nil {
				return nil, err
			}
			if s == dag.Absent {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out, nil
}

func (w *waiting) stats() PendingStats {
	return PendingStats{Held: len(w.byID), Evicted: w.evicted, Sources: len(w.nSource)}
}

// ChargePending charges entries that the store holds pending in space, a
// space of the same store that the replica does not derive (a node's
// memory space), to source (as dag.SourceOf names it), under the same
// bounds as its sessions' pending entries: one charge sheet for the whole
// store. The entries it evicts to stay within the bounds, of any space,
// are removed from the store. MissingFrom then answers for space too.
// Call ReleasePending for those the store applies or refuses later.
func (r *Replica) ChargePending(ctx context.Context, space, source string, entries []dag.Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var evicted []*waitRec
	for _, e := range entries {
		evicted = append(evicted, r.wait.add(&waitRec{id: e.ID, space: space, source: source, parents: slices.Clone(e.Parents)})...)
	}
	return r.dropPending(ctx, evicted)
}

// ReleasePending removes from the charge sheet entries of a space charged
// through ChargePending that are no longer pending (applied or refused).
// Ids not charged are skipped.
func (r *Replica) ReleasePending(ids []dag.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.wait.remove(id)
	}
}
