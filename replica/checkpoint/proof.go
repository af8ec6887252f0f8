package checkpoint

// This file is the RFC 9162 proofs over a log: the leaves are the 32-byte
// digests of the tx ids in one replica's log order, exactly the leaves of
// its checkpoints' roots.

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/mlog"
)

// InclusionProof proves that Tx is leaf LeafIndex of the log's first
// TreeSize entries, whose RFC 9162 root is Root.
type InclusionProof struct {
	Tx            dag.ID   `json:"tx"`
	LeafIndex     uint64   `json:"leaf_index"`
	TreeSize      uint64   `json:"tree_size"`
	InclusionPath []dag.ID `json:"inclusion_path"`
	Root          dag.ID   `json:"root"`
}

// Verify checks the proof by RFC 9162 (transparency-dev/merkle's verifier).
func (p InclusionProof) Verify() error {
	d := p.Tx.Digest()
	if err := mlog.VerifyInclusion(p.LeafIndex, p.TreeSize, mlog.LeafHash(d[:]), hashes(p.InclusionPath), digest(p.Root)); err != nil {
		return fmt.Errorf("checkpoint: inclusion of %s: %w", p.Tx, err)
	}
	return nil
}

// ConsistencyProof proves that the log of FirstSize entries with root
// FirstRoot is a prefix of the log of SecondSize entries with root
// SecondRoot.
type ConsistencyProof struct {
	FirstSize       uint64   `json:"first"`
	SecondSize      uint64   `json:"second"`
	ConsistencyPath []dag.ID `json:"consistency_path"`
	FirstRoot       dag.ID   `json:"first_root"`
	SecondRoot      dag.ID   `json:"second_root"`
}

// Verify checks the proof by RFC 9162.
func (p ConsistencyProof) Verify() error {
	if err := mlog.VerifyConsistency(p.FirstSize, p.SecondSize, hashes(p.ConsistencyPath), digest(p.FirstRoot), digest(p.SecondRoot)); err != nil {
		return fmt.Errorf("checkpoint: consistency %d..%d: %w", p.FirstSize, p.SecondSize, err)
	}
	return nil
}

func hashes(ids []dag.ID) [][]byte {
	hs := make([][]byte, len(ids))
	for i, id := range ids {
		hs[i] = digest(id)
	}
	return hs
}

func digest(id dag.ID) []byte { d := id.Digest(); return d[:] }
