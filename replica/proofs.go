package replica

// This file serves RFC 9162 proofs over a session's log (30k §5,
// /proofs/inclusion and /proofs/consistency): the leaves are the 32-byte
// digests of the tx ids in this replica's log order, exactly the leaves of
// its checkpoints' roots, so an inclusion proof against a checkpoint's size
// verifies against that checkpoint's signed root. The proof index
// (replica/mlog) is built on the first proof asked of a session and grown
// as the log grows; it keeps about 2n/16 hashes for n entries.

import (
	"context"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/checkpoint"
	"github.com/witan-dev/witan/replica/mlog"
)

// ErrProofRange is wrapped when a proof is asked for a size beyond the
// log, an entry outside the tree asked, or from > to.
var ErrProofRange = mlog.ErrRange

// InclusionProof and ConsistencyProof are RFC 9162 proofs over a log
// (replica/checkpoint, pure).
type (
	InclusionProof   = checkpoint.InclusionProof
	ConsistencyProof = checkpoint.ConsistencyProof
)

func ids(hs [][]byte) []dag.ID {
	out := make([]dag.ID, len(hs))
	for i, h := range hs {
		var d [32]byte
		copy(d[:], h)
		out[i] = dag.IDFromDigest(d)
	}
	return out
}

// proofTree returns sp's proof index grown to its log. Called with r.mu
// held.
func (sp *space) proofTree() *mlog.Tree {
	if sp.proofs == nil {
		sp.proofs = mlog.New(func(i uint64) []byte { return digestLeaf(sp.log[i]) }, 0)
	}
	sp.proofs.Grow(uint64(len(sp.log)))
	return sp.proofs
}

func digestLeaf(id dag.ID) []byte { d := id.Digest(); return mlog.LeafHash(d[:]) }

// LogSize returns the number of entries in the space's log.
func (r *Replica) LogSize(ctx context.Context, session dag.ID) (uint64, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return 0, err
	}
	return uint64(len(sp.log)), nil
}

// InclusionProof proves that tx is in the space's log of its first size
// entries (the size of one of its checkpoints, typically).
func (r *Replica) InclusionProof(ctx context.Context, session dag.ID, tx dag.ID, size uint64) (InclusionProof, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return InclusionProof{}, err
	}
	pos := r.position(ctx, tx)
	if pos == 0 || pos > uint64(len(sp.log)) || sp.log[pos-1] != tx {
		return InclusionProof{}, fmt.Errorf("replica: %s is not in the log of %s: %w", tx, spaceName, dag.ErrNotFound)
	}
	t := sp.proofTree()
	path, err := t.Inclusion(pos-1, size)
	if err != nil {
		return InclusionProof{}, err
	}
	root, err := t.Root(size)
	if err != nil {
		return InclusionProof{}, err
	}
	return InclusionProof{Tx: tx, LeafIndex: pos - 1, TreeSize: size, InclusionPath: ids(path), Root: ids([][]byte{root})[0]}, nil
}

// InclusionProofs is InclusionProof for many entries against one size,
// under one lock and with the root computed once (an MR's extract asks
// one per ballot). ok[i] is false for an entry that is not in the log's
// first size entries; a size beyond the log is an error.
func (r *Replica) InclusionProofs(ctx context.Context, session dag.ID, txs []dag.ID, size uint64) (proofs []InclusionProof, ok []bool, err error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return nil, nil, err
	}
	t := sp.proofTree()
	root, err := t.Root(size)
	if err != nil {
		return nil, nil, err
	}
	rootID := ids([][]byte{root})[0]
	proofs, ok = make([]InclusionProof, len(txs)), make([]bool, len(txs))
	for i, tx := range txs {
		pos := r.position(ctx, tx)
		if pos == 0 || pos > size || pos > uint64(len(sp.log)) || sp.log[pos-1] != tx {
			continue
		}
		path, err := t.Inclusion(pos-1, size)
		if err != nil {
			return nil, nil, err
		}
		proofs[i], ok[i] = InclusionProof{Tx: tx, LeafIndex: pos - 1, TreeSize: size, InclusionPath: ids(path), Root: rootID}, true
	}
	return proofs, ok, nil
}

// ConsistencyProof proves that the space's log of its first from entries
// is a prefix of its log of to entries.
func (r *Replica) ConsistencyProof(ctx context.Context, session dag.ID, from, to uint64) (ConsistencyProof, error) {
	spaceName := session.String()
	r.lock()
	defer r.mu.Unlock()
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return ConsistencyProof{}, err
	}
	t := sp.proofTree()
	path, err := t.Consistency(from, to)
	if err != nil {
		return ConsistencyProof{}, err
	}
	r1, err1 := t.Root(from)
	r2, err2 := t.Root(to)
	if err := errors.Join(err1, err2); err != nil {
		return ConsistencyProof{}, err
	}
	return ConsistencyProof{FirstSize: from, SecondSize: to, ConsistencyPath: ids(path), FirstRoot: ids([][]byte{r1})[0], SecondRoot: ids([][]byte{r2})[0]}, nil
}
