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
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

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
}

// Set sets k to v in the transaction.
func (t *wtxn) Set(k, v []byte) error {
	if t.limit > 0 && int64(len(v)) >= t.limit && k[0] != pObject {
		return fmt.Errorf("%w: a record of %d bytes under %q, the tree takes less than %d", ErrValueTooLarge, len(v), k[:1], t.limit)
	}
	return t.Txn.Set(k, v)
}

// newTxn starts a write transaction.
func (s *Store) newTxn() *wtxn {
	t := &wtxn{Txn: s.db.NewTransaction(true)}
	if s.bl != nil {
		t.limit = s.valueThreshold
	}
	return t
}

// commitTxn commits t once t.before (the bodies' fdatasync) has ended
// and succeeded: Badger must never hold what names bodies that are not
// durable. With SyncWrites on, Badger returns once the commit is durable.
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
