package replica

// The bound on entries waiting for parents. A peer may send entries whose
// parents it never produces; they wait in the store (pending), durably,
// and without a bound a flood of them from many peer ids fills the disk
// and slows every later sync. waiting charges each pending entry to the
// source that sent it and keeps at most so many per source, per space and
// in all, evicting the oldest first: the evicted entries are removed from
// the store (badgerstore.Store.DropPending), as if they had never come.
// Their bodies are then garbage of the store's value log: once so many
// bytes of them are dropped (Options.GCAfterDropped), the replica runs the
// store's value-log GC in the background, so that what a flood leaves on
// disk is bounded without an operator's schedule (docs/security.md).

import (
	"context"
	"errors"
	"slices"
	gosync "sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
)

// Defaults of the pending bounds (Options.PendingPerSource,
// PendingPerSpace, PendingMax).
const (
	DefaultPendingPerSource = 8192
	DefaultPendingPerSpace  = 65536
	DefaultPendingMax       = 262144
)

// DefaultGCAfterDropped is Options.GCAfterDropped's default: an eighth of
// one of the store's value-log files (badgerstore.DefaultValueLogFileSize).
// Badger's GC rewrites a file once its compactions have shown half of it
// to be garbage, and a GC that finds no such file costs next to nothing,
// so it is tried often: once every 32 MiB (half a file) left the disk at
// 122 MiB after BenchmarkSybilFlood's 350 peers, against 88 MiB for a GC
// after every 35 peers.
const DefaultGCAfterDropped = 8 << 20

// PendingStats counts the entries waiting for parents.
type PendingStats struct {
	// Held is the number of pending entries charged now.
	Held int `json:"held"`
	// Evicted counts the pending entries removed to stay within the
	// bounds since Open.
	Evicted uint64 `json:"evicted"`
	// Sources is the number of sources with pending entries.
	Sources int `json:"sources"`
	// DroppedBytes counts the bytes of the evicted entries (their
	// canonical envelopes; 0 for those found in the store at Open) since
	// Open; GCRuns the value-log GCs they started, GCRewritten the files
	// those rewrote.
	DroppedBytes uint64 `json:"dropped_bytes"`
	GCRuns       uint64 `json:"gc_runs"`
	GCRewritten  uint64 `json:"gc_rewritten"`
}

// dropper is a store that can remove pending entries (both of ours can).
type dropper interface {
	DropPending(ctx context.Context, space string, ids []dag.ID) (int, error)
}

type waitRec struct {
	id            dag.ID
	space, source string
	parents       []dag.ID // nil for entries found in the store at Open
	size          int      // bytes of its envelope; 0 for entries found at Open
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
	dropped                  uint64 // bytes of the evicted records
	gc                       *collector
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
	for _, x := range out {
		if x != nil {
			w.dropped += uint64(x.size)
		}
	}
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
	ps := PendingStats{Held: len(w.byID), Evicted: w.evicted, Sources: len(w.nSource), DroppedBytes: w.dropped}
	if w.gc != nil {
		ps.GCRuns, ps.GCRewritten = w.gc.runs.Load(), w.gc.rewritten.Load()
	}
	return ps
}

// gcStore is a store with a value-log GC (badgerstore.Store.GC).
type gcStore interface {
	GC(ctx context.Context) (int, error)
}

// collector runs the store's value-log GC in the background once enough
// bytes of dropped pending entries have become garbage: one GC at a time,
// stopped and waited for by Replica.Close.
type collector struct {
	after     uint64        // bytes dropped between two GCs
	since     uint64        // bytes dropped since the last GC started (Replica.mu)
	running   atomic.Bool   // a GC is under way
	stop      chan struct{} // closed by close
	wg        gosync.WaitGroup
	runs      atomic.Uint64
	rewritten atomic.Uint64
}

// collectDropped counts the bytes of recs, just removed from the store,
// and starts the store's value-log GC in the background once
// Options.GCAfterDropped of them have been dropped since the last one.
// Called with r.mu held.
func (r *Replica) collectDropped(recs []*waitRec) {
	c := r.wait.gc
	st, ok := r.store.(gcStore)
	if c == nil || !ok || r.closed {
		return
	}
	for _, x := range recs {
		if x != nil {
			c.since += uint64(x.size)
		}
	}
	if c.since < c.after || !c.running.CompareAndSwap(false, true) {
		return
	}
	c.since = 0
	c.wg.Add(1)
	log := r.log
	go func() {
		defer c.wg.Done()
		defer c.running.Store(false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-c.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		n, err := st.GC(ctx)
		c.runs.Add(1)
		c.rewritten.Add(uint64(n))
		// Rejected: another GC (witan up -gc-every's) is under way.
		if err != nil && ctx.Err() == nil && !errors.Is(err, badger.ErrRejected) {
			log.Warn("replica: value-log GC after dropped pending entries", "err", err)
		}
	}()
}

// close stops a GC under way and waits for it.
func (c *collector) close() {
	if c == nil {
		return
	}
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.wg.Wait()
}

func newCollector(after int64) *collector {
	if after == 0 {
		after = DefaultGCAfterDropped
	}
	if after < 0 {
		return nil
	}
	return &collector{after: uint64(after), stop: make(chan struct{})}
}

// ChargePending charges entries that the store holds pending in space, a
// space of the same store that the replica does not derive (a node's
// memory space), to source (as dag.SourceOf names it), under the same
// bounds as its sessions' pending entries: one charge sheet for the whole
// store. The entries it evicts to stay within the bounds, of any space,
// are removed from the store. MissingFrom then answers for space too.
// Call ReleasePending for those the store applies or refuses later.
func (r *Replica) ChargePending(ctx context.Context, space, source string, entries []dag.Entry) error {
	r.lock()
	defer r.mu.Unlock()
	var evicted []*waitRec
	for _, e := range entries {
		evicted = append(evicted, r.wait.add(&waitRec{id: e.ID, space: space, source: source, parents: slices.Clone(e.Parents), size: len(e.Data)})...)
	}
	return r.dropPending(ctx, evicted)
}

// ReleasePending removes from the charge sheet entries of a space charged
// through ChargePending that are no longer pending (applied or refused).
// Ids not charged are skipped.
func (r *Replica) ReleasePending(ids []dag.ID) {
	r.lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.wait.remove(id)
	}
}

// PendingFootprint is what the replica holds in memory for the entries
// waiting for parents, in records and slots: the charge sheet's records
// and the slots of its oldest-first queues (live and not yet compacted),
// and the pending-envelope cache's entries, bytes (by its own measure) and
// queue slots. Each is bounded by the pending bounds and the cache's size,
// whatever the number of sources that came and went; a test or a
// benchmark compares them across a flood (docs/security.md).
type PendingFootprint struct {
	Records      int `json:"records"`
	QueueSlots   int `json:"queue_slots"`
	QueueCap     int `json:"queue_cap"`
	Sources      int `json:"sources"`
	CacheItems   int `json:"cache_items"`
	CacheBytes   int `json:"cache_bytes"`
	CacheSlots   int `json:"cache_slots"`
	CacheSlotCap int `json:"cache_slot_cap"`
}

// PendingFootprint returns what the replica holds in memory for pending
// entries now.
func (r *Replica) PendingFootprint() PendingFootprint {
	r.lock()
	defer r.mu.Unlock()
	w := r.wait
	f := PendingFootprint{Records: len(w.byID), QueueSlots: len(w.all), QueueCap: cap(w.all), Sources: len(w.bySource)}
	for _, m := range []map[string][]*waitRec{w.bySource, w.bySpace} {
		for _, l := range m {
			f.QueueSlots += len(l)
			f.QueueCap += cap(l)
		}
	}
	c := r.pend
	f.CacheItems, f.CacheBytes, f.CacheSlots, f.CacheSlotCap = len(c.m), c.size, len(c.fifo), cap(c.fifo)
	return f
}
