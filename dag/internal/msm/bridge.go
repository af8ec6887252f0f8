package msm

import (
	"crypto/sha512"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// bridgeVectors are the bridge's points and scalars: multiples of the base
// point, the identity, the point of order 2 and one of order 4, a point
// repeated; scalars of every length the batch check gives (128-bit zᵢ, full
// ones below the group order), zero, one, and 2^128 − 1.
func bridgeVectors() ([]*curve.EdwardsPoint, []*scalar.Scalar) {
	var pts []*curve.EdwardsPoint
	var scs []*scalar.Scalar
	sc := func(i int, bytes int) *scalar.Scalar {
		h := sha512.Sum512([]byte{'m', 's', 'm', byte(i)})
		var s scalar.Scalar
		if bytes >= 32 {
			if _, err := s.SetBytesModOrderWide(h[:]); err != nil {
				panic(err)
			}
			return &s
		}
		var b [32]byte
		copy(b[:bytes], h[:])
		if _, err := s.SetBits(b[:]); err != nil {
			panic(err)
		}
		return &s
	}
	for i := 1; i <= 40; i++ {
		k := sc(100+i, 32)
		pts = append(pts, curve.NewEdwardsPoint().MulBasepoint(curve.ED25519_BASEPOINT_TABLE, k))
		if i%2 == 0 {
			scs = append(scs, sc(i, 16))
		} else {
			scs = append(scs, sc(i, 32))
		}
	}
	var zero, one, max scalar.Scalar
	one.SetUint64(1)
	var mb [32]byte
	for i := range 16 {
		mb[i] = 0xff
	}
	if _, err := max.SetBits(mb[:]); err != nil {
		panic(err)
	}
	for _, enc := range [][32]byte{
		{1}, // the identity
		{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, // y = −1, order 2
		{}, // y = 0, order 4
	} {
		c := curve.CompressedEdwardsY(enc)
		p, err := curve.NewEdwardsPoint().SetCompressedY(&c)
		if err != nil {
			panic(err)
		}
		pts = append(pts, p)
		scs = append(scs, sc(200+len(pts), 32))
	}
	pts = append(pts, pts[0], pts[1], pts[2], curve.ED25519_BASEPOINT_POINT)
	scs = append(scs, &zero, &one, &max, sc(250, 32))
	return pts, scs
}

// bridgeShorts are the bridge's Shorts, on points of pts: every digit
// −128 (the magnitude 128), every digit 127, zero, digits alternating in
// sign, and digits from a digest, on multiples of the base point, the
// identity and the points of small order.
func bridgeShorts(pts []*curve.EdwardsPoint) ([]Short, []*curve.EdwardsPoint) {
	var shorts []Short
	var low, high, alt Short
	for k := range 16 {
		low[k], high[k] = -128, 127
		alt[k] = int8(1-2*(k%2)) * int8(k*8+1)
	}
	shorts = append(shorts, low, high, Short{}, alt)
	for i := range 36 {
		h := sha512.Sum512([]byte{'s', 'h', 'o', 'r', 't', byte(i)})
		var s Short
		for k := range s {
			s[k] = int8(h[k])
		}
		shorts = append(shorts, s)
	}
	sp := make([]*curve.EdwardsPoint, len(shorts))
	for i := range sp {
		sp[i] = pts[(7*i+3)%len(pts)]
	}
	return shorts, sp
}

// shortTerms returns terms whose sum by voi is Σ shorts[i]·pts[i] with
// each Short taken as the integer it is, not reduced modulo the group
// order (the sum the passes form; the two differ by points of small order
// where a point has such a part): a Short is U − K, U its bytes each plus
// 128 and K = Σ 128·256^k, both below 2^128, so its term is U·P plus K·(−P).
func shortTerms(shorts []Short, pts []*curve.EdwardsPoint) ([]*scalar.Scalar, []*curve.EdwardsPoint) {
	var scs []*scalar.Scalar
	var ps []*curve.EdwardsPoint
	for i := range shorts {
		u0, u1 := shorts[i].Offset()
		scs = append(scs, set128(new(scalar.Scalar), u0, u1), &shortK)
		ps = append(ps, pts[i], curve.NewEdwardsPoint().Neg(pts[i]))
	}
	return scs, ps
}
