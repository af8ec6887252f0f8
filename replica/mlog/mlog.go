// Package mlog computes RFC 9162 (Certificate Transparency v2) Merkle
// inclusion and consistency proofs over an append-only list of leaves, for
// the logs a witan node publishes: a session's entry log (leaves are the
// 32-byte digests of the tx ids, as in its checkpoints' roots) and the
// node's refusal log (30k §5, D40). It is pure: no store, no goroutine, no
// clock.
//
// A Tree does not own its leaves: it asks a Leaves function for the leaf
// hash at an index, and keeps only the hashes of complete subtrees of
// 2^Low leaves and above (about 2n/2^Low hashes for n leaves: 4 MiB per
// million leaves with the default Low of 4). A node below Low is
// recomputed from at most 2^Low leaf hashes when a proof needs it, so a
// proof costs O(log n) cached reads plus O(2^Low · log n) hashing.
//
// The proof shapes and the verifier are github.com/transparency-dev/merkle's:
// what Inclusion and Consistency return verifies with proof.VerifyInclusion
// and proof.VerifyConsistency under rfc6962.DefaultHasher.
package mlog

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// DefaultLow is the lowest level whose subtree hashes a Tree keeps.
const DefaultLow = 4

// ErrRange is wrapped by Inclusion and Consistency for an index or size
// outside the tree as it is.
var ErrRange = errors.New("mlog: index or size out of range")

var hasher = rfc6962.DefaultHasher

// LeafHash returns the RFC 9162 leaf hash of data (0x00 || data).
func LeafHash(data []byte) []byte {
	if len(data) == sha256.Size {
		return LeafHashDigest((*[sha256.Size]byte)(data))
	}
	return hasher.HashLeaf(data)
}

// LeafHashDigest is LeafHash of a 32-byte digest (the leaves of a
// session's log and of the refusal log), hashed from one stack buffer:
// rfc6962.DefaultHasher makes a SHA-256 state on the heap for every hash,
// which was most of what a fresh node spent on its logs' trees (a
// 100k-ballot sync: 0.55 µs an entry of 0.85, BenchmarkProductFreshSync
// profile, 2026-12-07). The result is its only allocation.
func LeafHashDigest(d *[sha256.Size]byte) []byte {
	var b [1 + sha256.Size]byte
	b[0] = rfc6962.RFC6962LeafHashPrefix
	copy(b[1:], d[:])
	h := sha256.Sum256(b[:])
	return h[:]
}

// HashChildren returns the RFC 9162 hash of an inner node, SHA-256(0x01 ||
// l || r), as rfc6962.DefaultHasher.HashChildren does, hashed from one
// stack buffer when both are 32-byte hashes (as every node of a tree is).
// compact.RangeFactory and Tree hash with it.
func HashChildren(l, r []byte) []byte {
	if len(l) != sha256.Size || len(r) != sha256.Size {
		return hasher.HashChildren(l, r)
	}
	var b [1 + 2*sha256.Size]byte
	b[0] = rfc6962.RFC6962NodeHashPrefix
	copy(b[1:], l)
	copy(b[1+sha256.Size:], r)
	h := sha256.Sum256(b[:])
	return h[:]
}

// Tree is the proof index of one append-only log. The zero value is not
// usable: make one with New. Not safe for concurrent use.
type Tree struct {
	leaf   func(i uint64) []byte
	low    uint
	size   uint64
	levels [][][]byte // levels[k][j] is the hash of node (low+k, j)
}

// New returns the index of a log whose leaf hash at index i is leaf(i),
// for i below the size given to Grow. low is the lowest level kept
// (DefaultLow if 0).
func New(leaf func(i uint64) []byte, low uint) *Tree {
	if low == 0 {
		low = DefaultLow
	}
	return &Tree{leaf: leaf, low: low}
}

// Size returns the number of leaves indexed.
func (t *Tree) Size() uint64 { return t.size }

// Grow indexes leaves up to size (the log only grows: a smaller size is
// ignored).
func (t *Tree) Grow(size uint64) {
	for t.size < size {
		t.size++
		// Each complete subtree of 2^low leaves adds a node at level low,
		// which may complete nodes above it.
		if t.size%(1<<t.low) != 0 {
			continue
		}
		j := t.size>>t.low - 1
		h := t.compute(t.low, j)
		for k := 0; ; k++ {
			if len(t.levels) == k {
				t.levels = append(t.levels, nil)
			}
			t.levels[k] = append(t.levels[k], h)
			if j%2 == 0 {
				break
			}
			h = HashChildren(t.levels[k][j-1], h)
			j /= 2
		}
	}
}

// compute hashes the complete node (level, index) from the leaves.
func (t *Tree) compute(level uint, index uint64) []byte {
	if level == 0 {
		return t.leaf(index)
	}
	return HashChildren(t.compute(level-1, 2*index), t.compute(level-1, 2*index+1))
}

// node returns the hash of the complete node id.
func (t *Tree) node(id compact.NodeID) []byte {
	if id.Level >= t.low {
		return t.levels[id.Level-t.low][id.Index]
	}
	return t.compute(id.Level, id.Index)
}

func (t *Tree) hashes(n proof.Nodes) ([][]byte, error) {
	hs := make([][]byte, len(n.IDs))
	for i, id := range n.IDs {
		hs[i] = t.node(id)
	}
	return n.Rehash(hs, HashChildren)
}

// Inclusion returns the RFC 9162 inclusion path of leaf index in the tree
// of the first size leaves.
func (t *Tree) Inclusion(index, size uint64) ([][]byte, error) {
	if size > t.size || index >= size {
		return nil, fmt.Errorf("%w: leaf %d in a tree of %d (log size %d)", ErrRange, index, size, t.size)
	}
	n, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, err
	}
	return t.hashes(n)
}

// Consistency returns the RFC 9162 consistency proof between the trees of
// the first size1 and size2 leaves.
func (t *Tree) Consistency(size1, size2 uint64) ([][]byte, error) {
	if size2 > t.size || size1 > size2 {
		return nil, fmt.Errorf("%w: from %d to %d (log size %d)", ErrRange, size1, size2, t.size)
	}
	n, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, err
	}
	return t.hashes(n)
}

// Root returns the RFC 9162 root of the first size leaves.
func (t *Tree) Root(size uint64) ([]byte, error) {
	if size > t.size {
		return nil, fmt.Errorf("%w: root of %d (log size %d)", ErrRange, size, t.size)
	}
	if size == 0 {
		return hasher.EmptyRoot(), nil
	}
	// The root folds the complete subtrees the size decomposes into,
	// right to left (RFC 9162 §2.1.1).
	ids := compact.RangeNodes(0, size, nil)
	root := t.node(ids[len(ids)-1])
	for i := len(ids) - 2; i >= 0; i-- {
		root = HashChildren(t.node(ids[i]), root)
	}
	return root, nil
}

// VerifyInclusion checks an inclusion path of the leaf with hash leafHash
// at index in the tree of size leaves with root root.
func VerifyInclusion(index, size uint64, leafHash []byte, path [][]byte, root []byte) error {
	return proof.VerifyInclusion(hasher, index, size, leafHash, path, root)
}

// VerifyConsistency checks a consistency proof between roots root1 (size1
// leaves) and root2 (size2 leaves).
func VerifyConsistency(size1, size2 uint64, p [][]byte, root1, root2 []byte) error {
	return proof.VerifyConsistency(hasher, size1, size2, p, root1, root2)
}
