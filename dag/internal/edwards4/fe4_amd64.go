//go:build amd64 && !purego

package edwards4

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

// hasAsm reports whether the AVX2 kernels of fe4_amd64.s run here, and
// hasAsm512 whether its AVX-512 kernels (AVX512F instructions only) do.
var (
	hasAsm    = cpu.X86.HasAVX2
	hasAsm512 = cpu.X86.HasAVX512F
)

//go:noescape
func mulAVX2(h, f, x *Fe4)

//go:noescape
func sqrNAVX2(h, f *Fe4, n int)

func mul4(h, f, g *Fe4) {
	if hasAsm {
		mulAVX2(h, f, g)
		return
	}
	mulGeneric(h, f, g)
}

func sqrN4(h, f *Fe4, n int) {
	if hasAsm {
		sqrNAVX2(h, f, n)
		return
	}
	sqrNGeneric(h, f, n)
}

//go:noescape
func mulAVX512(h, f, x *Fe8)

//go:noescape
func sqrNAVX512(h, f *Fe8, n int)

func mul8(h, f, g *Fe8) {
	if hasAsm512 {
		mulAVX512(h, f, g)
		return
	}
	mul8Generic(h, f, g)
}

func sqrN8(h, f *Fe8, n int) {
	if hasAsm512 {
		sqrNAVX512(h, f, n)
		return
	}
	sqrN8Generic(h, f, n)
}
