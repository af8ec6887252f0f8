package dag

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"slices"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	"pgregory.net/rapid"
)

func groupedBatch(t *testing.T, n, keys int) []queued {
	t.Helper()
	var q []queued
	for i := range n {
		s, err := SignerFromSeed(bytes.Repeat([]byte{byte(i%keys + 1)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte{byte(i), byte(i >> 8), 'm'}
		q = append(q, queued{k: s.Key(), m: append([]byte(DomainEnvelope), msg...), sig: s.Sign(DomainEnvelope, msg)})
	}
	return q
}

// The merged-key equation accepts a valid batch by itself (so the fast
// path is taken) and refuses one with any bad signature, whichever it is.
func TestGroupedEquation(t *testing.T) {
	t.Run("4 keys", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 40, 4)) })
	t.Run("distinct keys", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 40, 40)) })
	if groupable(groupedBatch(t, 7, 1)) {
		t.Error("7 signatures counted as groupable")
	}
	short := groupedBatch(t, 40, 40)
	short[17].sig = short[17].sig[:63]
	if groupable(short) {
		t.Error("a batch with a 63-byte signature counted as groupable")
	}
}

func testGroupedEquation(t *testing.T, q []queued) {
	if !groupable(q) {
		t.Fatalf("%d well-formed signatures not groupable", len(q))
	}
	if !grouped(q, nil) || !grouped(q, NewKeyCache(0)) {
		t.Fatal("a valid batch fails the grouped equation")
	}
	for i := range q {
		for _, tamper := range []func(queued) queued{
			func(e queued) queued { e.sig = bytes.Clone(e.sig); e.sig[40] ^= 1; return e }, // s
			func(e queued) queued { e.sig = bytes.Clone(e.sig); e.sig[3] ^= 4; return e },  // R
			func(e queued) queued { e.m = append(bytes.Clone(e.m), 'x'); return e },        // message
			func(e queued) queued { e.k = q[(i+1)%len(q)].k; return e },                    // key
			func(e queued) queued {
				e.sig = bytes.Clone(e.sig)
				copy(e.sig[32:], bytes.Repeat([]byte{0xff}, 32))
				return e
			}, // s ≥ L
		} {
			bad := append([]queued(nil), q...)
			bad[i] = tamper(q[i])
			if bad[i].k == q[i].k && bytes.Equal(bad[i].sig, q[i].sig) && bytes.Equal(bad[i].m, q[i].m) {
				continue // the key swap hit the same key
			}
			if grouped(bad, nil) || grouped(bad, NewKeyCache(0)) {
				t.Fatalf("grouped accepted a batch with signature %d tampered", i)
			}
		}
	}
}

// wide sums products exactly: reduced modulo the group order, its sum is
// what math/big makes of the same products, for random terms and for the
// largest ones (z = 2¹²⁸ − 1, x = L − 1) in numbers that carry into every
// limb.
func TestWideSums(t *testing.T) {
	order, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	le := func(b []byte) *big.Int { // little-endian bytes as an integer
		r := bytes.Clone(b)
		slices.Reverse(r)
		return new(big.Int).SetBytes(r)
	}
	check := func(t *rapid.T, zs [][16]byte, xs [][32]byte) {
		var w wide
		want := new(big.Int)
		for i := range zs {
			z0, z1 := binary.LittleEndian.Uint64(zs[i][:]), binary.LittleEndian.Uint64(zs[i][8:])
			w.addMul(z0, z1, xs[i][:])
			want.Add(want, new(big.Int).Mul(le(zs[i][:]), le(xs[i][:])))
		}
		if got := le(w.bytes(nil)); got.Cmp(want) != 0 {
			t.Fatalf("%d terms: wide holds %x, want %x", len(zs), got, want)
		}
		var s scalar.Scalar
		if _, err := s.SetBytesModOrderWide(w.bytes(nil)); err != nil {
			t.Fatal(err)
		}
		var sb [32]byte
		_ = s.ToBytes(sb[:])
		if got, want := le(sb[:]), new(big.Int).Mod(want, order); got.Cmp(want) != 0 {
			t.Fatalf("%d terms: reduced to %x, want %x", len(zs), got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 300).Draw(t, "n")
		zs, xs := make([][16]byte, n), make([][32]byte, n)
		for i := range n {
			copy(zs[i][:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "z"))
			x := new(big.Int).SetBytes(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "x"))
			x.Mod(x, order) // a scalar below L, as sᵢ and kᵢ are
			x.FillBytes(xs[i][:])
			slices.Reverse(xs[i][:])
		}
		check(t, zs, xs)
	})
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom([]int{1, 2, 3, 4096, 65536}).Draw(t, "n")
		zs, xs := make([][16]byte, n), make([][32]byte, n)
		top := new(big.Int).Sub(order, big.NewInt(1))
		for i := range n {
			copy(zs[i][:], bytes.Repeat([]byte{0xff}, 16))
			top.FillBytes(xs[i][:])
			slices.Reverse(xs[i][:])
		}
		check(t, zs, xs)
	})
}
