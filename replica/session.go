package replica

// This file is the read handle that replica/view derives its answers
// from: one session's House, log and checkpoints, read under the
// replica's lock. The core writes and signs; what it serves derived and
// labelled with finality is the view's (replica/view).

import (
	"context"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// Session is a read-only handle on one session of a Replica, from
// ReadSession to Close, while the replica's lock is held: reads through
// it see one consistent state, and ingest waits. Nothing reached through
// it may be changed: the House, the log and the checkpoints are the
// replica's own. The holder must not call the replica's own methods
// before Close (its lock is held).
type Session struct {
	r  *Replica
	sp *space
}

// ReadSession takes the replica's lock and returns a read-only handle on
// session spaceName; the caller must Close it, soon. It wraps
// ErrUnknownSpace for a space that holds no session, and returns
// ErrClosed once the replica is closed (the lock is then not kept).
func (r *Replica) ReadSession(ctx context.Context, session dag.ID) (*Session, error) {
	spaceName := session.String()
	r.lock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	return &Session{r: r, sp: sp}, nil
}

// Close releases the replica's lock; the handle is not to be used after.
func (s *Session) Close() { s.r.mu.Unlock() }

// Name is the session's space name (its id's string form).
func (s *Session) Name() string { return s.sp.name }

// House is the session's derived state machine (replica/house): read it,
// never admit to it.
func (s *Session) House() *house.House { return s.sp.h }

// Node is the replica's node key.
func (s *Session) Node() dag.Key { return s.r.key.Key() }

// Log is the session's log in this replica's order; not to be changed.
func (s *Session) Log() []dag.ID { return s.sp.log }

// Checkpoints are the session's checkpoints, oldest first; not to be
// changed.
func (s *Session) Checkpoints() []Checkpoint { return s.sp.cps }

// Position is an accepted entry's 1-based position in the log, or 0.
func (s *Session) Position(ctx context.Context, id dag.ID) uint64 { return s.r.position(ctx, id) }

// CheckpointAt returns the first checkpoint that includes log position
// pos (0: none).
func (s *Session) CheckpointAt(pos uint64) (Checkpoint, bool) { return s.sp.checkpointOf(pos) }

// CheckpointOf returns the first checkpoint that includes entry id.
func (s *Session) CheckpointOf(ctx context.Context, id dag.ID) (Checkpoint, bool) {
	return s.sp.checkpointOf(s.r.position(ctx, id))
}

// Finality is an entry's finality: final_advisory once a checkpoint of
// this replica includes it, else provisional.
func (s *Session) Finality(ctx context.Context, id dag.ID) Finality {
	return s.r.finality(ctx, s.sp, id)
}

// OpinionFinality is Finality for an opinion, from the position the
// session recorded when it logged it (a store read only if it did not).
func (s *Session) OpinionFinality(ctx context.Context, id dag.ID) Finality {
	if len(s.sp.cps) == 0 {
		return Provisional
	}
	pos, ok := s.sp.opPos[id]
	if !ok {
		pos = s.r.position(ctx, id)
	}
	if _, ok := s.sp.checkpointOf(pos); ok {
		return FinalAdvisory
	}
	return Provisional
}

// Get reads one stored entry.
func (s *Session) Get(ctx context.Context, id dag.ID) (dag.Entry, error) {
	return s.r.store.Get(ctx, id)
}

// Object reads one stored object (a change, a table), dag.ErrNotFound if
// the store lacks it.
func (s *Session) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	return s.r.store.Object(ctx, id)
}

// Objects is the store as a House's source of objects, for a view that
// derives a House of its own (a cut of the record).
func (s *Session) Objects() house.Objects { return storeObjects{store: s.r.store} }

// RefusalLogged reports whether this node's refusal log holds index i.
func (s *Session) RefusalLogged(i uint64) bool {
	return s.r.refusals != nil && i < uint64(len(s.r.refusals.recs))
}
