package msm

import (
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// FuzzSum: up to 24 points, each a multiple of the base point or one of
// the small-order points the bridge uses, with scalars from the input's
// bytes (each below the group order: its top byte masked) or Shorts (16
// bytes, when a point's first byte has its top bit set), through the
// kernels where they run and through the generic code, against voi's
// MultiscalarMulVartime and IsSmallOrder. (fuzz/ cannot import this
// internal package; it reaches this code through dag's batch verifier.)
func FuzzSum(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 33*24))
	ff := make([]byte, 33*9)
	for i := range ff {
		ff[i] = 0xff
	}
	f.Add(ff)
	bpts, _ := bridgeVectors()
	var fast, generic Scratch
	generic.kernels = kernels{accumGeneric, sumsGeneric}
	needLayout(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		var pts, shortPts []*curve.EdwardsPoint
		var scs []*scalar.Scalar
		var shorts []Short
		for len(in) >= 33 && len(pts)+len(shorts) < 24 {
			p := bpts[int(in[0]&0x7f)%len(bpts)]
			if in[0]&0x80 != 0 { // a Short from the next 16 bytes
				var s Short
				for k := range s {
					s[k] = int8(in[1+k])
				}
				shorts, shortPts = append(shorts, s), append(shortPts, p)
				in = in[17:]
				continue
			}
			var b [32]byte
			copy(b[:], in[1:33])
			b[31] &= 0x0f // below 2^252 < the group order
			var s scalar.Scalar
			if _, err := s.SetBits(b[:]); err != nil {
				t.Fatal(err)
			}
			pts = append(pts, p)
			scs = append(scs, &s)
			in = in[33:]
		}
		want, small := voiSumAll(scs, pts, shorts, shortPts)
		if got := sumOf(&generic, scs, pts, shorts, shortPts); !got.equal(&want) || got.isSmallOrder() != small {
			t.Fatal("generic sum differs from voi's")
		}
		if Enabled() {
			if got := sumOf(&fast, scs, pts, shorts, shortPts); !got.equal(&want) || got.isSmallOrder() != small {
				t.Fatal("kernels' sum differs from voi's")
			}
		}
	})
}
