//go:build amd64 && !purego

package msm

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

// hasKernels reports whether the kernels of msm_amd64.s run here: AVX-512
// (gathers, scatters, Z registers) and its IFMA products.
var hasKernels = cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA

// accumIFMA adds each of the n points pts[i] to the bucket mags[i] names
// in each lane, negated in the lanes signs[i] marks: byte j of mags[i] is
// lane j's bucket, bit j of signs[i] its sign.
//
//go:noescape
func accumIFMA(b *buckets, pts *cachedPoint, mags *uint64, signs *uint8, n int)

// sumsIFMA sets out to Σ_{d=1}^{128} d·b[d], lane by lane.
//
//go:noescape
func sumsIFMA(b *buckets, out *point8)

func accum(b *buckets, pts []cachedPoint, mags []uint64, signs []uint8) {
	if len(pts) > 0 {
		accumIFMA(b, &pts[0], &mags[0], &signs[0], len(pts))
	}
}

func sums(b *buckets, out *point8) { sumsIFMA(b, out) }
