//go:build amd64 && !purego

package edwards4

func asmImpl() impl { return impl{"avx2", mulAVX2, sqrNAVX2} }

// withGeneric runs f with the generic arithmetic in place of the kernels.
func withGeneric(f func()) {
	saved, saved512 := hasAsm, hasAsm512
	hasAsm, hasAsm512 = false, false
	defer func() { hasAsm, hasAsm512 = saved, saved512 }()
	f()
}
