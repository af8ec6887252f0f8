//go:build !amd64 || purego

package edwards4

// hasAsm: no kernels for this architecture; the generic code is the
// arithmetic, and Decompress hands every point to voi (see doc.go).
const hasAsm = false

func mul4(h, f, g *Fe4) { mulGeneric(h, f, g) }

func sqrN4(h, f *Fe4, n int) { sqrNGeneric(h, f, n) }

const hasAsm512 = false

func mul8(h, f, g *Fe8) { mul8Generic(h, f, g) }

func sqrN8(h, f *Fe8, n int) { sqrN8Generic(h, f, n) }
