package dag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// ErrClosed is wrapped by every method of a closed store.
var ErrClosed = errors.New("dag: store is closed")

// MemStore is a Store held in memory: for tests, for short-lived tools and
// as the reference the Badger store is checked against. Nothing survives
// the process. It is safe for concurrent use; the zero value is not, use
// NewMemStore.
type MemStore struct {
	mu       sync.RWMutex
	closed   atomic.Bool
	entries  map[ID]*memEntry
	spaces   map[string]*memSpace
	children map[ID][]ID // children after the first (memEntry.child)
	// data and ids hold the entries' bytes and parents in shared chunks,
	// so that keeping an entry allocates nothing of its own: fewer
	// objects for the collector to mark and sweep.
	data []byte
	ids  []ID
	// objects has its own lock so that a Batch.Admit hook, which runs
	// under mu, can read objects as it can from the Badger store.
	objMu   sync.RWMutex
	objects map[ID][]byte
}

type memEntry struct {
	Entry
	status Status
	pos    uint64
	child  ID        // the first applied child (most entries have one)
	rej    Rejection // when quarantined
}

type memSpace struct {
	heads   map[ID]struct{}
	log     []*memEntry // the applied entries in log order
	pending map[ID]struct{}
	waits   map[ID]map[ID]struct{} // parent → pending entries waiting for it
	quar    map[ID]struct{}
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore {
	return &MemStore{
		entries:  make(map[ID]*memEntry),
		spaces:   make(map[string]*memSpace),
		children: make(map[ID][]ID),
		objects:  make(map[ID][]byte),
	}
}

func (m *MemStore) space(name string) *memSpace {
	s := m.spaces[name]
	if s == nil {
		s = &memSpace{heads: map[ID]struct{}{}, pending: map[ID]struct{}{}, waits: map[ID]map[ID]struct{}{}, quar: map[ID]struct{}{}}
		m.spaces[name] = s
	}
	return s
}

func cloneEntry(e Entry) Entry {
	e.Parents = slices.Clone(e.Parents)
	e.Data = slices.Clone(e.Data)
	return e
}

// Sizes of the chunks that keep copies entries' bytes and parents.
const (
	memDataChunk = 256 << 10
	memIDChunk   = 4096
)

// keep returns a copy of e whose Data and Parents are in the store's
// chunks. Call with mu held.
func (m *MemStore) keep(e Entry) Entry {
	e.Data = chunked(&m.data, e.Data, memDataChunk)
	e.Parents = chunked(&m.ids, e.Parents, memIDChunk)
	return e
}

// chunked returns a copy of s appended to *chunk (a new chunk of size
// when the last is full), as a full slice, so that appending to the copy
// cannot reach a neighbour. Empty slices, and those over a quarter of a
// chunk, are cloned on their own.
func chunked[T any](chunk *[]T, s []T, size int) []T {
	n := len(s)
	if n == 0 || n > size/4 {
		return slices.Clone(s)
	}
	if cap(*chunk)-len(*chunk) < n {
		*chunk = make([]T, 0, size)
	}
	start := len(*chunk)
	*chunk = append(*chunk, s...)
	return (*chunk)[start:len(*chunk):len(*chunk)]
}

func (m *MemStore) check(ctx context.Context) error {
	if m.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// memView is the PlanView of a locked MemStore.
type memView struct{ m *MemStore }

func (v memView) Lookup(id ID) (Entry, Status, error) {
	e, ok := v.m.entries[id]
	if !ok {
		return Entry{}, Absent, nil
	}
	return e.Entry, e.status, nil
}

func (v memView) Waiting(space string, parent ID) ([]ID, error) {
	s := v.m.spaces[space]
	if s == nil {
		return nil, nil
	}
	return sortedKeys(s.waits[parent]), nil
}

// Put implements Putter.
func (m *MemStore) Put(ctx context.Context, b Batch) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return Result{}, err
	}
	plan, err := PlanBatch(b, memView{m})
	if err != nil {
		return Result{}, err
	}
	m.objMu.Lock()
	for _, o := range b.Objects {
		if b.KeepObject != nil && !b.KeepObject(o.ID) {
			continue
		}
		if _, ok := m.objects[o.ID]; !ok {
			m.objects[o.ID] = slices.Clone(o.Data)
		}
	}
	m.objMu.Unlock()
	for _, st := range plan.Apply {
		s := m.space(st.Space)
		if st.WasPending {
			s.unpend(st.Entry)
		}
		e := &memEntry{Entry: m.keep(st.Entry), status: Applied, pos: uint64(len(s.log) + 1)}
		s.log = append(s.log, e)
		m.entries[st.ID] = e
		for _, p := range st.Parents {
			if pe := m.entries[p]; pe != nil && !pe.child.Valid() {
				pe.child = st.ID
			} else {
				m.children[p] = append(m.children[p], st.ID)
			}
			delete(s.heads, p)
		}
		s.heads[st.ID] = struct{}{}
	}
	for _, r := range plan.Quarantine {
		if b.DropRefused {
			if r.WasPending {
				m.space(r.Space).unpend(r.Entry)
				delete(m.entries, r.ID)
			}
			continue
		}
		s := m.space(r.Space)
		if r.WasPending {
			s.unpend(r.Entry)
		}
		s.quar[r.ID] = struct{}{}
		m.entries[r.ID] = &memEntry{Entry: m.keep(r.Entry), status: Quarantined, rej: r.Rejection}
	}
	for _, w := range plan.Pending {
		s := m.space(w.Space)
		s.pending[w.ID] = struct{}{}
		m.entries[w.ID] = &memEntry{Entry: m.keep(w.Entry), status: Pending}
		for _, p := range w.WaitsFor {
			if s.waits[p] == nil {
				s.waits[p] = map[ID]struct{}{}
			}
			s.waits[p][w.ID] = struct{}{}
		}
	}
	return plan.Result, nil
}

// unpend drops a pending entry's record and waiting index.
func (s *memSpace) unpend(e Entry) {
	delete(s.pending, e.ID)
	for _, p := range e.Parents {
		if w := s.waits[p]; w != nil {
			delete(w, e.ID)
			if len(w) == 0 {
				delete(s.waits, p)
			}
		}
	}
}

// Get implements Getter.
func (m *MemStore) Get(ctx context.Context, id ID) (Entry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return Entry{}, err
	}
	e, ok := m.entries[id]
	if !ok || e.status != Applied {
		return Entry{}, fmt.Errorf("dag: entry %s: %w", id, ErrNotFound)
	}
	return cloneEntry(e.Entry), nil
}

// Has implements Haser.
func (m *MemStore) Has(ctx context.Context, id ID) (Status, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return Absent, err
	}
	if e, ok := m.entries[id]; ok {
		return e.status, nil
	}
	return Absent, nil
}

// Object implements ObjectGetter.
func (m *MemStore) Object(ctx context.Context, id ID) ([]byte, error) {
	m.objMu.RLock()
	defer m.objMu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	d, ok := m.objects[id]
	if !ok {
		return nil, fmt.Errorf("dag: object %s: %w", id, ErrNotFound)
	}
	return slices.Clone(d), nil
}

// Parents implements Index.
func (m *MemStore) Parents(ctx context.Context, id ID) ([]ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	e, ok := m.entries[id]
	if !ok || e.status != Applied {
		return nil, fmt.Errorf("dag: parents of %s: %w", id, ErrNotFound)
	}
	return slices.Clone(e.Parents), nil
}

// Children implements Index.
func (m *MemStore) Children(ctx context.Context, id ID) ([]ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	out := slices.Clone(m.children[id])
	if e := m.entries[id]; e != nil && e.child.Valid() {
		out = append(out, e.child)
	}
	slices.SortFunc(out, ID.Compare)
	return out, nil
}

// Heads implements Index.
func (m *MemStore) Heads(ctx context.Context, space string) ([]ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	if s := m.spaces[space]; s != nil {
		return sortedKeys(s.heads), nil
	}
	return []ID{}, nil
}

// Position implements Index.
func (m *MemStore) Position(ctx context.Context, id ID) (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return 0, err
	}
	e, ok := m.entries[id]
	if !ok || e.status != Applied {
		return 0, fmt.Errorf("dag: position of %s: %w", id, ErrNotFound)
	}
	return e.pos, nil
}

// Log implements Index.
func (m *MemStore) Log(ctx context.Context, space string, after uint64, limit int) ([]ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ents, err := m.logRun(ctx, space, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]ID, len(ents))
	for i, e := range ents {
		out[i] = e.ID
	}
	return out, nil
}

// LogEntries returns up to limit (0: all) applied entries of space in log
// order, starting after position after, as Log and then Get of each id
// would, in one read: no lookup by id, and the entries' bytes and parents
// copied into one allocation each (sync's responder serves a log with it,
// as dag.ReadLog does).
func (m *MemStore) LogEntries(ctx context.Context, space string, after uint64, limit int) ([]Entry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ents, err := m.logRun(ctx, space, after, limit)
	if err != nil {
		return nil, err
	}
	nd, np := 0, 0
	for _, e := range ents {
		nd += len(e.Data)
		np += len(e.Parents)
	}
	data, parents := make([]byte, 0, nd), make([]ID, 0, np)
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = e.Entry
		out[i].Data, data = appendCopy(data, e.Data)
		if e.Parents != nil {
			out[i].Parents, parents = appendCopy(parents, e.Parents)
		}
	}
	return out, nil
}

// logRun returns the applied entries of space after position after, at
// most limit of them (0: all). Call with mu held.
func (m *MemStore) logRun(ctx context.Context, space string, after uint64, limit int) ([]*memEntry, error) {
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	s := m.spaces[space]
	if s == nil || after >= uint64(len(s.log)) {
		return nil, nil
	}
	ents := s.log[after:]
	if limit > 0 && len(ents) > limit {
		ents = ents[:limit]
	}
	return ents, nil
}

// appendCopy appends s to buf, which has room for it, and returns the copy
// as a full slice (appending to it cannot reach a neighbour) with buf.
func appendCopy[T any](buf, s []T) (cp, rest []T) {
	start := len(buf)
	buf = append(buf, s...)
	return buf[start:len(buf):len(buf)], buf
}

// Pending implements Index.
func (m *MemStore) Pending(ctx context.Context, space string) ([]ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	if s := m.spaces[space]; s != nil {
		return sortedKeys(s.pending), nil
	}
	return []ID{}, nil
}

// Missing implements Index.
func (m *MemStore) Missing(ctx context.Context, space string) ([]ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	out := []ID{}
	s := m.spaces[space]
	if s == nil {
		return out, nil
	}
	for p := range s.waits {
		if e, ok := m.entries[p]; !ok || e.Space != space && e.status != Quarantined {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, ID.Compare)
	return out, nil
}

// Quarantine implements Index.
func (m *MemStore) Quarantine(ctx context.Context, space string) ([]Rejection, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	out := []Rejection{}
	if s := m.spaces[space]; s != nil {
		for _, id := range sortedKeys(s.quar) {
			out = append(out, m.entries[id].rej)
		}
	}
	return out, nil
}

// Spaces implements Index.
func (m *MemStore) Spaces(ctx context.Context) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m.spaces))
	for name := range m.spaces {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// Close releases the store; later calls return ErrClosed. Closing twice is
// not an error.
func (m *MemStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objMu.Lock()
	defer m.objMu.Unlock()
	m.closed.Store(true)
	m.entries, m.spaces, m.children, m.objects, m.data, m.ids = nil, nil, nil, nil, nil, nil
	return nil
}

// DropPending removes pending entries of space, as if they had never
// arrived (see badgerstore.Store.DropPending). It returns how many it
// removed.
func (m *MemStore) DropPending(ctx context.Context, space string, ids []ID) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return 0, err
	}
	s := m.spaces[space]
	if s == nil {
		return 0, nil
	}
	n := 0
	for _, id := range ids {
		if _, ok := s.pending[id]; !ok {
			continue
		}
		if e := m.entries[id]; e != nil {
			s.unpend(e.Entry)
			delete(m.entries, id)
			n++
		}
	}
	return n, nil
}
