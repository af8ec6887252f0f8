//go:build amd64 && !purego

package edwards4

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

// hasAsm reports whether the AVX2 kernels of fe4_amd64.s run here.
var hasAsm = cpu.X86.HasAVX2

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
