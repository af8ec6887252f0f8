package msm

import (
	"crypto/sha512"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
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
		mags := make([]uint64, n)
		signs := make([]uint8, n)
		for i := range pts {
			p := fromVoi(decompressed(scalarFrom(1000*round+i, 32)))
			pts[i] = p.cached()
			for j := range 8 {
				mags[i] |= r.Uint64N(maxDigit+1) << (8 * j)
			}
			signs[i] = uint8(r.Uint32())
			if i%7 == 0 {
				mags[i] = 0x0101010101010101 * r.Uint64N(maxDigit+1) // every lane one bucket
			}
		}
		accum(&b1, pts, mags, signs)
		accumGeneric(&b2, pts, mags, signs)
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

// sumOf is s's sum of full scalars and Shorts, by the passes.
func sumOf(s *Scratch, scs []*scalar.Scalar, pts []*curve.EdwardsPoint, shorts []Short, shortPts []*curve.EdwardsPoint) point {
	var ds []digits
	for _, sc := range scs {
		var b [32]byte
		sc.ToBytes(b[:])
		ds = append(ds, recode(&b))
	}
	for i := range shorts {
		ds = append(ds, shortDigits(&shorts[i]))
	}
	return s.sum(append(slices.Clone(pts), shortPts...), ds)
}

// voiSumAll is voi's answer for full scalars and Shorts, each Short taken
// as the integer it is (shortTerms).
func voiSumAll(scs []*scalar.Scalar, pts []*curve.EdwardsPoint, shorts []Short, shortPts []*curve.EdwardsPoint) (point, bool) {
	tScs, tPts := shortTerms(shorts, shortPts)
	return voiSum(append(slices.Clone(scs), tScs...), append(slices.Clone(pts), tPts...))
}

// drawShort draws a Short whose digits lean to the edges of their range.
func drawShort(t *rapid.T) (s Short) {
	for k := range s {
		s[k] = int8(rapid.OneOf(rapid.Just(-128), rapid.Just(127), rapid.Just(0), rapid.Just(-1), rapid.IntRange(-128, 127)).Draw(t, "digit"))
	}
	return s
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
		m := rapid.IntRange(0, 120).Draw(t, "shorts")
		shorts := make([]Short, m)
		shortPts := make([]*curve.EdwardsPoint, m)
		for i := range m {
			shortPts[i] = pool[rapid.IntRange(0, len(pool)-1).Draw(t, "p")]
			shorts[i] = drawShort(t)
		}
		want, small := voiSumAll(scs, pts, shorts, shortPts)
		if fast.voiSmallOrder(scs, pts, shorts, shortPts) != small {
			t.Fatal("voi's path gives another verdict")
		}
		if got := sumOf(&generic, scs, pts, shorts, shortPts); !got.equal(&want) || got.isSmallOrder() != small {
			t.Fatal("generic sum differs from voi's")
		}
		if hasKernels {
			if got := sumOf(&fast, scs, pts, shorts, shortPts); !got.equal(&want) || got.isSmallOrder() != small {
				t.Fatal("kernels' sum differs from voi's")
			}
		}
	})
}

// Scalar sets sc to s's value modulo the group order and returns it.
func (s *Short) Scalar(sc *scalar.Scalar) *scalar.Scalar {
	u0, u1 := s.Offset()
	return sc.Sub(set128(sc, u0, u1), &shortK)
}

// shortFrom is a Short from a digest of i.
func shortFrom(i int) (s Short) {
	h := sha512.Sum512([]byte(fmt.Sprintf("short %d", i)))
	for k := range s {
		s[k] = int8(h[k])
	}
	return s
}

// A sum that is of small order is seen as such: Σ zᵢ·Pᵢ − (Σ zᵢ·kᵢ)·B for
// Pᵢ = kᵢ·B (keys repeating or not), zᵢ Shorts whose digits lean to the
// edges of their range, plus a point of order 2, through voi's path, the
// passes and IsSmallOrderSum's choice between them; a changed digit is not.
func TestSmallOrderSum(t *testing.T) {
	type keyed struct {
		k *scalar.Scalar
		p *curve.EdwardsPoint
	}
	pool := make([]keyed, 40)
	for i := range pool {
		k := scalarFrom(5000+i, 32)
		pool[i] = keyed{k, decompressed(k)}
	}
	order2 := curve.CompressedEdwardsY{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	t2, err := curve.NewEdwardsPoint().SetCompressedY(&order2)
	if err != nil {
		t.Fatal(err)
	}
	var s Scratch
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 2*minPoints).Draw(t, "n")
		var pts []*curve.EdwardsPoint
		var shorts []Short
		var total scalar.Scalar
		for range n {
			kp := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "key")]
			z := drawShort(t)
			pts = append(pts, kp.p)
			shorts = append(shorts, z)
			var zk scalar.Scalar
			zk.Mul(z.Scalar(new(scalar.Scalar)), kp.k)
			total.Add(&total, &zk)
		}
		total.Neg(&total)
		full := []*curve.EdwardsPoint{curve.ED25519_BASEPOINT_POINT, t2}
		scs := []*scalar.Scalar{&total, scalarFrom(7001, 32)}
		if !s.voiSmallOrder(scs, full, shorts, pts) {
			t.Fatalf("%d points: voi's path does not see a sum of small order", n+2)
		}
		if Enabled() && !s.smallOrder(scs, full, shorts, pts) {
			t.Fatalf("%d points: the passes do not see a sum of small order", n+2)
		}
		if !s.IsSmallOrderSum(scs, full, shorts, pts) {
			t.Fatalf("%d points: a sum of small order is not seen as such", n+2)
		}
		i, k := rapid.IntRange(0, n-1).Draw(t, "changed"), rapid.IntRange(0, 15).Draw(t, "digit")
		shorts[i][k] ^= 1
		if s.voiSmallOrder(scs, full, shorts, pts) || (Enabled() && s.smallOrder(scs, full, shorts, pts)) || s.IsSmallOrderSum(scs, full, shorts, pts) {
			t.Fatalf("%d points: a changed digit still sums to small order", n+2)
		}
	})
}

// A Short's value is its digits' Σ d[k]·256^k, worked out with math/big.
func TestShortScalar(t *testing.T) {
	bigL, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	rapid.Check(t, func(t *rapid.T) {
		s := drawShort(t)
		want := new(big.Int)
		for k := 15; k >= 0; k-- {
			want.Lsh(want, 8).Add(want, big.NewInt(int64(s[k])))
		}
		want.Mod(want, bigL)
		var b [32]byte
		if err := s.Scalar(new(scalar.Scalar)).ToBytes(b[:]); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(b[:])
		if got := new(big.Int).SetBytes(b[:]); got.Cmp(want) != 0 {
			t.Fatalf("Short %v is %v, want %v", s, got, want)
		}
	})
}

// magsSigns gives each digit's magnitude and sign, for every digit value
// in every lane and every pattern of signs.
func TestMagsSigns(t *testing.T) {
	for pattern := range 256 {
		for v := -128; v <= 127; v++ {
			var x uint64
			for j := range 8 {
				d := int8(v)
				if pattern>>j&1 == 0 {
					d = int8((v + 128 + 37*j) % 128) // not negative
				} else if v >= 0 {
					d = int8(-1 - v) // negative
				}
				x |= uint64(uint8(d)) << (8 * j)
			}
			mags, signs := magsSigns(x)
			for j := range 8 {
				d := int(int8(x >> (8 * j)))
				m := d
				if d < 0 {
					m = -d
				}
				if got := int(mags >> (8 * j) & 0xff); got != m {
					t.Fatalf("digit %d in lane %d: magnitude %d", d, j, got)
				}
				if got := signs>>j&1 == 1; got != (d < 0) {
					t.Fatalf("digit %d in lane %d: sign bit %v", d, j, got)
				}
			}
		}
	}
}

// The signed digits of a scalar are worth the scalar, each in [−128, 127].
func TestRecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := [32]byte(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "bytes"))
		b[31] &= 0x1f // below 2^253
		d := recode(&b)
		got := new(big.Int)
		for k := 31; k >= 0; k-- {
			got.Lsh(got, 8).Add(got, big.NewInt(int64(int8(d[k]))))
		}
		le := b
		slices.Reverse(le[:])
		if want := new(big.Int).SetBytes(le[:]); got.Cmp(want) != 0 {
			t.Fatalf("digits %v are %v, want %v", d, got, want)
		}
	})
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
	for _, m := range []int{2, 16, 32, 48, 64, 128} {
		rPts := make([]*curve.EdwardsPoint, 1024)
		shorts := make([]Short, 1024)
		for i := range rPts {
			rPts[i] = decompressed(scalarFrom(i, 32))
			shorts[i] = shortFrom(i)
		}
		pts := make([]*curve.EdwardsPoint, m)
		scs := make([]*scalar.Scalar, m)
		for i := range pts {
			pts[i] = decompressed(scalarFrom(5000+i, 32))
			scs[i] = scalarFrom(5000+i, 32)
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
					s.IsSmallOrderSum(scs, pts, shorts, rPts)
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
			var rPts, pts []*curve.EdwardsPoint
			var shorts []Short
			var scs []*scalar.Scalar
			for i := range n {
				rPts = append(rPts, decompressed(scalarFrom(i, 32)))
				shorts = append(shorts, shortFrom(i))
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
				var s Scratch
				for range b.N {
					s.voiSmallOrder(scs, pts, shorts, rPts)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sig")
			})
			b.Run(fmt.Sprintf("%s/n=%d/passes", keys, n), func(b *testing.B) {
				if !Enabled() {
					b.Skip("off")
				}
				var s Scratch
				for range b.N {
					s.smallOrder(scs, pts, shorts, rPts)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sig")
			})
		}
	}
}

// BenchmarkSum: a batch of 1,024 signatures by 1,024 keys (1,024 Shorts
// and 1,024 full scalars) through voi and through the passes.
func BenchmarkSum(b *testing.B) {
	const n = 1024
	rPts, pts := make([]*curve.EdwardsPoint, n), make([]*curve.EdwardsPoint, n)
	shorts, scs := make([]Short, n), make([]*scalar.Scalar, n)
	for i := range n {
		rPts[i], shorts[i] = decompressed(scalarFrom(i, 32)), shortFrom(i)
		pts[i], scs[i] = decompressed(scalarFrom(n+i, 32)), scalarFrom(n+i, 32)
	}
	b.Run("voi", func(b *testing.B) {
		var s Scratch
		for range b.N {
			s.voiSmallOrder(scs, pts, shorts, rPts)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sig")
	})
	b.Run("ifma", func(b *testing.B) {
		if !Enabled() {
			b.Skip("off")
		}
		var s Scratch
		for range b.N {
			s.IsSmallOrderSum(scs, pts, shorts, rPts)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sig")
	})
}
