package msm

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// fe8 is eight field elements, limb i of the eight lanes side by side.
type fe8 [5][8]uint64

// point8 is eight points in extended coordinates: X, Y, Z, T.
type point8 [4]fe8

// buckets are a window's buckets in each of eight lanes, one for each
// digit magnitude 0..128 (bucket 0 takes the zero digits and is never
// summed), each lane's point contiguous: b[d][j] is lane j's bucket d, so
// that adding a point to the buckets of eight lanes reads and writes eight
// runs of 192 bytes.
type buckets [maxDigit + 1][8]lanePoint

// maxDigit is the largest magnitude of a signed digit: digits are in
// [−128, 127].
const maxDigit = 128

// lanePoint is one lane's point in a bucket: X, Y, Z, T, five limbs each,
// and four of padding (three Z registers).
type lanePoint [24]uint64

func (l *lanePoint) get() (q point) {
	copy(q.x[:], l[0:5])
	copy(q.y[:], l[5:10])
	copy(q.z[:], l[10:15])
	copy(q.t[:], l[15:20])
	return q
}

func (l *lanePoint) set(q *point) {
	copy(l[0:5], q.x[:])
	copy(l[5:10], q.y[:])
	copy(l[10:15], q.z[:])
	copy(l[15:20], q.t[:])
}

func (p *point8) lane(j int) (q point) {
	for i := range 5 {
		q.x[i], q.y[i], q.z[i], q.t[i] = p[0][i][j], p[1][i][j], p[2][i][j], p[3][i][j]
	}
	return q
}

func (p *point8) setLane(j int, q *point) {
	for i := range 5 {
		p[0][i][j], p[1][i][j], p[2][i][j], p[3][i][j] = q.x[i], q.y[i], q.z[i], q.t[i]
	}
}

func (b *buckets) reset() {
	clear(b[:])
	for d := range b {
		for j := range 8 {
			b[d][j][5] = 1  // Y
			b[d][j][10] = 1 // Z
		}
	}
}

// Scratch holds what a multiplication needs, kept from one to the next
// (a replica multiplies some hundreds of times in a sync): 198 KiB of
// buckets and about 250 bytes a point. Not safe for concurrent use.
type Scratch struct {
	b     *buckets
	pts   []cachedPoint
	order []int32
	mags  []uint64
	signs []uint8
	ds    []digits
	// the upper halves that go to voi
	hiScs []scalar.Scalar
	hiPtr []*scalar.Scalar
	hiPts []*curve.EdwardsPoint
	// for voi, when it multiplies: all points and scalars, the Shorts'
	// magnitudes and the points of the negative ones, negated
	allPts []*curve.EdwardsPoint
	allScs []*scalar.Scalar
	shScs  []scalar.Scalar
	negPts []curve.EdwardsPoint
	// highAt, when set, replaces fewHigh (the tests).
	highAt int
	win    [32]point
	// kernels, when set, replace accum and sums (the bridge and the tests).
	kernels kernels
}

type kernels struct {
	accum func(*buckets, []cachedPoint, []uint64, []uint8)
	sums  func(*buckets, *point8)
}

// digits are a scalar in radix 256 with signed digits: Σ d[k]·256^k, each
// d[k] in [−128, 127], held as its byte (two's complement), so that eight
// of them read as one uint64.
type digits [32]byte

// shortDigits returns the digits of a Short.
func shortDigits(sh *Short) (d digits) {
	for k, x := range sh {
		d[k] = byte(x)
	}
	return d
}

// recode returns the signed digits of the scalar whose little-endian
// bytes are b, below 2^253 (a reduced scalar): each byte plus the carry
// from the one below, taken as itself below 128 and as itself minus 256
// (carrying one) from 128. The top digit is below 128: nothing carries out.
func recode(b *[32]byte) (d digits) {
	carry := 0
	for k, x := range b {
		v := int(x) + carry
		carry = (v + 128) >> 8 // 1 from 128 on (v is at most 256)
		d[k] = byte(int8(v - carry<<8))
	}
	return d
}

// magsSigns splits eight signed digits (x, byte j digit j) into their
// magnitudes (byte j |d_j|, at most 128) and signs (bit j set where d_j is
// negative), without a branch: a negative byte's magnitude is its
// complement plus one, which stays within the byte.
func magsSigns(x uint64) (mags uint64, signs uint8) {
	neg := x >> 7 & 0x0101010101010101 // 1 in each negative byte
	m := neg * 0xff                    // 0xff in each negative byte
	mags = (x ^ m) + neg
	// gather each byte's low bit into bit j: byte j's bit 0 times
	// 2^(56−7j) lands on bit 56 + j, and no other product reaches there
	signs = uint8(neg * 0x0102040810204080 >> 56)
	return mags, signs
}

// Short is a scalar of sixteen signed digits in radix 256, the integer
// Σ d[k]·256^k with each d[k] in [−128, 127]: uniformly random bytes taken
// as such digits are a uniformly random integer among 2^128 consecutive
// ones, −K to 2^128 − 1 − K for K = Σ 128·256^k. A batch check's zᵢ are
// drawn so (dag's grouped): their digits need no recoding and never carry
// past the sixteenth, so that every Rᵢ takes two passes.
type Short [16]int8

// KHalf is each 64-bit half of K = Σ 128·256^k: a Short is U − K, U its
// digits each plus 128 (Offset).
const KHalf = 0x8080808080808080

// Offset returns U = s + K, s's digits each plus 128: an unsigned integer
// below 2^128, in its low and high 64 bits.
func (s *Short) Offset() (u0, u1 uint64) {
	var b [16]byte
	for k, d := range s {
		b[k] = byte(d)
	}
	return binary.LittleEndian.Uint64(b[:]) ^ KHalf, binary.LittleEndian.Uint64(b[8:]) ^ KHalf
}

// shortK is K as a scalar.
var shortK = *set128(new(scalar.Scalar), KHalf, KHalf)

// set128 sets sc to the integer lo + hi·2^64 and returns it.
func set128(sc *scalar.Scalar, lo, hi uint64) *scalar.Scalar {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[:], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	if _, err := sc.SetBits(b[:]); err != nil {
		panic(err) // below 2^128: cannot fail
	}
	return sc
}

// sum returns Σ dᵢ·Pᵢ, by the bucket method with windows of 8 bits and
// signed digits: the eight windows 8k..8k+7 of every point go through one
// pass, window j in lane j; a point joins the passes up to its highest
// nonzero digit (a Short two passes, a 253-bit scalar four).
func (s *Scratch) sum(pts []*curve.EdwardsPoint, ds []digits) point {
	n := len(pts)
	if s.b == nil {
		s.b = new(buckets)
	}
	if cap(s.pts) < n {
		s.pts, s.order, s.mags, s.signs = make([]cachedPoint, n), make([]int32, n), make([]uint64, n), make([]uint8, n)
	}
	cp, order, mags, signs := s.pts[:n], s.order[:n], s.mags[:n], s.signs[:n]
	// passOf: how many passes a point joins. The points are ordered by it,
	// most first, so that each pass takes a prefix.
	var count [5]int
	passOf := func(d *digits) int {
		for k := 3; k >= 0; k-- {
			if binary.LittleEndian.Uint64(d[8*k:]) != 0 {
				return k + 1
			}
		}
		return 0
	}
	for i := range ds {
		count[passOf(&ds[i])]++
	}
	var start [5]int // start of the points with k passes, k = 4 first
	at := 0
	for k := 4; k >= 0; k-- {
		start[k] = at
		at += count[k]
	}
	for i := range ds {
		k := passOf(&ds[i])
		order[start[k]] = int32(i)
		start[k]++
	}
	for i, o := range order {
		p := fromVoi(pts[o])
		cp[i] = p.cached()
	}
	// Pass k takes the points with more than k passes: a prefix.
	in := n - count[0]
	if in == 0 {
		return identity()
	}
	// Few points with scalars past 128 bits (a batch by one author has one
	// key and the base point): their upper halves go to voi, which costs
	// per point, where a pass of ours costs its buckets' sums (about 0.06
	// ms) however few points it takes.
	passes := 4
	var high *point
	if hi := count[3] + count[4]; hi > 0 && hi <= s.fewHigh() {
		passes = 2
		t := s.high(pts, ds, order[:hi])
		high = &t
	}
	top := 0
	for k := 0; k < passes && in > 0; k++ {
		for i, o := range order[:in] {
			mags[i], signs[i] = magsSigns(binary.LittleEndian.Uint64(ds[o][8*k:]))
		}
		s.b.reset()
		var out point8
		if s.kernels.accum != nil {
			s.kernels.accum(s.b, cp[:in], mags[:in], signs[:in])
			s.kernels.sums(s.b, &out)
		} else {
			accum(s.b, cp[:in], mags[:in], signs[:in])
			sums(s.b, &out)
		}
		for j := range 8 {
			s.win[8*k+j] = out.lane(j)
		}
		top = 8*k + 7
		in -= count[k+1]
	}
	// Horner: from the top window down, 2^8·acc plus the next window;
	// voi's sum of the upper halves, if any, is worth 2^128, one window above
	// the top.
	var acc point
	w := top
	if high != nil {
		acc = *high
	} else {
		acc = s.win[top]
		w--
	}
	for ; w >= 0; w-- {
		for range 8 {
			acc.double(&acc)
		}
		acc.add(&acc, &s.win[w])
	}
	return acc
}

// minPoints is the fewest points the passes take (BenchmarkCrossover,
// 2026-12-07, with the aligned frame): a batch of n signatures by one key
// (n + 2 points) costs about the same either way at n = 64 and half as
// much by the passes at n = 96; by n keys (2n + 1 points), the same at
// n = 32 and two thirds at n = 64.
const minPoints = 72

// fewHigh is the most points with scalars past 128 bits whose upper halves
// go to voi (BenchmarkHighHalves, 2026-12-07: voi is cheaper up to 32 keys,
// the passes from 48).
const fewHigh = 40

func (s *Scratch) fewHigh() int {
	if s.highAt != 0 {
		return s.highAt
	}
	return fewHigh
}

// high returns Σ hᵢ·Pᵢ over the points at idx, by voi, hᵢ the value of
// the digits 16..31 of each: (sᵢ >> 128) plus the carry out of digit 15,
// not negative and below 2^126 for a scalar below 2^253.
func (s *Scratch) high(pts []*curve.EdwardsPoint, ds []digits, idx []int32) point {
	s.hiScs = slices.Grow(s.hiScs[:0], len(idx))[:len(idx)]
	s.hiPtr, s.hiPts = s.hiPtr[:0], s.hiPts[:0]
	for i, o := range idx {
		// h = Σ d[k]·256^(k−16), from the top digit down, in 128 bits
		// (two's complement: a digit may be negative, h is not).
		var lo, hi uint64
		for k := 31; k >= 16; k-- {
			hi, lo = hi<<8|lo>>56, lo<<8
			d := int64(int8(ds[o][k]))
			var c uint64
			lo, c = bits.Add64(lo, uint64(d), 0)
			hi += c + uint64(d>>63) // d's sign extended into the high word
		}
		if hi>>63 != 0 {
			panic("msm: negative upper half") // not for a scalar below 2^253
		}
		s.hiPtr, s.hiPts = append(s.hiPtr, set128(&s.hiScs[i], lo, hi)), append(s.hiPts, pts[o])
	}
	var t curve.EdwardsPoint
	t.MultiscalarMulVartime(s.hiPtr, s.hiPts)
	clear(s.hiPts)
	return fromVoi(&t)
}

// accumGeneric is accumIFMA in Go, lane by lane: the reference the kernel
// is tested against, and the code where it cannot run.
func accumGeneric(b *buckets, pts []cachedPoint, mags []uint64, signs []uint8) {
	for i := range pts {
		for j := range 8 {
			d := byte(mags[i] >> (8 * j))
			c := pts[i]
			if signs[i]>>j&1 != 0 {
				c = c.neg()
			}
			q := b[d][j].get()
			q.addCached(&q, &c)
			b[d][j].set(&q)
		}
	}
}

// sumsGeneric is sumsIFMA in Go, lane by lane.
func sumsGeneric(b *buckets, out *point8) {
	for j := range 8 {
		run := b[maxDigit][j].get()
		sum := run
		for d := maxDigit - 1; d >= 1; d-- {
			q := b[d][j].get()
			run.add(&run, &q)
			sum.add(&sum, &run)
		}
		out.setLane(j, &sum)
	}
}

// IsSmallOrderSum reports whether Σ scs[i]·pts[i] + Σ shorts[i]·shortPts[i]
// is a point of small order, [8]·sum = identity: the check of a batch of
// Ed25519 signatures, the answer (*curve.EdwardsPoint).MultiscalarMulVartime
// and IsSmallOrder give (each Short taken as the integer it is or modulo
// the group order alike: the sums differ by points of small order).
//
// Where the kernels do not run (Enabled is false), and below minPoints
// points, it multiplies with voi: a pass costs its buckets' sums however
// few points it takes.
func (s *Scratch) IsSmallOrderSum(scs []*scalar.Scalar, pts []*curve.EdwardsPoint, shorts []Short, shortPts []*curve.EdwardsPoint) bool {
	if len(pts)+len(shortPts) < minPoints || !Enabled() {
		return s.voiSmallOrder(scs, pts, shorts, shortPts)
	}
	return s.smallOrder(scs, pts, shorts, shortPts)
}

// voiSmallOrder is IsSmallOrderSum by voi. A Short z enters as |z|·P, or
// |z|·(−P) where z is negative: a scalar below 2^128, which voi's
// multiplication takes in half the doublings of a reduced one, and the sum
// the passes form, exactly.
func (s *Scratch) voiSmallOrder(scs []*scalar.Scalar, pts []*curve.EdwardsPoint, shorts []Short, shortPts []*curve.EdwardsPoint) bool {
	if len(shorts) == 0 {
		var sum curve.EdwardsPoint
		sum.MultiscalarMulVartime(scs, pts)
		return sum.IsSmallOrder()
	}
	s.shScs = slices.Grow(s.shScs[:0], len(shorts))[:len(shorts)]
	s.negPts = slices.Grow(s.negPts[:0], len(shorts))[:len(shorts)]
	allScs := append(s.allScs[:0], scs...)
	allPts := append(s.allPts[:0], pts...)
	for i := range shorts {
		// z = U − K: |z| is U − K or K − U, below 2^128 either way (z
		// itself may be below −2^127).
		u0, u1 := shorts[i].Offset()
		lo, borrow := bits.Sub64(u0, KHalf, 0)
		hi, borrow := bits.Sub64(u1, KHalf, borrow)
		p := shortPts[i]
		if borrow != 0 { // U < K: z is negative
			lo, borrow = bits.Sub64(KHalf, u0, 0)
			hi, _ = bits.Sub64(KHalf, u1, borrow)
			p = s.negPts[i].Neg(p)
		}
		allScs, allPts = append(allScs, set128(&s.shScs[i], lo, hi)), append(allPts, p)
	}
	var sum curve.EdwardsPoint
	sum.MultiscalarMulVartime(allScs, allPts)
	clear(allScs)
	clear(allPts)
	s.allScs, s.allPts = allScs[:0], allPts[:0]
	return sum.IsSmallOrder()
}

// smallOrder is IsSmallOrderSum by the passes, whatever the number of
// points.
func (s *Scratch) smallOrder(scs []*scalar.Scalar, pts []*curve.EdwardsPoint, shorts []Short, shortPts []*curve.EdwardsPoint) bool {
	n := len(scs) + len(shorts)
	s.ds = slices.Grow(s.ds[:0], n)[:n]
	for i, sc := range scs {
		var b [32]byte
		if err := sc.ToBytes(b[:]); err != nil {
			panic(err) // 32 bytes: cannot fail
		}
		s.ds[i] = recode(&b)
	}
	for i := range shorts {
		s.ds[len(scs)+i] = shortDigits(&shorts[i])
	}
	allPts := append(append(s.allPts[:0], pts...), shortPts...)
	p := s.sum(allPts, s.ds)
	clear(allPts)
	s.allPts = allPts[:0]
	return p.isSmallOrder()
}

var (
	bridgeOnce sync.Once
	bridgeOK   bool
)

// Enabled reports whether the kernels run here and passed the bridge: the
// layout of voi's points is the one fromVoi reads, and a multiplication of
// known points and scalars gives voi's result.
func Enabled() bool {
	bridgeOnce.Do(func() { bridgeOK = hasKernels && bridge(accum, sums) })
	return bridgeOK
}

// bridge checks what reading voi's points assumes, then a multiplication
// through the given kernels against voi's own.
func bridge(acc func(*buckets, []cachedPoint, []uint64, []uint8), sm func(*buckets, *point8)) bool {
	if unsafe.Sizeof(curve.EdwardsPoint{}) != unsafe.Sizeof(voiLayout{}) {
		return false
	}
	pts, scs := bridgeVectors()
	for _, p := range pts {
		var c curve.CompressedEdwardsY
		c.SetEdwardsPoint(p)
		q := fromVoi(p)
		if q.compress() != c {
			return false
		}
	}
	shorts, shortPts := bridgeShorts(pts)
	tScs, tPts := shortTerms(shorts, shortPts)
	var want curve.EdwardsPoint
	want.MultiscalarMulVartime(append(slices.Clone(scs), tScs...), append(slices.Clone(pts), tPts...))
	w := fromVoi(&want)
	ds := make([]digits, len(scs), len(scs)+len(shorts))
	for i, sc := range scs {
		var b [32]byte
		if sc.ToBytes(b[:]) != nil {
			return false
		}
		ds[i] = recode(&b)
	}
	for i := range shorts {
		ds = append(ds, shortDigits(&shorts[i]))
	}
	s := Scratch{kernels: kernels{acc, sm}}
	got := s.sum(append(slices.Clone(pts), shortPts...), ds)
	return got.equal(&w)
}
