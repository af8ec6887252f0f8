//go:build !amd64 || purego

package edwards4

func asmImpl() impl { panic("no kernels") }

func withGeneric(f func()) { f() }
