//go:build !amd64 || purego

package msm

const hasKernels = false

func accum(b *buckets, pts []cachedPoint, mags []uint64, signs []uint8) {
	accumGeneric(b, pts, mags, signs)
}

func sums(b *buckets, out *point8) { sumsGeneric(b, out) }
