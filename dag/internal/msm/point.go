package msm

import (
	"unsafe"

	"github.com/oasisprotocol/curve25519-voi/curve"
)

// point is a point of Ed25519 in extended coordinates (X:Y:Z:T), x = X/Z,
// y = Y/Z, T = XY/Z, one lane: the window sums, the sum of the windows and
// the points the kernels read are in this form.
type point struct{ x, y, z, t fe }

// d2 is 2d, d = −121665/121666, the curve's constant, in radix 2^51.
var d2 = fe{1859910466990425, 932731440258426, 1072319116312658, 1815898335770999, 633789495995903}

func identity() point { return point{y: fe{1}, z: fe{1}} }

// cachedPoint is a point in the form an addition reads: Y+X, Y−X, 2Z and
// 2d·T, and −2d·T for its negation; the layout the kernels broadcast from.
type cachedPoint [5]fe

func (p *point) cached() (c cachedPoint) {
	c[0] = feAdd(&p.y, &p.x)
	c[1] = feSub(&p.y, &p.x)
	c[2] = feAdd(&p.z, &p.z)
	c[3] = feMul(&p.t, &d2)
	var zero fe
	c[4] = feSub(&zero, &c[3])
	return c
}

// neg returns the cached form of −P: −(X:Y:Z:T) is (−X:Y:Z:−T), so Y+X and
// Y−X trade places and 2d·T changes sign. The kernels pick the same limbs
// lane by lane.
func (c cachedPoint) neg() cachedPoint {
	return cachedPoint{c[1], c[0], c[2], c[4], c[3]}
}

// addCached sets p = a + q: the unified addition of Hisil, Wong, Carter and
// Dawson for a = −1 (complete on Ed25519, doubling and the identity
// included), step for step what the kernels do per lane.
func (p *point) addCached(a *point, q *cachedPoint) {
	t0, t1 := feSub(&a.y, &a.x), feAdd(&a.y, &a.x)
	A := feMul(&t0, &q[1])
	B := feMul(&t1, &q[0])
	C := feMul(&a.t, &q[3])
	D := feMul(&a.z, &q[2])
	E, F, G, H := feSub(&B, &A), feSub(&D, &C), feAdd(&D, &C), feAdd(&B, &A)
	p.x, p.y, p.t, p.z = feMul(&E, &F), feMul(&G, &H), feMul(&E, &H), feMul(&F, &G)
}

func (p *point) add(a, b *point) {
	q := b.cached()
	p.addCached(a, &q)
}

// double sets p = 2a (dbl-2008-hwcd, a = −1).
func (p *point) double(a *point) {
	A, B := feMul(&a.x, &a.x), feMul(&a.y, &a.y)
	Z2 := feMul(&a.z, &a.z)
	C := feAdd(&Z2, &Z2)
	xy := feAdd(&a.x, &a.y)
	xy2 := feMul(&xy, &xy)
	AB := feAdd(&A, &B)
	E := feSub(&xy2, &AB)
	G := feSub(&B, &A)
	F := feSub(&G, &C)
	var zero fe
	H := feSub(&zero, &AB)
	p.x, p.y, p.t, p.z = feMul(&E, &F), feMul(&G, &H), feMul(&E, &H), feMul(&F, &G)
}

// isSmallOrder reports whether [8]p is the identity: X ≡ 0 and Y ≡ Z.
func (p *point) isSmallOrder() bool {
	var q point
	q.double(p)
	q.double(&q)
	q.double(&q)
	return q.x.isZero() && feSub(&q.y, &q.z).isZero()
}

// equal reports whether p and q are the same point (X₁Z₂ = X₂Z₁, Y₁Z₂ = Y₂Z₁).
func (p *point) equal(q *point) bool {
	a, b := feMul(&p.x, &q.z), feMul(&q.x, &p.z)
	c, d := feMul(&p.y, &q.z), feMul(&q.y, &p.z)
	return feSub(&a, &b).isZero() && feSub(&c, &d).isZero()
}

// voiLayout is curve25519-voi's EdwardsPoint with its 64-bit field: X, Y,
// Z, T, five uint64 limbs of radix 2^51 each. The bridge checks it before
// any point is read this way.
type voiLayout [4][5]uint64

// fromVoi reads a voi point's coordinates (carried: voi's limbs may be
// larger than ours).
func fromVoi(e *curve.EdwardsPoint) point {
	l := (*voiLayout)(unsafe.Pointer(e))
	p := point{l[0], l[1], l[2], l[3]}
	p.x.carry()
	p.y.carry()
	p.z.carry()
	p.t.carry()
	return p
}

// compress returns p's encoding: y, and x's parity in the top bit.
func (p *point) compress() [32]byte {
	zi := invert(&p.z)
	x, y := feMul(&p.x, &zi), feMul(&p.y, &zi)
	b := y.bytes()
	xb := x.bytes()
	b[31] |= xb[0] & 1 << 7
	return b
}

// invert returns 1/z as z^(p−2), square and multiply: only the bridge and
// the tests call it.
func invert(z *fe) fe {
	// p − 2 = 2^255 − 21: bits 0, 1 (set), 2 (clear), 3, 4 (clear), 5..254 set.
	r := fe{1}
	for i := 254; i >= 0; i-- {
		r = feMul(&r, &r)
		if i != 2 && i != 4 {
			r = feMul(&r, z)
		}
	}
	return r
}
