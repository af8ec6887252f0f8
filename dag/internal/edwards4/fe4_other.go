//go:build !amd64 || purego

package edwards4

// hasAsm: no kernels for this architecture; the generic code is the
// arithmetic, and Decompress hands every point to voi (see doc.go).
const hasAsm = false

func mul4(h, f, g *Fe4) { mulGeneric(h, f, g) }

func sqrN4(h, f *Fe4, n int) { sqrNGeneric(h, f, n) }
