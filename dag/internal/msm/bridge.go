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
