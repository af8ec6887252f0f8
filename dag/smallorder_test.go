package dag_test

import (
	"math/big"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// torsionEncodings works out, from the curve equation alone, the 32-byte
// encodings of edwards25519's eight small-order points, canonical and not:
// -x² + y² = 1 + d·x²·y² over p = 2^255 - 19, d = -121665/121666.
//   - order 1: (0, 1); order 2: (0, -1): x = 0, so y² = 1.
//   - order 4: (±√-1, 0): y = 0, so -x² = 1.
//   - order 8: P with 2P of order 4, i.e. 2P has y = 0. On this curve
//     (a = -1) doubling gives y(2P) = (y² + x²) / (2 - y² + x²), which is 0
//     exactly when y² = -x²; put in the equation: -2x² = 1 - d·x⁴, so
//     x² = (1 ± √(1+d)) / d and y² = -x².
//
// An encoding is y as 255 little-endian bits plus x's sign in the top bit;
// ZIP-215 also accepts y + p where that fits in 255 bits (y < 19).
func torsionEncodings(t *testing.T) [][32]byte {
	t.Helper()
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	mod := func(x *big.Int) *big.Int { return x.Mod(x, p) }
	inv := func(x *big.Int) *big.Int { return new(big.Int).ModInverse(x, p) }
	d := mod(new(big.Int).Mul(big.NewInt(-121665), inv(big.NewInt(121666))))
	var ys []*big.Int
	ys = append(ys, big.NewInt(1), new(big.Int).Sub(p, big.NewInt(1)), big.NewInt(0))
	r := new(big.Int).ModSqrt(mod(new(big.Int).Add(big.NewInt(1), d)), p)
	if r == nil {
		t.Fatal("1 + d has no square root mod p")
	}
	for _, num := range []*big.Int{mod(new(big.Int).Add(big.NewInt(1), r)), mod(new(big.Int).Sub(big.NewInt(1), r))} {
		x2 := mod(new(big.Int).Mul(num, inv(d)))
		y2 := mod(new(big.Int).Neg(x2))
		// x² must itself be a square for x to exist.
		if new(big.Int).ModSqrt(x2, p) == nil {
			continue
		}
		if y := new(big.Int).ModSqrt(y2, p); y != nil {
			ys = append(ys, y, mod(new(big.Int).Neg(y)))
		}
	}
	if len(ys) != 5 {
		t.Fatalf("worked out %d y-coordinates of torsion points, want 5 (1, -1, 0, ±y8)", len(ys))
	}
	var out [][32]byte
	enc := func(y *big.Int, sign bool) {
		var e [32]byte
		b := y.Bytes() // big-endian
		for i := range b {
			e[i] = b[len(b)-1-i]
		}
		if sign {
			e[31] |= 0x80
		}
		out = append(out, e)
	}
	for _, y := range ys {
		for _, sign := range []bool{false, true} {
			enc(y, sign)
			if y.Cmp(big.NewInt(19)) < 0 {
				enc(new(big.Int).Add(y, p), sign) // non-canonical y + p
			}
		}
	}
	return out
}

func TestKeySmallOrder(t *testing.T) {
	encs := torsionEncodings(t)
	small := 0
	for _, e := range encs {
		k, err := dag.KeyFromBytes(e[:])
		if err != nil {
			t.Fatal(err)
		}
		// ZIP-215 decodes every one of them ("negative zero" x and
		// non-canonical y included), so each must be reported.
		if k.SmallOrder() {
			small++
		}
	}
	// 5 y's × 2 signs + the non-canonical y+p for y = 0 and 1 × 2 signs.
	if len(encs) != 14 {
		t.Fatalf("%d encodings, want 14", len(encs))
	}
	if small != len(encs) {
		t.Fatalf("SmallOrder true for %d of the %d torsion encodings, want all", small, len(encs))
	}
	zero, _ := dag.KeyFromBytes(make([]byte, 32))
	if !zero.SmallOrder() {
		t.Fatal("the all-zero key (y = 0, a point of order 4) is not reported small order")
	}
	// A forged signature by it verifies for any message: R = identity, S = 0.
	sig := make([]byte, 64)
	sig[0] = 1
	if !dag.Verify(zero, dag.DomainEnvelope, []byte("anything at all"), sig) {
		t.Fatal("ZIP-215 no longer accepts R = identity, S = 0 for a small-order key: revisit SmallOrder's callers")
	}
	for i := range 20 {
		s, err := dag.SignerFromSeed(make32(byte(i)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Key().SmallOrder() {
			t.Fatalf("the key of seed %d is reported small order", i)
		}
	}
	if (dag.Key{}).SmallOrder() {
		t.Fatal("the zero Key is reported small order")
	}
}

func make32(b byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}
