package badgerstore

// The store's write transactions. A store on disk runs Badger with
// SyncWrites on: Badger's commit returns once its memtable's log (and the
// value-log file, for a value that goes there) is synced, and a
// transaction becomes visible to readers only then. The bodies a
// transaction names are appended to a body file and fdatasynced before
// Badger commits it (wtxn.before): Badger never holds a location of a body
// that is not durable. What Put acknowledged is therefore in Badger's
// synced log and in the body files, whatever the machine does next.

import (
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// getter reads the value of one key, badger.ErrKeyNotFound when there is
// none: a Badger transaction (rtxn), or the store's write transaction
// (wtxn), which also sees the writes of the commit running before it.
type getter interface {
	value(k []byte, fn func(v []byte) error) error
}

// rtxn is a Badger view as a getter. at is Store.landed read before the
// view began (inView); 0 makes every applied entry's status checked
// against the view's log runs.
type rtxn struct {
	*badger.Txn
	at uint64
}

func (t rtxn) value(k []byte, fn func([]byte) error) error {
	item, err := t.Get(k)
	if err != nil {
		return err
	}
	return item.Value(fn)
}

// wtxn is a Badger write transaction of the store.
type wtxn struct {
	*badger.Txn
	// before, when set, is waited for before Badger commits: the body
	// files' fdatasync. It fails the commit when it fails.
	before func() error
	// limit, when not 0: a value of the store's own records (any key but
	// an object's) must be shorter, so that it stays in Badger's tree and
	// never goes to the value log (Options.badger).
	limit int64
	// rec holds what this transaction wrote under the keys a Put reads
	// (recorded), nil for a deletion: the next Put's transaction reads
	// them as prev while this one's commit runs, before Badger shows it.
	// recRoom is how many keys it was made for.
	rec     map[string][]byte
	recRoom int
	// prev: rec of the transaction whose commit may still run, and which
	// this one's snapshot does not show; nil when its snapshot shows
	// every earlier commit.
	prev map[string][]byte
	// applied is, for a Put's transaction (the only ones that land in a
	// flight), the number of records of the applied index up to its own
	// (applied.go): Store.landed once its commit returned.
	applied uint64
}

// recorded reports whether a Put may read the key k by its value (the
// status records, bodies and body runs, objects, spaces and counters),
// which is what a transaction keeps in rec. A Put reads the other kinds
// (children, heads, log runs, pending queues and waits, refusals) only by
// iterating, and only once no commit is running (Store.overlay).
func recorded(k []byte) bool {
	switch k[0] {
	case pPending, pQuar, pData, pObject, pSpace, pSpaceName, pMeta, pDead:
		return true
	}
	return false
}

// Set sets k to v in the transaction.
func (t *wtxn) Set(k, v []byte) error {
	if t.limit > 0 && int64(len(v)) >= t.limit && k[0] != pObject {
		return fmt.Errorf("%w: a record of %d bytes under %q, the tree takes less than %d", ErrValueTooLarge, len(v), k[:1], t.limit)
	}
	if err := t.Txn.Set(k, v); err != nil {
		return err
	}
	if recorded(k) {
		if v == nil {
			v = []byte{}
		}
		t.rec[string(k)] = v
	}
	return nil
}

// grow makes room in the transaction's record for n more keys.
func (t *wtxn) grow(n int) {
	if len(t.rec) > 0 || n <= t.recRoom {
		return // rare: a transaction that wrote before its entries
	}
	t.rec, t.recRoom = make(map[string][]byte, n), n
}

// Delete deletes k in the transaction.
func (t *wtxn) Delete(k []byte) error {
	if err := t.Txn.Delete(k); err != nil {
		return err
	}
	if recorded(k) {
		t.rec[string(k)] = nil
	}
	return nil
}

// value reads k as the transaction sees it: its own writes, then those of
// the commit running before it (prev), then Badger's snapshot.
func (t *wtxn) value(k []byte, fn func([]byte) error) error {
	if t.prev != nil {
		if _, mine := t.rec[string(k)]; !mine {
			if v, ok := t.prev[string(k)]; ok {
				if v == nil {
					return badger.ErrKeyNotFound
				}
				return fn(v)
			}
		}
	}
	item, err := t.Get(k)
	if err != nil {
		return err
	}
	return item.Value(fn)
}

// newTxn starts a write transaction over a snapshot of every commit
// (waiting for a commit that runs).
func (s *Store) newTxn() *wtxn {
	return s.wrapTxn(s.db.NewTransaction(true), nil)
}

func (s *Store) wrapTxn(txn *badger.Txn, prev map[string][]byte) *wtxn {
	t := &wtxn{Txn: txn, prev: prev, rec: make(map[string][]byte)}
	if s.bl != nil {
		t.limit = s.valueThreshold
	}
	return t
}

// A Put's last transaction commits in a goroutine (a flight): Put waits for
// it after releasing the store's lock, so that the next Put, from another
// goroutine or after PutAsync, plans and writes its transaction while this
// one's bodies are fdatasynced and Badger commits it with its sync. The
// commits still run one at a time and in order, each only once the one
// before it succeeded and its own bodies are durable, and nothing is
// acknowledged before its commit returned. The next transaction reads
// what this one wrote from its rec (wtxn.prev), since Badger shows a
// commit only once it is durable, and a transaction started while a
// commit runs waits for it: a flight makes the next transaction's
// snapshot itself, once the commits before it are done and before its
// own starts (ready). A failed commit stops the store's writes (broken):
// what was planned on it is not in Badger.
type flight struct {
	rec map[string][]byte
	// ready is closed once next is set: a write transaction whose
	// snapshot holds every commit before this one (nil if one failed).
	ready chan struct{}
	next  *badger.Txn
	taken bool // next was handed on or discarded; under Store.hand
	// done is closed once the commit ended, err its outcome.
	done chan struct{}
	err  error
}

// dispatch starts t's commit after prev's and returns its flight. Call
// with Store.mu held, t written.
func (s *Store) dispatch(t *wtxn, prev *flight) *flight {
	f := &flight{rec: t.rec, ready: make(chan struct{}), done: make(chan struct{})}
	s.flights.Add(1)
	go func() {
		defer s.flights.Done()
		f.err = s.land(t, prev, f)
		s.hand.Lock()
		if !f.taken && f.next != nil {
			f.next.Discard()
		}
		f.taken = true
		s.hand.Unlock()
		if f.err != nil {
			s.breakWrites(f.err)
		}
		close(f.done)
	}()
	return f
}

// land commits t once prev's commit succeeded and t's bodies are durable.
func (s *Store) land(t *wtxn, prev *flight, f *flight) error {
	defer t.Discard()
	if prev != nil {
		<-prev.done
		if prev.err != nil {
			close(f.ready)
			return fmt.Errorf("badgerstore: a commit before this one failed: %w", prev.err)
		}
	}
	if t.before != nil {
		if err := t.before(); err != nil {
			close(f.ready)
			return err
		}
	}
	// Every commit before t is done: this snapshot holds them all, and
	// with t's rec it is what the next transaction reads.
	f.next = s.db.NewTransaction(true)
	close(f.ready)
	t0 := time.Now()
	err := t.Txn.Commit()
	s.commits.Add(1)
	s.commitWait.Add(int64(time.Since(t0)))
	if err != nil {
		return fmt.Errorf("badgerstore: commit: %w", err)
	}
	if h := s.landHook; h != nil {
		h()
	}
	// Badger shows the commit to every view begun from now on.
	s.landed.Store(t.applied)
	// Badger acknowledges a commit whose value log it failed to fsync,
	// and only logs it: the write is not durable, so it fails here.
	return s.syncFailure()
}

// nextTxn starts the write transaction of a Put, with s.mu held: over the
// running commit's handed-on snapshot and its rec when the Put may read
// through them (overlay), else once it is done.
func (s *Store) nextTxn() (*wtxn, error) {
	t, err := s.startTxn()
	if err == nil {
		s.passRec(t)
	}
	return t, err
}

// maxRecRoom bounds the records the store keeps for a later transaction
// (a map keeps the room it once took).
const maxRecRoom = 1 << 16

// passRec gives t, a Put's new transaction, the record of the Put
// transaction two before it, emptied: that record was the prev of the
// transaction just before t, which has been written (writers hold s.mu
// in turn), and only writing reads prev; its flight hands it to no
// transaction after that one. Made anew for each transaction, these
// records cost a fresh sync some 110 bytes an entry (BenchmarkFreshSync's
// alloc-B/entry, 2026-12-07). Call with s.mu held.
func (s *Store) passRec(t *wtxn) {
	free := s.lastPrev
	s.lastPrev = t.prev
	if free == nil || len(t.rec) > 0 || len(free) > maxRecRoom {
		return
	}
	room := len(free)
	clear(free)
	t.rec, t.recRoom = free, room
}

func (s *Store) startTxn() (*wtxn, error) {
	f := s.flight
	if f == nil {
		return s.newTxn(), nil
	}
	if s.overlay() {
		<-f.ready
		s.hand.Lock()
		txn, ok := f.next, !f.taken
		f.taken = true
		s.hand.Unlock()
		if ok && txn != nil {
			return s.wrapTxn(txn, f.rec), nil
		}
	}
	if err := s.drain(); err != nil {
		return nil, err
	}
	return s.newTxn(), nil
}

// overlay reports whether the next transaction may read the running
// commit through its rec: when its Put iterates over nothing that commit
// may have written (no committed pending entry, no promotion to resume).
// Call with s.mu held.
func (s *Store) overlay() bool {
	return !s.resume && !s.marked && !s.anyPending()
}

// drain waits for the running commit, if any, and returns the error that
// stopped the store's writes, if one did. Call with s.mu held.
func (s *Store) drain() error {
	if f := s.flight; f != nil {
		<-f.done
		s.flight = nil
	}
	return s.broken()
}

// errBroken: a commit failed, and the store writes nothing more until it
// is reopened.
var errBroken = errors.New("badgerstore: a commit failed; the store writes nothing more until it is reopened")

// breakWrites records the first failed commit: every later write fails.
func (s *Store) breakWrites(err error) {
	s.brokenErr.CompareAndSwap(nil, &err)
}

// broken returns the error of the failed commit that stopped the store's
// writes, nil while none failed.
func (s *Store) broken() error {
	if p := s.brokenErr.Load(); p != nil {
		return fmt.Errorf("%w: %w", errBroken, *p)
	}
	return nil
}

// Stats counts what a store's writes waited for, since Open: to see where
// a write path's time goes (the benchmarks report it).
type Stats struct {
	// Commits is the Badger transactions committed, and CommitWait the
	// time their commits took (Badger's write path: value log, memtable
	// and, with SyncWrites, the sync of its log).
	Commits    int64
	CommitWait time.Duration
	// BodySyncs and BodySyncWait: the body files' fdatasyncs before a
	// commit, and their time.
	BodySyncs    int64
	BodySyncWait time.Duration
}

// Stats returns what s's writes waited for since Open.
func (s *Store) Stats() Stats {
	st := Stats{Commits: s.commits.Load(), CommitWait: time.Duration(s.commitWait.Load())}
	if s.bl != nil {
		st.BodySyncs, st.BodySyncWait = s.bl.syncs.n.Load(), time.Duration(s.bl.syncs.wait.Load())
	}
	return st
}

// commitTxn commits t now, once t.before (the bodies' fdatasync) has ended
// and succeeded: Badger must never hold what names bodies that are not
// durable. With SyncWrites on, Badger returns once the commit is durable.
// For the store's own maintenance (GC moves, DropPending), with s.mu held
// and nothing in flight (drain).
func (s *Store) commitTxn(t *wtxn) error {
	if t.before != nil {
		if err := t.before(); err != nil {
			return err
		}
	}
	t0 := time.Now()
	err := t.Txn.Commit()
	s.commits.Add(1)
	s.commitWait.Add(int64(time.Since(t0)))
	return err
}
