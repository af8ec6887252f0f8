package msm

import (
	"encoding/binary"
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

// buckets are a window's 256 buckets in each of eight lanes (bucket 0
// takes the zero digits and is never summed), each lane's point
// contiguous: b[d][j] is lane j's bucket d, so that adding a point to the
// buckets of eight lanes reads and writes eight runs of 192 bytes.
type buckets [256][8]lanePoint

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
// (a replica multiplies some hundreds of times in a sync): 384 KiB of
// buckets and about 200 bytes a point. Not safe for concurrent use.
type Scratch struct {
	b      *buckets
	pts    []cachedPoint
	order  []int32
	digits []uint64
	scs    []scalarBytes
	// the upper halves that go to voi
	hiScs []scalar.Scalar
	hiPtr []*scalar.Scalar
	hiPts []*curve.EdwardsPoint
	// highAt, when set, replaces fewHigh (the tests).
	highAt int
	win    [32]point
	// kernels, when set, replace accum and sums (the bridge and the tests).
	kernels kernels
}

type kernels struct {
	accum func(*buckets, []cachedPoint, []uint64)
	sums  func(*buckets, *point8)
}

// scalarBytes is the little-endian bytes of a scalar: its digits in radix 256
// are its bytes.
type scalarBytes = [32]byte

// sum returns Σ scs[i]·pts[i], by the bucket method with windows of 8 bits
// and unsigned digits: the eight windows 8k..8k+7 of every point go through
// one pass, window j in lane j; a point joins the passes up to its
// scalar's highest nonzero byte (a 128-bit zᵢ two passes, a 253-bit
// scalar four).
func (s *Scratch) sum(pts []*curve.EdwardsPoint, scs []scalarBytes) point {
	n := len(pts)
	if s.b == nil {
		s.b = new(buckets)
	}
	if cap(s.pts) < n {
		s.pts, s.order, s.digits = make([]cachedPoint, n), make([]int32, n), make([]uint64, n)
	}
	cp, order, digits := s.pts[:n], s.order[:n], s.digits[:n]
	// passOf: how many passes a point joins. The points are ordered by it,
	// most first, so that each pass takes a prefix.
	var count [5]int
	passOf := func(sc *scalarBytes) int {
		for k := 3; k >= 0; k-- {
			if binary.LittleEndian.Uint64(sc[8*k:]) != 0 {
				return k + 1
			}
		}
		return 0
	}
	for i := range scs {
		count[passOf(&scs[i])]++
	}
	var start [5]int // start of the points with k passes, k = 4 first
	at := 0
	for k := 4; k >= 0; k-- {
		start[k] = at
		at += count[k]
	}
	for i := range scs {
		k := passOf(&scs[i])
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
	// per point, where a pass of ours costs its buckets' sums (about 0.12
	// ms) however few points it takes.
	passes := 4
	var high *point
	if hi := count[3] + count[4]; hi > 0 && hi <= s.fewHigh() {
		passes = 2
		t := s.high(pts, scs, order[:hi])
		high = &t
	}
	top := 0
	for k := 0; k < passes && in > 0; k++ {
		for i, o := range order[:in] {
			digits[i] = binary.LittleEndian.Uint64(scs[o][8*k:])
		}
		s.b.reset()
		var out point8
		if s.kernels.accum != nil {
			s.kernels.accum(s.b, cp[:in], digits[:in])
			s.kernels.sums(s.b, &out)
		} else {
			accum(s.b, cp[:in], digits[:in])
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

// minPoints is the fewest points the passes take (BenchmarkCrossover: a
// batch of n signatures by one key, n + 2 points, gains from about 110
// points; by n keys, 2n + 1 points, from about 190).
const minPoints = 160

// fewHigh is the most points with scalars past 128 bits whose upper halves
// go to voi (BenchmarkHighHalves).
const fewHigh = 64

func (s *Scratch) fewHigh() int {
	if s.highAt != 0 {
		return s.highAt
	}
	return fewHigh
}

// high returns Σ (sᵢ >> 128)·Pᵢ over the points at idx, by voi.
func (s *Scratch) high(pts []*curve.EdwardsPoint, scs []scalarBytes, idx []int32) point {
	s.hiScs = slices.Grow(s.hiScs[:0], len(idx))[:len(idx)]
	s.hiPtr, s.hiPts = s.hiPtr[:0], s.hiPts[:0]
	for i, o := range idx {
		var b [32]byte
		copy(b[:16], scs[o][16:])
		if _, err := s.hiScs[i].SetBits(b[:]); err != nil {
			panic(err) // below 2^128: cannot fail
		}
		s.hiPtr, s.hiPts = append(s.hiPtr, &s.hiScs[i]), append(s.hiPts, pts[o])
	}
	var t curve.EdwardsPoint
	t.MultiscalarMulVartime(s.hiPtr, s.hiPts)
	clear(s.hiPts)
	return fromVoi(&t)
}

// accumGeneric is accumIFMA in Go, lane by lane: the reference the kernel
// is tested against, and the code where it cannot run.
func accumGeneric(b *buckets, pts []cachedPoint, digits []uint64) {
	for i := range pts {
		for j := range 8 {
			d := byte(digits[i] >> (8 * j))
			q := b[d][j].get()
			q.addCached(&q, &pts[i])
			b[d][j].set(&q)
		}
	}
}

// sumsGeneric is sumsIFMA in Go, lane by lane.
func sumsGeneric(b *buckets, out *point8) {
	for j := range 8 {
		run := b[255][j].get()
		sum := run
		for d := 254; d >= 1; d-- {
			q := b[d][j].get()
			run.add(&run, &q)
			sum.add(&sum, &run)
		}
		out.setLane(j, &sum)
	}
}

// IsSmallOrderSum reports whether Σ scs[i]·pts[i] is a point of small
// order, [8]·sum = identity: the check of a batch of Ed25519 signatures,
// the answer (*curve.EdwardsPoint).MultiscalarMulVartime and IsSmallOrder
// give.
//
// Where the kernels do not run (Enabled is false), and below minPoints
// points, it multiplies with voi: a pass costs its buckets' sums however
// few points it takes.
func (s *Scratch) IsSmallOrderSum(scs []*scalar.Scalar, pts []*curve.EdwardsPoint) bool {
	if len(pts) < minPoints || !Enabled() {
		var sum curve.EdwardsPoint
		sum.MultiscalarMulVartime(scs, pts)
		return sum.IsSmallOrder()
	}
	return s.smallOrder(scs, pts)
}

// smallOrder is IsSmallOrderSum by the passes, whatever the number of
// points.
func (s *Scratch) smallOrder(scs []*scalar.Scalar, pts []*curve.EdwardsPoint) bool {
	if cap(s.scs) < len(scs) {
		s.scs = make([]scalarBytes, len(scs))
	}
	b := s.scs[:len(scs)]
	for i, sc := range scs {
		if err := sc.ToBytes(b[i][:]); err != nil {
			panic(err) // 32 bytes: cannot fail
		}
	}
	p := s.sum(pts, b)
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
func bridge(acc func(*buckets, []cachedPoint, []uint64), sm func(*buckets, *point8)) bool {
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
	var want curve.EdwardsPoint
	want.MultiscalarMulVartime(scs, pts)
	w := fromVoi(&want)
	b := make([]scalarBytes, len(scs))
	for i, sc := range scs {
		if sc.ToBytes(b[i][:]) != nil {
			return false
		}
	}
	s := Scratch{kernels: kernels{acc, sm}}
	got := s.sum(pts, b)
	return got.equal(&w)
}
