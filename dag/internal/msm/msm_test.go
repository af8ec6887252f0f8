package msm

import (
	"crypto/sha512"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	"pgregory.net/rapid"
)

var bigP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))

// layout64 reports whether voi holds its points as fromVoi reads them (its
// 64-bit field backend), judged apart from the bridge: the base point read
// through fromVoi has Z = 1 and y = 4/5. With -tags force32bit on amd64
// voi's points are as large but hold ten 32-bit limbs a coordinate.
func layout64() bool {
	if unsafe.Sizeof(curve.EdwardsPoint{}) != unsafe.Sizeof(voiLayout{}) {
		return false
	}
	b := fromVoi(curve.ED25519_BASEPOINT_POINT)
	y := new(big.Int).Mul(big.NewInt(4), new(big.Int).ModInverse(big.NewInt(5), bigP))
	return b.z.big().Cmp(big.NewInt(1)) == 0 && b.y.big().Cmp(y.Mod(y, bigP)) == 0
}

// needLayout skips a test that reads voi's points where they are not laid
// out as fromVoi reads them.
func needLayout(t testing.TB) {
	if !layout64() {
		t.Skip("voi's points are not in its 64-bit layout here (-tags force32bit?): fromVoi does not apply")
	}
}

func (v *fe) big() *big.Int {
	r := new(big.Int)
	for i := 4; i >= 0; i-- {
		r.Lsh(r, 51)
		r.Add(r, new(big.Int).SetUint64(v[i]))
	}
	return r.Mod(r, bigP)
}

// looseFe draws limbs below 2^52, the bound every operation keeps, the
// largest ones included.
func looseFe(t *rapid.T, name string) fe {
	var v fe
	for i := range v {
		v[i] = rapid.OneOf(
			rapid.Uint64Range(0, 1<<52-1),
			rapid.Uint64Range(1<<52-1<<20, 1<<52-1),
			rapid.Uint64Range(0, 40),
		).Draw(t, name)
	}
	return v
}

func checkLoose(t *rapid.T, what string, v fe) {
	for i, l := range v {
		if l >= 1<<52 {
			t.Fatalf("%s: limb %d is %#x, not below 2^52", what, i, l)
		}
	}
}

// The field operations against math/big, limbs at their bounds included.
func TestFieldOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := looseFe(t, "a"), looseFe(t, "b")
		ab, bb := a.big(), b.big()
		m := feMul(&a, &b)
		checkLoose(t, "mul", m)
		if want := new(big.Int).Mod(new(big.Int).Mul(ab, bb), bigP); m.big().Cmp(want) != 0 {
			t.Fatalf("mul: %v, want %v", m.big(), want)
		}
		s := feAdd(&a, &b)
		checkLoose(t, "add", s)
		if want := new(big.Int).Mod(new(big.Int).Add(ab, bb), bigP); s.big().Cmp(want) != 0 {
			t.Fatal("add")
		}
		d := feSub(&a, &b)
		checkLoose(t, "sub", d)
		if want := new(big.Int).Mod(new(big.Int).Sub(ab, bb), bigP); d.big().Cmp(want) != 0 {
			t.Fatal("sub")
		}
		c := a.canonical()
		for i, l := range c {
			if l > mask51 {
				t.Fatalf("canonical limb %d: %#x", i, l)
			}
		}
		if c.big().Cmp(ab) != 0 {
			t.Fatal("canonical changed the value")
		}
		var cb big.Int
		for i := 4; i >= 0; i-- {
			cb.Lsh(&cb, 51)
			cb.Add(&cb, new(big.Int).SetUint64(c[i]))
		}
		if cb.Cmp(bigP) >= 0 {
			t.Fatal("canonical is not below p")
		}
	})
}

func TestConstants(t *testing.T) {
	d := new(big.Int).Mul(big.NewInt(-121665), new(big.Int).ModInverse(big.NewInt(121666), bigP))
	d.Lsh(d, 1).Mod(d, bigP)
	if d2.big().Cmp(d) != 0 {
		t.Fatalf("2d: %v, want %v", d2.big(), d)
	}
	if fourP.big().Sign() != 0 {
		t.Fatal("4p is not 0 mod p")
	}
}

func scalarFrom(i int, bytes int) *scalar.Scalar {
	h := sha512.Sum512([]byte{'t', byte(i), byte(i >> 8), byte(bytes)})
	var s scalar.Scalar
	if bytes >= 32 {
		s.SetBytesModOrderWide(h[:])
		return &s
	}
	var b [32]byte
	copy(b[:bytes], h[:])
	s.SetBits(b[:])
	return &s
}

// The single-lane point arithmetic against voi's.
func TestPointOps(t *testing.T) {
	needLayout(t)
	for i := range 20 {
		a := curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarFrom(i, 32))
		b := curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarFrom(i+100, 32))
		pa, pb := fromVoi(a), fromVoi(b)
		var sum, dbl point
		sum.add(&pa, &pb)
		dbl.double(&pa)
		ws, wd := fromVoi(curve.NewEdwardsPoint().Add(a, b)), fromVoi(curve.NewEdwardsPoint().Add(a, a))
		if !sum.equal(&ws) || !dbl.equal(&wd) {
			t.Fatalf("point %d: sum or double differs from voi's", i)
		}
		var c curve.CompressedEdwardsY
		c.SetEdwardsPoint(curve.NewEdwardsPoint().Add(a, b))
		if sum.compress() != c {
			t.Fatal("compress differs from voi's")
		}
		if sum.equal(&pa) {
			t.Fatal("equal says a+b = a")
		}
	}
}

// decompressed returns k·B as decompressing its encoding gives it, with Z
// = 1, as a batch check's points are.
func decompressed(k *scalar.Scalar) *curve.EdwardsPoint {
	var c curve.CompressedEdwardsY
	c.SetEdwardsPoint(curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, k))
	p, err := curve.NewEdwardsPoint().SetCompressedY(&c)
	if err != nil {
		panic(err)
	}
	return p
}

// randomBuckets fills buckets with points in random representations: each
// a multiple of the base point, scaled by a random Z (X, Y, Z, T all times
// the same λ), so that limbs differ from voi's own.
func randomBuckets(r *rand.Rand, b *buckets) {
	base := make([]point, 16)
	for i := range base {
		base[i] = fromVoi(curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarFrom(300+i, 32)))
	}
	base = append(base, identity())
	for d := range b {
		for j := range 8 {
			p := base[r.IntN(len(base))]
			var l fe
			for i := range l {
				l[i] = r.Uint64N(1 << 51)
			}
			l[0] |= 1
			p = point{feMul(&p.x, &l), feMul(&p.y, &l), feMul(&p.z, &l), feMul(&p.t, &l)}
			b[d][j].set(&p)
		}
	}
}

// sameCoordinates reports whether p and q have the same X, Y, Z and T as
// field elements (not only as points): the same formulas on the same
// inputs, whatever the limbs' carries.
func sameCoordinates(p, q *point) bool {
	return p.x.canonical() == q.x.canonical() && p.y.canonical() == q.y.canonical() &&
		p.z.canonical() == q.z.canonical() && p.t.canonical() == q.t.canonical()
}

// The kernels against the generic code, coordinate for coordinate: the same
// formulas, in the same order, give the same field elements (the carries
// may leave different limbs for one).
func TestKernelsMatchGeneric(t *testing.T) {
	needLayout(t)
	if !hasKernels {
		t.Skip("no AVX-512 IFMA here")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		var b1 buckets
		randomBuckets(r, &b1)
		b2 := b1
		n := 300
		pts := make([]cachedPoint, n)
		digits := make([]uint64, n)
		for i := range pts {
			p := fromVoi(decompressed(scalarFrom(1000*round+i, 32)))
			pts[i] = p.cached()
			digits[i] = r.Uint64()
			if i%7 == 0 {
				digits[i] = 0x0101010101010101 * uint64(r.IntN(256)) // every lane one bucket
			}
		}
		accum(&b1, pts, digits)
		accumGeneric(&b2, pts, digits)
		for d := range b1 {
			for j := range b1[d] {
				if p, q := b1[d][j].get(), b2[d][j].get(); !sameCoordinates(&p, &q) {
					t.Fatalf("round %d: accumIFMA differs from accumGeneric in lane %d's bucket %d", round, j, d)
				}
			}
		}
		var o1, o2 point8
		sums(&b1, &o1)
		sumsGeneric(&b2, &o2)
		for j := range 8 {
			if p, q := o1.lane(j), o2.lane(j); !sameCoordinates(&p, &q) {
				t.Fatalf("round %d: sumsIFMA differs from sumsGeneric in lane %d", round, j)
			}
		}
	}
}

// voiSum is voi's answer.
func voiSum(scs []*scalar.Scalar, pts []*curve.EdwardsPoint) (point, bool) {
	var s curve.EdwardsPoint
	s.MultiscalarMulVartime(scs, pts)
	return fromVoi(&s), s.IsSmallOrder()
}

func sumOf(s *Scratch, scs []*scalar.Scalar, pts []*curve.EdwardsPoint) point {
	b := make([]scalarBytes, len(scs))
	for i, sc := range scs {
		sc.ToBytes(b[i][:])
	}
	return s.sum(pts, b)
}

// The whole multiplication against voi's, with the kernels and with the
// generic code: random sets of points and scalars of the lengths a batch
// check gives, zero scalars, repeated and small-order points.
func TestSumMatchesVoi(t *testing.T) {
	needLayout(t)
	pool := make([]*curve.EdwardsPoint, 64)
	for i := range pool {
		pool[i] = curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, scalarFrom(2000+i, 32))
	}
	for _, enc := range [][32]byte{{1}, {}, {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		c := curve.CompressedEdwardsY(enc)
		p, err := curve.NewEdwardsPoint().SetCompressedY(&c)
		if err != nil {
			t.Fatal(err)
		}
		pool = append(pool, p)
	}
	var fast, generic Scratch
	generic.kernels = kernels{accumGeneric, sumsGeneric}
	rapid.Check(t, func(t *rapid.T) {
		// the upper halves of full scalars by voi or by the passes
		fast.highAt = rapid.SampledFrom([]int{1, 4, fewHigh, 1 << 20}).Draw(t, "highAt")
		generic.highAt = fast.highAt
		n := rapid.IntRange(0, 120).Draw(t, "n")
		pts := make([]*curve.EdwardsPoint, n)
		scs := make([]*scalar.Scalar, n)
		for i := range n {
			pts[i] = pool[rapid.IntRange(0, len(pool)-1).Draw(t, "p")]
			scs[i] = scalarFrom(rapid.IntRange(0, 1<<16).Draw(t, "s"), rapid.SampledFrom([]int{0, 1, 8, 9, 16, 24, 32}).Draw(t, "len"))
		}
		want, small := voiSum(scs, pts)
		if got := sumOf(&generic, scs, pts); !got.equal(&want) || got.isSmallOrder() != small {
			t.Fatal("generic sum differs from voi's")
		}
		if hasKernels {
			if got := sumOf(&fast, scs, pts); !got.equal(&want) || got.isSmallOrder() != small {
				t.Fatal("kernels' sum differs from voi's")
			}
		}
	})
}

// A sum that is of small order is seen as such: Σ zᵢ·Pᵢ − (Σ zᵢ·kᵢ)·B for
// Pᵢ = kᵢ·B, plus a point of order 2, with few points (voi) and many
// (the passes); a changed scalar is not.
func TestSmallOrderSum(t *testing.T) {
	if !Enabled() {
		t.Skip("fast path off here")
	}
	for _, n := range []int{50, minPoints + 40} {
		var pts []*curve.EdwardsPoint
		var scs []*scalar.Scalar
		var total scalar.Scalar
		for i := range n {
			k := scalarFrom(5000+i, 32)
			z := scalarFrom(6000+i, 16)
			pts = append(pts, decompressed(k))
			scs = append(scs, z)
			var zk scalar.Scalar
			zk.Mul(z, k)
			total.Add(&total, &zk)
		}
		total.Neg(&total)
		order2 := curve.CompressedEdwardsY{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
		t2, err := curve.NewEdwardsPoint().SetCompressedY(&order2)
		if err != nil {
			t.Fatal(err)
		}
		pts = append(pts, curve.ED25519_BASEPOINT_POINT, t2)
		scs = append(scs, &total, scalarFrom(7001, 32))
		var s Scratch
		if !s.IsSmallOrderSum(scs, pts) || !s.smallOrder(scs, pts) {
			t.Fatalf("%d points: a sum of small order is not seen as such", len(pts))
		}
		scs[0] = scalarFrom(7000, 16)
		if s.IsSmallOrderSum(scs, pts) || s.smallOrder(scs, pts) {
			t.Fatalf("%d points: a changed scalar still sums to small order", len(pts))
		}
	}
}

// The bridge passes with the kernels and refuses a kernel that is wrong.
func TestBridge(t *testing.T) {
	if got, want := bridge(accumGeneric, sumsGeneric), layout64(); got != want {
		t.Fatalf("the bridge says %v for the generic code with voi's 64-bit layout %v", got, want)
	}
	broken := func(b *buckets, out *point8) {
		sumsGeneric(b, out)
		out[0][0][3]++
	}
	if bridge(accumGeneric, broken) {
		t.Fatal("the bridge passes a broken kernel")
	}
}

// Where the CPU has AVX-512 IFMA, the fast path is on.
func TestFastPathOnWhereItCan(t *testing.T) {
	needLayout(t)
	if hasKernels && !Enabled() {
		t.Fatal("the CPU has AVX-512 IFMA but the bridge refused the kernels")
	}
}

// BenchmarkHighHalves: a batch of 1,024 signatures by m keys, the keys'
// upper halves by voi or by two more passes: where they cross is fewHigh.
func BenchmarkHighHalves(b *testing.B) {
	for _, m := range []int{2, 16, 64, 128} {
		n := 1024 + m
		pts := make([]*curve.EdwardsPoint, n)
		scs := make([]*scalar.Scalar, n)
		for i := range pts {
			pts[i] = decompressed(scalarFrom(i, 32))
			if i < 1024 {
				scs[i] = scalarFrom(i, 16)
			} else {
				scs[i] = scalarFrom(i, 32)
			}
		}
		for _, via := range []string{"voi", "passes"} {
			b.Run(fmt.Sprintf("keys=%d/%s", m, via), func(b *testing.B) {
				if !Enabled() {
					b.Skip("off")
				}
				s := Scratch{highAt: 1 << 20}
				if via == "passes" {
					s.highAt = -1
				}
				for range b.N {
					s.IsSmallOrderSum(scs, pts)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/sig")
			})
		}
	}
}

// BenchmarkCrossover: batches of n signatures by one key and by n keys,
// through voi and through the passes (forced), for minPoints.
func BenchmarkCrossover(b *testing.B) {
	for _, keys := range []string{"one", "distinct"} {
		for _, n := range []int{32, 64, 96, 128, 192, 256} {
			var pts []*curve.EdwardsPoint
			var scs []*scalar.Scalar
			for i := range n {
				pts = append(pts, decompressed(scalarFrom(i, 32)))
				scs = append(scs, scalarFrom(i, 16))
			}
			k := 1
			if keys == "distinct" {
				k = n
			}
			for i := range k {
				pts = append(pts, decompressed(scalarFrom(5000+i, 32)))
				scs = append(scs, scalarFrom(5000+i, 32))
			}
			pts = append(pts, curve.ED25519_BASEPOINT_POINT)
			scs = append(scs, scalarFrom(9999, 32))
			b.Run(fmt.Sprintf("%s/n=%d/voi", keys, n), func(b *testing.B) {
				for range b.N {
					var s curve.EdwardsPoint
					s.MultiscalarMulVartime(scs, pts)
					s.IsSmallOrder()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sig")
			})
			b.Run(fmt.Sprintf("%s/n=%d/passes", keys, n), func(b *testing.B) {
				if !Enabled() {
					b.Skip("off")
				}
				var s Scratch
				for range b.N {
					s.smallOrder(scs, pts)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sig")
			})
		}
	}
}

func BenchmarkSum(b *testing.B) {
	const n = 1024
	pts := make([]*curve.EdwardsPoint, 2*n)
	scs := make([]*scalar.Scalar, 2*n)
	for i := range pts {
		pts[i] = decompressed(scalarFrom(i, 32))
		if i < n {
			scs[i] = scalarFrom(i, 16)
		} else {
			scs[i] = scalarFrom(i, 32)
		}
	}
	b.Run("voi", func(b *testing.B) {
		for range b.N {
			var s curve.EdwardsPoint
			s.MultiscalarMulVartime(scs, pts)
			s.IsSmallOrder()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sig")
	})
	b.Run("ifma", func(b *testing.B) {
		if !Enabled() {
			b.Skip("off")
		}
		var s Scratch
		for range b.N {
			s.IsSmallOrderSum(scs, pts)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sig")
	})
}
