package replica

// This file is finality (30k §5): per-replica checkpoints over an RFC 9162
// Merkle tree of tx ids in this replica's log order, signed by the node
// key (their form is replica/checkpoint's), and the finality label of
// anything the replica serves: final_advisory once one of them includes
// it, else provisional. Signed receipts are submit.go's.

import (
	"context"
	"fmt"
	"sort"

	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/checkpoint"
	"github.com/witan-dev/witan/replica/mlog"
)

// The checkpoint's form, the finality labels and their verification are
// replica/checkpoint's (pure, so that offline verifiers link no store);
// the names below keep the core's spelling of them.
type (
	// Finality labels (30k §5): checkpoint.Finality.
	Finality = checkpoint.Finality
	// Checkpoint is a signed log head of one space: checkpoint.Checkpoint.
	Checkpoint = checkpoint.Checkpoint
)

// The labels an eventual node emits, and the checkpoint's signing domain.
const (
	Provisional      = checkpoint.Provisional
	FinalAdvisory    = checkpoint.FinalAdvisory
	DomainCheckpoint = checkpoint.Domain
)

// DecodeCheckpoint reads a signed checkpoint in its wire form
// (checkpoint.Decode).
func DecodeCheckpoint(b []byte) (Checkpoint, error) { return checkpoint.Decode(b) }

// MerkleRoot returns the RFC 9162 root over ids (their 32-byte digests as
// leaves), the checkpoint's root for a log of ids.
func MerkleRoot(ids []dag.ID) dag.ID {
	r := rangeFactory.NewEmptyRange(0)
	for _, id := range ids {
		d := id.Digest()
		_ = r.Append(mlog.LeafHashDigest(&d), nil)
	}
	return rootOf(r.End(), func() ([]byte, error) { return r.GetRootHash(nil) })
}

func rootOf(size uint64, get func() ([]byte, error)) dag.ID {
	var h []byte
	if size == 0 {
		h = rfc6962.DefaultHasher.EmptyRoot()
	} else {
		var err error
		if h, err = get(); err != nil {
			panic(err) // a non-empty compact range always has a root
		}
	}
	var d [32]byte
	copy(d[:], h)
	return dag.IDFromDigest(d)
}

// Checkpoint signs a checkpoint over the whole log of space as it is now,
// at the Clock's time, and keeps it: entries in it become final_advisory.
// A checkpoint time never goes backwards: a clock that does is clamped to
// the previous checkpoint's time. The checkpoint is written to the store
// (the node-local space witan-local/checkpoints/<space>) before it is
// returned, in one transaction: every checkpoint the node has handed out
// survives a restart or a crash, and Finality answers the same after one.
// When the write fails, no checkpoint is made. A space with no
// session.create applied is not checkpointed (ErrUnknownSpace).
func (r *Replica) Checkpoint(ctx context.Context, session dag.ID) (Checkpoint, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	// Only a session this replica holds is checkpointed: a checkpoint of
	// a name with nothing applied would commit to nothing, and would be
	// kept (and signed) for any name a caller makes up.
	if r.closed {
		return Checkpoint{}, ErrClosed
	}
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(sp.log) == 0 {
		return Checkpoint{}, fmt.Errorf("%w: %s has no entry in this replica's log", ErrUnknownSpace, spaceName)
	}
	ts := r.clock().UTC()
	if n := len(sp.cps); n > 0 && ts.Before(sp.cps[n-1].TS) {
		ts = sp.cps[n-1].TS
	}
	c := Checkpoint{Space: spaceName, Size: uint64(len(sp.log)), TS: ts, Node: r.key.Key()}
	c.Root = rootOf(sp.tree.End(), func() ([]byte, error) { return sp.tree.GetRootHash(nil) })
	msg, err := c.SigningBytes()
	if err != nil {
		return Checkpoint{}, err
	}
	c.Sig = r.key.Sign(DomainCheckpoint, msg)
	id, err := r.storeCheckpoint(ctx, sp, c)
	if err != nil {
		return Checkpoint{}, err
	}
	sp.cps, sp.cpHead = append(sp.cps, c), id
	return c, nil
}

// Checkpoints returns the space's checkpoints, oldest first: every one
// this node has signed, before a restart too.
func (r *Replica) Checkpoints(session dag.ID) []Checkpoint {
	return r.checkpoints(session.String())
}

// checkpoints is Checkpoints of the space named spaceName.
func (r *Replica) checkpoints(spaceName string) []Checkpoint {
	r.lock()
	defer r.mu.Unlock()
	if sp := r.spaces[spaceName]; sp != nil {
		return append([]Checkpoint(nil), sp.cps...)
	}
	return nil
}

// LastCheckpoint returns the space's latest checkpoint, if it has one. It
// is Checkpoints' last element without copying them all, for callers that
// watch finality move (the HTTP API's event stream asks it often).
func (r *Replica) LastCheckpoint(session dag.ID) (Checkpoint, bool) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	if sp := r.spaces[spaceName]; sp != nil && len(sp.cps) > 0 {
		return sp.cps[len(sp.cps)-1], true
	}
	return Checkpoint{}, false
}

// CheckpointOfSize returns the space's latest checkpoint of exactly size
// entries, if it has one, by a binary search (sizes never decrease).
func (r *Replica) CheckpointOfSize(session dag.ID, size uint64) (Checkpoint, bool) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp := r.spaces[spaceName]
	if sp == nil {
		return Checkpoint{}, false
	}
	i := sort.Search(len(sp.cps), func(i int) bool { return sp.cps[i].Size > size })
	if i == 0 || sp.cps[i-1].Size != size {
		return Checkpoint{}, false
	}
	return sp.cps[i-1], true
}

// StateFinality is the finality of a session's derived state as a whole:
// final_advisory when the latest checkpoint covers the whole log (the state
// is then exactly what the checkpoint commits to), else provisional. It
// reads two numbers the replica keeps; a space it does not hold is
// provisional.
func (r *Replica) StateFinality(session dag.ID) Finality {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp := r.spaces[spaceName]
	if sp == nil || len(sp.log) == 0 || len(sp.cps) == 0 {
		return Provisional
	}
	if sp.cps[len(sp.cps)-1].Size >= uint64(len(sp.log)) {
		return FinalAdvisory
	}
	return Provisional
}

// position returns an entry's 1-based log position in this replica, or 0.
func (r *Replica) position(ctx context.Context, id dag.ID) uint64 {
	p, err := r.store.Position(ctx, id)
	if err != nil {
		return 0
	}
	return p
}

// checkpointOf returns the first checkpoint of sp that includes log
// position pos.
func (sp *space) checkpointOf(pos uint64) (Checkpoint, bool) {
	if pos == 0 {
		return Checkpoint{}, false
	}
	i := sort.Search(len(sp.cps), func(i int) bool { return sp.cps[i].Size >= pos })
	if i == len(sp.cps) {
		return Checkpoint{}, false
	}
	return sp.cps[i], true
}

func (r *Replica) finality(ctx context.Context, sp *space, id dag.ID) Finality {
	if _, ok := sp.checkpointOf(r.position(ctx, id)); ok {
		return FinalAdvisory
	}
	return Provisional
}

// Finality returns the finality of an accepted entry: final_advisory once a
// checkpoint of this replica includes it, else provisional.
func (r *Replica) Finality(ctx context.Context, session dag.ID, id dag.ID) (Finality, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return "", err
	}
	if !sp.h.Has(id) {
		return "", fmt.Errorf("replica: %s: %w", id, dag.ErrNotFound)
	}
	return r.finality(ctx, sp, id), nil
}
