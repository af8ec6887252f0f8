package mlog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"pgregory.net/rapid"

	"github.com/witan-dev/witan/replica/mlog"
)

func leaves(n int) [][]byte {
	ls := make([][]byte, n)
	for i := range ls {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		d := sha256.Sum256(b[:])
		ls[i] = mlog.LeafHash(d[:])
	}
	return ls
}

func tree(ls [][]byte, low uint) *mlog.Tree {
	t := mlog.New(func(i uint64) []byte { return ls[i] }, low)
	t.Grow(uint64(len(ls)))
	return t
}

// refRoot is the root by the library's compact range, independent of Tree.
func refRoot(ls [][]byte) []byte {
	if len(ls) == 0 {
		return rfc6962.DefaultHasher.EmptyRoot()
	}
	r := (&compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}).NewEmptyRange(0)
	for _, l := range ls {
		_ = r.Append(l, nil)
	}
	h, _ := r.GetRootHash(nil)
	return h
}

// RFC 9162 §2.1.1 by hand for three leaves d0, d1, d2:
// MTH = H(0x01 || H(0x01 || H(0x00||d0) || H(0x00||d1)) || H(0x00||d2)).
func TestRootByHand(t *testing.T) {
	d := [][]byte{[]byte("d0"), []byte("d1"), []byte("d2")}
	h := func(b ...[]byte) []byte { s := sha256.Sum256(bytes.Join(b, nil)); return s[:] }
	want := h([]byte{1}, h([]byte{1}, h([]byte{0}, d[0]), h([]byte{0}, d[1])), h([]byte{0}, d[2]))
	ls := [][]byte{h([]byte{0}, d[0]), h([]byte{0}, d[1]), h([]byte{0}, d[2])}
	got, err := tree(ls, 1).Root(3)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("root = %x, %v; want %x", got, err, want)
	}
	// The empty tree's root is SHA-256 of the empty string.
	e, _ := tree(nil, 0).Root(0)
	if hex.EncodeToString(e) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty root %x", e)
	}
}

// For random logs, every inclusion and consistency proof verifies with the
// library's verifier, and none verifies for another leaf or size.
func TestProofsRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 300).Draw(rt, "n")
		low := uint(rapid.IntRange(1, 5).Draw(rt, "low"))
		ls := leaves(n)
		tr := tree(ls, low)
		size := uint64(rapid.IntRange(1, n).Draw(rt, "size"))
		idx := uint64(rapid.IntRange(0, int(size)-1).Draw(rt, "idx"))
		root := refRoot(ls[:size])
		if got, _ := tr.Root(size); !bytes.Equal(got, root) {
			rt.Fatalf("root of %d differs from the library's", size)
		}
		p, err := tr.Inclusion(idx, size)
		if err != nil {
			rt.Fatal(err)
		}
		if err := mlog.VerifyInclusion(idx, size, ls[idx], p, root); err != nil {
			rt.Fatalf("inclusion %d/%d: %v", idx, size, err)
		}
		// Another leaf at the same index, or the same leaf at another
		// index, never verifies.
		if other := (idx + 1) % size; other != idx {
			if mlog.VerifyInclusion(idx, size, ls[other], p, root) == nil {
				rt.Fatalf("leaf %d verified at index %d", other, idx)
			}
			if mlog.VerifyInclusion(other, size, ls[idx], p, root) == nil {
				rt.Fatalf("leaf %d verified at index %d", idx, other)
			}
		}
		if size < uint64(n) && mlog.VerifyInclusion(idx, size+1, ls[idx], p, refRoot(ls[:size+1])) == nil {
			rt.Fatalf("proof for size %d verified at size %d", size, size+1)
		}
		// Consistency between size1 <= size2.
		s1 := uint64(rapid.IntRange(0, int(size)).Draw(rt, "s1"))
		c, err := tr.Consistency(s1, size)
		if err != nil {
			rt.Fatal(err)
		}
		r1 := refRoot(ls[:s1])
		if err := mlog.VerifyConsistency(s1, size, c, r1, root); err != nil {
			rt.Fatalf("consistency %d..%d: %v", s1, size, err)
		}
		if s1 > 0 && s1 < size {
			// A rewritten first tree (leaf 0 changed) is caught.
			bad := append([][]byte{mlog.LeafHash([]byte("rewritten"))}, ls[1:s1]...)
			if mlog.VerifyConsistency(s1, size, c, refRoot(bad), root) == nil {
				rt.Fatalf("consistency %d..%d verified a rewritten first tree", s1, size)
			}
			if mlog.VerifyConsistency(s1-1, size, c, refRoot(ls[:s1-1]), root) == nil && len(c) > 0 {
				rt.Fatalf("consistency proof for %d verified for %d", s1, s1-1)
			}
		}
	})
}

func TestRange(t *testing.T) {
	tr := tree(leaves(5), 0)
	if _, err := tr.Inclusion(5, 5); err == nil {
		t.Fatal("index 5 of 5 gave a proof")
	}
	if _, err := tr.Inclusion(0, 6); err == nil {
		t.Fatal("size 6 of 5 gave a proof")
	}
	if _, err := tr.Consistency(4, 3); err == nil {
		t.Fatal("from > to gave a proof")
	}
}

// LeafHash, LeafHashDigest and HashChildren hash what
// rfc6962.DefaultHasher hashes, for 32-byte inputs (their stack-buffer
// path) and others (the library's), and one hash does not change the
// next one's result (the buffers are per call).
func TestHashesAreRFC6962s(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom([]int{0, 1, 31, 32, 33, 64}).Draw(t, "n")
		a := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "a")
		b := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "b")
		h := rfc6962.DefaultHasher
		if got, want := mlog.LeafHash(a), h.HashLeaf(a); !bytes.Equal(got, want) {
			t.Fatalf("LeafHash(%x) = %x, want %x", a, got, want)
		}
		if n == sha256.Size {
			if got, want := mlog.LeafHashDigest((*[32]byte)(a)), h.HashLeaf(a); !bytes.Equal(got, want) {
				t.Fatalf("LeafHashDigest(%x) = %x, want %x", a, got, want)
			}
		}
		first := mlog.HashChildren(a, b)
		if want := h.HashChildren(a, b); !bytes.Equal(first, want) {
			t.Fatalf("HashChildren(%x, %x) = %x, want %x", a, b, first, want)
		}
		mlog.HashChildren(b, a)
		if want := h.HashChildren(a, b); !bytes.Equal(first, want) {
			t.Fatalf("a later hash changed an earlier result: %x, want %x", first, want)
		}
	})
}

// A leaf hash of a digest and an inner node's hash allocate their result
// only (32 bytes each): no SHA-256 state on the heap.
func TestHashesAllocateTheirResult(t *testing.T) {
	var d [32]byte
	l, r := make([]byte, 32), make([]byte, 32)
	if n := testing.AllocsPerRun(100, func() { mlog.LeafHashDigest(&d) }); n > 1 {
		t.Errorf("LeafHashDigest: %v allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { mlog.HashChildren(l, r) }); n > 1 {
		t.Errorf("HashChildren: %v allocations, want 1", n)
	}
}
