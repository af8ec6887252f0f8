//go:build !amd64 || purego

package msm

const hasKernels = false

func accum(b *buckets, pts []cachedPoint, digits []uint64) { accumGeneric(b, pts, digits) }

func sums(b *buckets, out *point8) { sumsGeneric(b, out) }
