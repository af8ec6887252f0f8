package edwards4

import (
	"math/big"
	"sync"
	"unsafe"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// Constants, computed from their definitions once: d = -121665/121666 and
// a square root of -1, 2^((p-1)/4). Which of the two roots of -1 is used
// does not matter: it only turns r into a root of u/v when r² = -u/v.
var (
	one4, d4, sqrtM1 Fe4
)

func init() {
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	d := new(big.Int).ModInverse(big.NewInt(121666), p)
	d.Mul(d, big.NewInt(-121665)).Mod(d, p)
	e := new(big.Int).Rsh(new(big.Int).Sub(p, big.NewInt(1)), 2)
	i := new(big.Int).Exp(big.NewInt(2), e, p)
	for _, c := range []struct {
		f *Fe4
		v *big.Int
	}{{&one4, big.NewInt(1)}, {&d4, d}, {&sqrtM1, i}} {
		var b [32]byte
		be := c.v.Bytes()
		for k, x := range be {
			b[len(be)-1-k] = x
		}
		for j := 0; j < 4; j++ {
			c.f.SetBytes(j, &b)
		}
	}
}

// powP58 sets h = z^((p-5)/8) = z^(2^252-3) lane by lane.
func powP58(h, z *Fe4) {
	var z2, z9, z11, z5, z10, z20, z50, z100, t Fe4
	z2.Square(z)          // 2
	t.SquareN(&z2, 2)     // 8
	z9.Mul(z, &t)         // 9
	z11.Mul(&z2, &z9)     // 11
	t.Square(&z11)        // 22
	z5.Mul(&z9, &t)       // 2^5 - 1
	t.SquareN(&z5, 5)     //
	z10.Mul(&t, &z5)      // 2^10 - 1
	t.SquareN(&z10, 10)   //
	z20.Mul(&t, &z10)     // 2^20 - 1
	t.SquareN(&z20, 20)   //
	t.Mul(&t, &z20)       // 2^40 - 1
	t.SquareN(&t, 10)     //
	z50.Mul(&t, &z10)     // 2^50 - 1
	t.SquareN(&z50, 50)   //
	z100.Mul(&t, &z50)    // 2^100 - 1
	t.SquareN(&z100, 100) //
	t.Mul(&t, &z100)      // 2^200 - 1
	t.SquareN(&t, 50)     //
	t.Mul(&t, &z50)       // 2^250 - 1
	t.SquareN(&t, 2)      // 2^252 - 4
	h.Mul(&t, z)          // 2^252 - 3
}

// powP58x8 is powP58 in eight lanes.
func powP58x8(h, z *Fe8) {
	var z2, z9, z11, z5, z10, z20, z50, z100, t Fe8
	z2.Square(z)
	t.SquareN(&z2, 2)
	z9.Mul(z, &t)
	z11.Mul(&z2, &z9)
	t.Square(&z11)
	z5.Mul(&z9, &t)
	t.SquareN(&z5, 5)
	z10.Mul(&t, &z5)
	t.SquareN(&z10, 10)
	z20.Mul(&t, &z10)
	t.SquareN(&z20, 20)
	t.Mul(&t, &z20)
	t.SquareN(&t, 10)
	z50.Mul(&t, &z10)
	t.SquareN(&z50, 50)
	z100.Mul(&t, &z50)
	t.SquareN(&z100, 100)
	t.Mul(&t, &z100)
	t.SquareN(&t, 50)
	t.Mul(&t, &z50)
	t.SquareN(&t, 2)
	h.Mul(&t, z)
}

// pointLimbs is voi's curve.EdwardsPoint as laid out in memory with its
// 64-bit field backend: X, Y, Z, T, five 51-bit limbs each.
type pointLimbs [4][5]uint64

// Lane outcomes of decompress4.
const (
	laneInvalid  = iota // not the encoding of a point: voi refuses it
	laneOK              // the point's limbs are in the output
	laneDelegate        // a point whose limbs voi may hold unreduced: voi decodes it
)

// decompress4 decodes four encodings as voi's SetCompressedY does, in
// four lanes at once:
//
//	y from the low 255 bits (non-canonical y kept as it is),
//	u = y² - 1, v = d·y² + 1,
//	r = u·(u·v)^((p-5)/8), check = v·r²,
//	valid iff check = u or check = -u, and then r·i replaces r if
//	check = -u (voi's SqrtRatioI), r made even (the non-negative root),
//	negated when the sign bit is set; X = r, Y = y, Z = 1, T = X·Y.
//
// v is never zero (y² = -1/d has no solution: -1/d is not a square), so
// the square root of u/v is unique up to sign whenever it exists and the
// outcome is fixed by the mathematics, whichever way it is computed.
//
// The limbs written are those voi holds after SetCompressedY: Y is the
// raw 255 bits split into 51-bit limbs (voi's field SetBytes does not
// reduce), Z is 1, X and T fully reduced. voi's X and T come out of its
// multiplication and weak reduction, whose limbs are below 2^51 + 2^18 but
// whose value is not always below p: voi's X for x = 0 with the sign bit
// set is p, its T for y = p (x·y ≡ 0) is p. Such limbs can differ from the
// fully reduced ones only if a fully reduced limb is below 2^18 + 2: a
// limb of voi's at or past 2^51 leaves at most 2^18 + 1 in that reduced
// limb, and limbs all below 2^51 with a value at or past p (below 2^255)
// leave a reduced value below 19. So a lane whose reduced X or T has a
// 51-bit limb below 2^24 is reported
// as laneDelegate and decoded by voi itself: x = 0 always (y = ±1, y = p+1),
// a random point with probability about 2^-24, and points crafted to have
// such limbs; everything else is written here limb for limb as voi would.
func decompress4(enc *[4][32]byte, out *[4]pointLimbs) (status [4]uint8) {
	var q quad
	q.start(enc)
	powP58(&q.w, &q.w)
	return q.finish(enc, out)
}

// decompress8 is decompress4 for eight encodings, two quads whose
// exponentiations, nearly all of the work, run together in the eight lanes
// of Fe8 (the AVX-512 kernels); the steps before and after run on each
// quad as in decompress4, so every lane's limbs are the same.
func decompress8(enc *[8][32]byte, out *[8]pointLimbs) (status [8]uint8) {
	var a, b quad
	ea, eb := (*[4][32]byte)(enc[:4]), (*[4][32]byte)(enc[4:])
	a.start(ea)
	b.start(eb)
	var w Fe8
	w.join(&a.w, &b.w)
	powP58x8(&w, &w)
	w.split(&a.w, &b.w)
	sa := a.finish(ea, (*[4]pointLimbs)(out[:4]))
	sb := b.finish(eb, (*[4]pointLimbs)(out[4:]))
	copy(status[:4], sa[:])
	copy(status[4:], sb[:])
	return status
}

// quad is the state of decompress4 between its steps: the encodings' y,
// u = y² - 1, v = d·y² + 1, and w, which start sets to u·v and the caller
// raises to (p-5)/8 before finish.
type quad struct {
	y, u, v, w Fe4
}

func (q *quad) start(enc *[4][32]byte) {
	var yy Fe4
	for j := 0; j < 4; j++ {
		q.y.SetBytes(j, &enc[j])
	}
	yy.Square(&q.y)
	q.u.Sub(&yy, &one4)
	q.v.Mul(&yy, &d4)
	q.v.Add(&q.v, &one4)
	q.w.Mul(&q.u, &q.v)
}

func (q *quad) finish(enc *[4][32]byte, out *[4]pointLimbs) (status [4]uint8) {
	var r, ri, chk, x, t Fe4
	r.Mul(&q.u, &q.w)
	chk.Square(&r)
	chk.Mul(&chk, &q.v)
	ri.Mul(&r, &sqrtM1)
	for j := 0; j < 4; j++ {
		cc := canonical(chk.lane(j))
		uc := canonical(q.u.lane(j))
		nu := uc
		if !isZero10(&uc) {
			nu = neg10(&uc)
		}
		correct, flipped := cc == uc, cc == nu
		if !correct && !flipped {
			status[j] = laneInvalid
			continue
		}
		xl := r.lane(j)
		if flipped {
			xl = ri.lane(j)
		}
		xc := canonical(xl)
		if isZero10(&xc) {
			status[j] = laneDelegate
			continue
		}
		if xc[0]&1 == 1 {
			xc = neg10(&xc)
		}
		if enc[j][31]>>7 == 1 {
			xc = neg10(&xc)
		}
		x.setLane(j, &xc)
		status[j] = laneOK
	}
	t.Mul(&x, &q.y)
	for j := 0; j < 4; j++ {
		if status[j] != laneOK {
			continue
		}
		xc, yl, tc := x.lane(j), q.y.lane(j), canonical(t.lane(j))
		x51, t51 := limbs51(&xc), limbs51(&tc)
		if hasSmallLimb(&x51) || hasSmallLimb(&t51) {
			status[j] = laneDelegate
			continue
		}
		out[j] = pointLimbs{x51, limbs51(&yl), {1}, t51}
	}
	return status
}

// hasSmallLimb reports whether a fully reduced element has a 51-bit limb
// below 2^24 (see decompress4).
func hasSmallLimb(l *[5]uint64) bool {
	for _, v := range l {
		if v < 1<<24 {
			return true
		}
	}
	return false
}

// writePoint stores limbs into a voi point. Only called once bridge has
// confirmed the layout.
func writePoint(p *curve.EdwardsPoint, l *pointLimbs) {
	*(*pointLimbs)(unsafe.Pointer(p)) = *l
}

// forceVoi sends every point to voi; tests set it to exercise the fallback.
var forceVoi bool

var (
	bridgeOnce sync.Once
	bridgeOK   bool
)

// bridge reports whether the fast path may run: the AVX2 kernels are
// there, and voi's EdwardsPoint is the 160-byte X, Y, Z, T of 51-bit limbs
// this package writes, as checked once on known points (see checkBridge).
func bridge() bool {
	bridgeOnce.Do(func() { bridgeOK = hasAsm && checkBridge() })
	return bridgeOK
}

var (
	bridge8Once sync.Once
	bridge8OK   bool
)

// bridge8 reports whether the eight-lane path may run: the fast path may
// (bridge), the AVX-512 kernels are there, and on bridgeVectors
// decompress8 gives, lane for lane and in either half, the verdicts and
// limbs of decompress4 (which bridge checked against voi). If not, passes
// stay four lanes wide: the same answers, less speed.
func bridge8() bool {
	bridge8Once.Do(func() { bridge8OK = bridge() && hasAsm512 && checkBridge8() })
	return bridge8OK
}

func checkBridge8() bool {
	vs := bridgeVectors()
	for len(vs)%8 != 0 {
		vs = append(vs, vs[len(vs)%3])
	}
	for k := 0; k < len(vs); k += 8 {
		if differs8((*[8][32]byte)(vs[k:k+8])) >= 0 {
			return false
		}
	}
	return true
}

// differs8 decodes enc in one eight-lane pass and in two four-lane ones
// and returns the first lane whose verdict or limbs differ, -1 if none.
func differs8(enc *[8][32]byte) int {
	var out8 [8]pointLimbs
	st8 := decompress8(enc, &out8)
	for h := 0; h < 2; h++ {
		var out4 [4]pointLimbs
		st4 := decompress4((*[4][32]byte)(enc[4*h:4*h+4]), &out4)
		for j := 0; j < 4; j++ {
			if st8[4*h+j] != st4[j] || (st4[j] == laneOK && out8[4*h+j] != out4[j]) {
				return 4*h + j
			}
		}
	}
	return -1
}

// bridgeVectors are encodings on which the bridge is checked: the base
// point and multiples, the points of order 8 (x and y both nonzero, so
// written here limb for limb) and of order 4 (y = 0, T = 0, handed to voi)
// with both signs, a non-canonical y of a point (y = p + 3), one of x = 0
// (y = p + 1), and an encoding of no point.
func bridgeVectors() [][32]byte {
	var vs [][32]byte
	var p curve.EdwardsPoint
	p.Set(curve.ED25519_BASEPOINT_POINT)
	for k := 0; k < 6; k++ {
		var c curve.CompressedEdwardsY
		c.SetEdwardsPoint(&p)
		vs = append(vs, c)
		p.Add(&p, curve.ED25519_BASEPOINT_POINT)
	}
	if t8, ok := order8(); ok {
		var q curve.EdwardsPoint
		q.Set(t8)
		for k := 1; k < 8; k += 2 { // the four points of order 8
			var c curve.CompressedEdwardsY
			c.SetEdwardsPoint(&q)
			vs = append(vs, c)
			c[31] ^= 0x80
			vs = append(vs, c)
			q.Add(&q, t8)
			q.Add(&q, t8)
		}
	}
	var order4 [32]byte // y = 0
	vs = append(vs, order4)
	order4[31] = 0x80
	vs = append(vs, order4)
	var nonCanon [32]byte
	for i := range nonCanon {
		nonCanon[i] = 0xff
	}
	nonCanon[31] = 0x7f
	nonCanon[0] = 0xee // 2^255 - 18 = p + 1: y ≡ 1, x = 0
	vs = append(vs, nonCanon)
	nonCanon[0] = 0xf0 // p + 3: y ≡ 3, a point
	vs = append(vs, nonCanon)
	vs = append(vs, [32]byte{2}) // y = 2: not on the curve
	return vs
}

// order8 finds a point of order 8: [ℓ]P lies in the torsion subgroup for
// any point P, and is computed as [ℓ-1]P + P (ℓ-1 is a canonical scalar);
// P runs over the encodings of y = 2, 3, … until one has order 8 there.
func order8() (*curve.EdwardsPoint, bool) {
	// ℓ - 1 = 2^252 + 27742317777372353535851937790883648492, little-endian.
	lm1 := [32]byte{
		0xec, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
	}
	var s scalar.Scalar
	if _, err := s.SetCanonicalBytes(lm1[:]); err != nil {
		return nil, false
	}
	for y := 2; y < 64; y++ {
		c := curve.CompressedEdwardsY{byte(y)}
		var p curve.EdwardsPoint
		if _, err := p.SetCompressedY(&c); err != nil {
			continue
		}
		var q, q4 curve.EdwardsPoint
		q.Mul(&p, &s)
		q.Add(&q, &p)
		q4.Add(&q, &q)
		q4.Add(&q4, &q4)
		if !q4.IsIdentity() {
			return &q, true
		}
	}
	return nil, false
}

// checkBridge decodes bridgeVectors both ways and demands the same
// verdicts and, for every decoded point, the same point (Equal), the same
// compression and the same 160 bytes of memory.
func checkBridge() bool {
	if unsafe.Sizeof(curve.EdwardsPoint{}) != unsafe.Sizeof(pointLimbs{}) {
		return false
	}
	vs := bridgeVectors()
	for len(vs)%4 != 0 {
		vs = append(vs, vs[0])
	}
	decoded := 0
	for k := 0; k < len(vs); k += 4 {
		var enc [4][32]byte
		copy(enc[:], vs[k:k+4])
		var out [4]pointLimbs
		st := decompress4(&enc, &out)
		for j := 0; j < 4; j++ {
			var want curve.EdwardsPoint
			c := curve.CompressedEdwardsY(enc[j])
			_, err := want.SetCompressedY(&c)
			switch st[j] {
			case laneInvalid:
				if err == nil {
					return false
				}
				continue
			case laneDelegate:
				if err != nil {
					return false
				}
				continue
			}
			if err != nil {
				return false
			}
			var got curve.EdwardsPoint
			writePoint(&got, &out[j])
			if got.Equal(&want) != 1 {
				return false
			}
			if *(*[160]byte)(unsafe.Pointer(&got)) != *(*[160]byte)(unsafe.Pointer(&want)) {
				return false
			}
			var cg, cw curve.CompressedEdwardsY
			cg.SetEdwardsPoint(&got)
			cw.SetEdwardsPoint(&want)
			if cg != cw {
				return false
			}
			decoded++
		}
	}
	return decoded >= 12
}

// voiDecompress is the reference: voi's own decoding of one encoding.
func voiDecompress(p *curve.EdwardsPoint, b []byte) bool {
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(b); err != nil {
		return false
	}
	_, err := p.SetCompressedY(&c)
	return err == nil
}

// DecompressEach decodes every enc[i] exactly as voi's
// (*curve.EdwardsPoint).SetCompressedY does (after
// curve.CompressedEdwardsY.SetBytes, which refuses any length but 32):
// ok[i] tells whether enc[i] decoded, and then dst[i] is the point; a
// dst[i] that did not decode is left as it was, as voi leaves it. dst, ok
// and enc must have the same length.
func DecompressEach(dst []curve.EdwardsPoint, ok []bool, enc [][]byte) {
	if len(dst) != len(enc) || len(ok) != len(enc) {
		panic("edwards4: DecompressEach lengths differ")
	}
	run(dst, enc, func(i int, good bool) bool { ok[i] = good; return true })
}

// Decompress decodes every enc[i] into dst[i] as DecompressEach does and
// reports whether all of them decoded; it stops at the first that does
// not (dst is then partly written).
func Decompress(dst []curve.EdwardsPoint, enc [][]byte) bool {
	if len(dst) != len(enc) {
		panic("edwards4: Decompress lengths differ")
	}
	all := true
	run(dst, enc, func(_ int, good bool) bool { all = all && good; return good })
	return all
}

// minLanes is the fewest points worth a four-lane pass: a pass costs
// about two of voi's decompressions (BenchmarkDecompress), so it pays from
// two points on and a last single point goes to voi. An eight-lane pass
// costs about as much as two four-lane ones less a third (BenchmarkDecompress),
// so it runs while more than four points are left.
const (
	minLanes  = 2
	minLanes8 = 5
)

// run decodes enc into dst, eight or four at a time on the fast path, and
// reports each verdict to report, stopping when report returns false.
func run(dst []curve.EdwardsPoint, enc [][]byte, report func(i int, ok bool) bool) {
	n := len(enc)
	i := 0
	if !forceVoi && bridge() {
		if bridge8() {
			for ; n-i >= minLanes8; i += 8 {
				var in [8][32]byte
				lanes := fill(in[:], enc[i:])
				var out [8]pointLimbs
				st := decompress8(&in, &out)
				if !deliver(dst, enc, i, lanes, st[:], out[:], report) {
					return
				}
			}
		}
		for ; n-i >= minLanes; i += 4 {
			var in [4][32]byte
			lanes := fill(in[:], enc[i:])
			var out [4]pointLimbs
			st := decompress4(&in, &out)
			if !deliver(dst, enc, i, lanes, st[:], out[:], report) {
				return
			}
		}
	}
	for ; i < n; i++ {
		if !report(i, voiDecompress(&dst[i], enc[i])) {
			return
		}
	}
}

// fill copies the encodings of enc that fit into the lanes of in (one of
// another length leaves its lane zero, and deliver refuses it) and returns
// how many lanes it filled.
func fill(in [][32]byte, enc [][]byte) int {
	lanes := min(len(in), len(enc))
	for j := 0; j < lanes; j++ {
		if len(enc[j]) == 32 {
			copy(in[j][:], enc[j])
		}
	}
	return lanes
}

// deliver writes the points of a pass over enc[i:i+lanes] into dst and
// reports each verdict; it returns false when report stops the run.
func deliver(dst []curve.EdwardsPoint, enc [][]byte, i, lanes int, st []uint8, out []pointLimbs, report func(int, bool) bool) bool {
	for j := 0; j < lanes; j++ {
		k := i + j
		var good bool
		switch {
		case len(enc[k]) != 32:
			good = false
		case st[j] == laneOK:
			writePoint(&dst[k], &out[j])
			good = true
		case st[j] == laneDelegate:
			good = voiDecompress(&dst[k], enc[k])
		default:
			good = false
		}
		if !report(k, good) {
			return false
		}
	}
	return true
}
