package replica

// This file is the pipelined write of a peer's parts. The store's commit
// of a part (the body files' fdatasync, then Badger's synced commit) takes
// a few milliseconds of waiting; badgerstore's Store.PutStart lets the
// next part be judged and planned on top of a commit still running. The
// replica's in-memory state (the House, the log, the charge sheet of
// pending entries) is brought up to a part as soon as the store planned
// it, since the next part is judged against it; that state is ahead of the
// disk until the commit lands. So nothing is shown from it until then:
//
//   - every reader, and every writer that does not pipeline, takes the
//     replica's lock with lock(), which first waits for every commit in
//     flight to land (and drops a space whose commit failed, so that it is
//     derived again from what the store holds): a view, a checkpoint, a
//     receipt, a proof never include an entry the disk may not keep;
//   - a part's outcomes are returned by Ingest only once its commit landed;
//   - the store's own reads (heads, log, the entries served to peers) show
//     a commit only once it is durable (Badger publishes it then).
//
// Only a peer's part without client submissions in its transaction is
// pipelined (commitPart): a client's receipt is answered after its own
// commit, as before. An object kept by a commit in flight is read from
// that commit's flight by the House while it judges the next part (the
// store shows it only once it landed).
//
// A failed commit fails the store's writes until it is reopened, and
// fails the commit planned on top of it: the Ingest call returns its
// error with the outcomes of the parts before the failed one, and the
// space is dropped from memory, to be derived again from the store.

import (
	"context"
	"slices"
	"sync"

	"github.com/witan-dev/witan/dag"
)

// putStarter is a store that starts a Put's commit and returns before it
// is durable, with the batch's result (badgerstore.Store).
type putStarter interface {
	PutStart(ctx context.Context, b dag.Batch) (dag.Result, func() error, error)
}

// flight is one store transaction of a pipelined part whose commit may
// still run.
type flight struct {
	space string
	wait  func() error
	// objs are the objects the transaction kept, which the House may read
	// before the store shows them.
	objs    map[dag.ID][]byte
	once    sync.Once
	err     error
	settled bool // under r.mu: the replica has acted on err
}

// landed waits for f's commit and returns its error.
func (f *flight) landed() error {
	f.once.Do(func() { f.err = f.wait() })
	return f.err
}

// lock takes r.mu once every commit in flight has landed: what the
// replica holds in memory is then what the disk holds.
func (r *Replica) lock() {
	r.mu.Lock()
	r.landAllLocked()
}

// landAllLocked waits for every commit in flight and settles it. Call
// with r.mu held.
func (r *Replica) landAllLocked() {
	for len(r.inflight) > 0 {
		f := r.inflight[0]
		f.landed()
		r.settleLocked(f)
	}
}

// settleLocked removes a landed f from the flights and, if its commit
// failed, drops its space, whose state in memory holds what the store
// does not. Call with r.mu held.
func (r *Replica) settleLocked(f *flight) {
	if f.settled {
		return
	}
	f.settled = true
	r.inflight = slices.DeleteFunc(r.inflight, func(g *flight) bool { return g == f })
	if f.err != nil {
		delete(r.spaces, f.space)
	}
}

// land waits, without the lock, for the commits of fs and settles them;
// it returns the first error.
func (r *Replica) land(fs []*flight) error {
	if len(fs) == 0 {
		return nil
	}
	var first error
	for _, f := range fs {
		if err := f.landed(); err != nil && first == nil {
			first = err
		}
	}
	r.mu.Lock()
	for _, f := range fs {
		r.settleLocked(f)
	}
	r.mu.Unlock()
	return first
}

// flyingObject returns an object kept by a commit in flight. Call with
// r.mu held.
func (r *Replica) flyingObject(id dag.ID) ([]byte, bool) {
	for _, f := range r.inflight {
		if b, ok := f.objs[id]; ok {
			return b, true
		}
	}
	return nil, false
}
