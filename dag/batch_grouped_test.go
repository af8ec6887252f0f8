package dag

import (
	"bytes"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"slices"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
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
// path is taken) and refuses one with any bad signature, whichever it is:
// batches small enough for voi's multiplication and large enough for
// msm's passes (every fifth signature tampered there).
func TestGroupedEquation(t *testing.T) {
	t.Run("4 keys", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 40, 4), 1) })
	t.Run("distinct keys", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 40, 40), 1) })
	t.Run("one key, passes", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 200, 1), 5) })
	t.Run("distinct keys, passes", func(t *testing.T) { testGroupedEquation(t, groupedBatch(t, 120, 120), 5) })
	if groupable(groupedBatch(t, 7, 1)) {
		t.Error("7 signatures counted as groupable")
	}
	short := groupedBatch(t, 40, 40)
	short[17].sig = short[17].sig[:63]
	if groupable(short) {
		t.Error("a batch with a 63-byte signature counted as groupable")
	}
}

// A valid batch passes the merged-key equation whatever its zᵢ: fifty
// draws each for batches through voi's multiplication and through msm's
// passes, with keys repeating and not (a zᵢ whose top digit is −128 comes
// once in 256 signatures, and exceeds what 128 signed bits hold).
func TestGroupedValidEveryDraw(t *testing.T) {
	for _, c := range []struct{ n, keys int }{{40, 1}, {64, 4}, {40, 40}, {200, 1}, {120, 120}} {
		q := groupedBatch(t, c.n, c.keys)
		var g groupScratch
		for draw := range 50 {
			if !g.grouped(q, nil) {
				t.Fatalf("%d signatures by %d keys: a valid batch fails the equation (draw %d)", c.n, c.keys, draw)
			}
		}
	}
}

func testGroupedEquation(t *testing.T, q []queued, stride int) {
	if !groupable(q) {
		t.Fatalf("%d well-formed signatures not groupable", len(q))
	}
	if !grouped(q, nil) || !grouped(q, NewKeyCache(0)) {
		t.Fatal("a valid batch fails the grouped equation")
	}
	for i := 0; i < len(q); i += stride {
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

// torsionSigned signs msg as seed's key would, but with R = r·B + T for a
// point T of order 8: valid under ZIP-215's cofactored equation, which
// [8] makes blind to T, and the case where the batch's zᵢ·Rᵢ, taken as
// integers rather than modulo the group order, differ from voi's.
func torsionSigned(t *testing.T, seed []byte, i int, m []byte) []byte {
	t.Helper()
	h := sha512.Sum512(seed)
	h[0] &= 248
	h[31] &= 127
	h[31] |= 64
	var a, r, k, s scalar.Scalar
	if _, err := a.SetBytesModOrder(h[:32]); err != nil {
		t.Fatal(err)
	}
	rh := sha512.Sum512([]byte{'r', byte(i), byte(i >> 8)})
	if _, err := r.SetBytesModOrderWide(rh[:]); err != nil {
		t.Fatal(err)
	}
	// a point of order 8 (its encoding is one of the eight torsion points')
	tb, _ := hex.DecodeString("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
	var tc curve.CompressedEdwardsY
	copy(tc[:], tb)
	tp, err := curve.NewEdwardsPoint().SetCompressedY(&tc)
	if err != nil || !tp.IsSmallOrder() {
		t.Fatal("no point of order 8", err)
	}
	R := curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, &r)
	R.Add(R, tp)
	var rc, ac curve.CompressedEdwardsY
	rc.SetEdwardsPoint(R)
	ac.SetEdwardsPoint(curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, &a))
	d := sha512.New()
	d.Write(rc[:])
	d.Write(ac[:])
	d.Write(m)
	if _, err := k.SetBytesModOrderWide(d.Sum(nil)); err != nil {
		t.Fatal(err)
	}
	s.Mul(&k, &a)
	s.Add(&s, &r)
	sig := append([]byte(nil), rc[:]...)
	sb, _ := s.MarshalBinary()
	return append(sig, sb...)
}

// Signatures whose R has a part of order 8 are valid under ZIP-215, and a
// batch of them with ordinary ones passes the merged-key equation, through
// voi's multiplication and through msm's passes; one of them tampered
// fails it.
func TestGroupedTorsion(t *testing.T) {
	for _, c := range []struct{ n, keys int }{{40, 40}, {40, 1}, {120, 120}, {200, 1}} {
		q := groupedBatch(t, c.n, c.keys)
		for i := 0; i < c.n; i += 3 {
			seed := bytes.Repeat([]byte{byte(i%c.keys + 1)}, 32)
			q[i].sig = torsionSigned(t, seed, i, q[i].m)
			if !Verify(q[i].k, "", q[i].m, q[i].sig) {
				t.Fatalf("signature %d with R of order 8 added: not valid under ZIP-215", i)
			}
		}
		if !grouped(q, nil) {
			t.Fatalf("%d signatures by %d keys with R of order 8 added: the grouped equation fails", c.n, c.keys)
		}
		q[3].sig = bytes.Clone(q[3].sig)
		q[3].sig[40] ^= 1
		if grouped(q, nil) {
			t.Fatalf("%d signatures by %d keys: a tampered one passes", c.n, c.keys)
		}
	}
}

// orderMinus gives L − x, worked out with math/big.
func TestOrderMinus(t *testing.T) {
	order, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	rapid.Check(t, func(t *rapid.T) {
		x := new(big.Int).SetBytes(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "x"))
		x.Mod(x, new(big.Int).Add(order, big.NewInt(1))) // 0 to L
		var xb [32]byte
		x.FillBytes(xb[:])
		slices.Reverse(xb[:])
		var out [32]byte
		got := orderMinus(&out, xb[:])
		slices.Reverse(got)
		if want := new(big.Int).Sub(order, x); new(big.Int).SetBytes(got).Cmp(want) != 0 {
			t.Fatalf("L − %v: got %x", x, got)
		}
	})
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
