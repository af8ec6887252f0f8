package replica

// This file is the core's own reads: the sessions it holds, a session's
// state, groups and branches as derived, the quarantine, what waits for
// parents, and the log. They are facts the core keeps, not labelled with
// finality; what is derived and labelled is replica/view's.

import (
	"context"
	"fmt"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// Sessions returns the ids of the sessions the replica holds, sorted (by
// their string form, which is the order of their bytes).
func (r *Replica) Sessions() []dag.ID {
	r.lock()
	defer r.mu.Unlock()
	var out []dag.ID
	for _, sp := range r.spaces {
		if sp.h.Counts().Entries > 0 {
			out = append(out, sp.h.Session())
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// State returns the derived state of a session (a pure function of the
// accepted entries: identical on every replica holding them) and its hash.
func (r *Replica) State(ctx context.Context, session dag.ID) (*house.State, dag.ID, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, dag.ID{}, err
	}
	st := sp.h.State()
	if sp.state == nil || sp.stateAt != sp.h.Counts().Entries {
		b, err := st.Canonical()
		if err != nil {
			return nil, dag.ID{}, err
		}
		sp.keepState(b)
	}
	return st, sp.stateID, nil
}

// keepState records b, the canonical JSON of the session's state as it
// is now, and its hash. The state is a function of the admitted entries,
// which only grow: their count names its version.
func (sp *space) keepState(b []byte) {
	sp.state, sp.stateID, sp.stateAt = b, dag.Sum(b), sp.h.Counts().Entries
}

// stateJSON is StateJSON with r.mu held.
func (sp *space) stateJSON() ([]byte, dag.ID, error) {
	if sp.state == nil || sp.stateAt != sp.h.Counts().Entries {
		b, err := sp.h.State().Canonical()
		if err != nil {
			return nil, dag.ID{}, err
		}
		sp.keepState(b)
	}
	return sp.state, sp.stateID, nil
}

// StateJSON returns the canonical JSON of a session's derived state and
// its hash (State's, encoded). Both are derived once per version of the
// state (the number of entries admitted): reading an unchanged session
// costs neither a derivation nor an encoding. The bytes are shared:
// callers must not change them.
func (r *Replica) StateJSON(ctx context.Context, session dag.ID) ([]byte, dag.ID, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, dag.ID{}, err
	}
	return sp.stateJSON()
}

// Summary returns a session's house.Summary and the hash of its whole
// state (StateJSON's, derived once per version).
func (r *Replica) Summary(ctx context.Context, session dag.ID) (house.Summary, dag.ID, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return house.Summary{}, dag.ID{}, err
	}
	_, id, err := sp.stateJSON()
	if err != nil {
		return house.Summary{}, dag.ID{}, err
	}
	return sp.h.Summary(), id, nil
}

func (r *Replica) session(ctx context.Context, name string) (*space, error) {
	if r.closed {
		return nil, ErrClosed
	}
	sp, err := r.space(ctx, name)
	if err != nil {
		return nil, err
	}
	if sp.h.Counts().Entries == 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSpace, name)
	}
	return sp, nil
}

// Group returns one group as derived, without deriving the whole state.
func (r *Replica) Group(ctx context.Context, session dag.ID, id string) (house.GroupView, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return house.GroupView{}, err
	}
	if g, ok := sp.h.Group(id); ok {
		return g, nil
	}
	return house.GroupView{}, fmt.Errorf("replica: group %q: %w", id, dag.ErrNotFound)
}

// Branches returns the session's branches as derived, sorted by name,
// without deriving the whole state.
func (r *Replica) Branches(ctx context.Context, session dag.ID) ([]house.BranchView, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return nil, err
	}
	return sp.h.Branches(), nil
}

// Branch returns one branch as derived, without deriving the whole state.
func (r *Replica) Branch(ctx context.Context, session dag.ID, name string) (house.BranchView, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.session(ctx, spaceName)
	if err != nil {
		return house.BranchView{}, err
	}
	if b, ok := sp.h.Branch(name); ok {
		return b, nil
	}
	return house.BranchView{}, fmt.Errorf("replica: branch %q: %w", name, dag.ErrNotFound)
}

// Quarantine returns the refused entries of a space that the quarantine's
// bounded record still holds, sorted by id. Nothing refused is stored:
// the record is kept in memory, per source, oldest forgotten first.
func (r *Replica) Quarantine(spaceName string) []house.Rejection {
	r.lock()
	defer r.mu.Unlock()
	return r.quar.rejections(spaceName)
}

// Refusals returns up to limit records of the quarantine for space (""
// for every space) with Seq after after, oldest first, and whether more
// follow: the quarantine's pages.
func (r *Replica) Refusals(space string, after uint64, limit int) ([]Refusal, bool) {
	r.lock()
	defer r.mu.Unlock()
	return r.quar.page(space, after, limit)
}

// Refused returns the quarantine's record of id, if it holds one.
func (r *Replica) Refused(id dag.ID) (Refusal, bool) {
	r.lock()
	defer r.mu.Unlock()
	q, ok := r.quar.get(id)
	if !ok {
		return Refusal{}, false
	}
	return *q, true
}

// MissingFrom returns the parents, neither held nor refused, of the
// pending entries of space that source sent (dag.WithSource): what to
// ask that source for. Entries other sources sent are not its to
// produce, so a flood from one peer never makes a pull from another ask
// for more.
func (r *Replica) MissingFrom(ctx context.Context, space, source string) ([]dag.ID, error) {
	r.lock()
	defer r.mu.Unlock()
	return r.wait.missingFrom(ctx, r.store, r.quar, space, source)
}

// PendingStats returns the counters of the entries waiting for parents.
func (r *Replica) PendingStats() PendingStats {
	r.lock()
	defer r.mu.Unlock()
	return r.wait.stats()
}

// QuarantineStats returns the quarantine's counters (a metric).
func (r *Replica) QuarantineStats() QuarantineStats {
	r.lock()
	defer r.mu.Unlock()
	return r.quar.stats()
}

// Pending returns the entries of a space waiting for parents or for
// objects, sorted: the store's pending entries, which survive a restart.
func (r *Replica) Pending(ctx context.Context, session dag.ID) ([]dag.ID, error) {
	spaceName := session.String()
	return r.store.Pending(ctx, spaceName)
}

// Heads returns the causal frontier of a space (GET /heads).
func (r *Replica) Heads(ctx context.Context, session dag.ID) ([]dag.ID, error) {
	spaceName := session.String()
	return r.store.Heads(ctx, spaceName)
}

// Log returns up to limit accepted entries of a space in this replica's
// log order after position after (GET /log).
func (r *Replica) Log(ctx context.Context, session dag.ID, after uint64, limit int) ([]dag.ID, error) {
	spaceName := session.String()
	return r.store.Log(ctx, spaceName, after, limit)
}

// Object reads one stored object (a change, a district table): a raw
// read of the store, without the replica's lock.
func (r *Replica) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	return r.store.Object(ctx, id)
}
