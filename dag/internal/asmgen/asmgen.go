// Package asmgen holds what the assembly generators share (the gen.go
// programs of dag/internal/msm and dag/internal/sha8, run by go generate).
package asmgen

import (
	"fmt"
	"io"
)

// Transpose8 writes to w the AVX-512 instructions that transpose the 8×8
// matrix of uint64 in Z(src)..Z(src+7), row j in Z(src+j), into
// Z(dst)..Z(dst+7), column k in Z(dst+k), with Z(src).. as scratch: 64-bit
// interleaves into dst, 128-bit lane shuffles back into src, and again
// into dst. One instruction a line, tab-indented, as the generators write.
func Transpose8(w io.Writer, src, dst int) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	for m := 0; m < 4; m++ {
		p("VPUNPCKLQDQ Z%d, Z%d, Z%d", src+2*m+1, src+2*m, dst+2*m)
		p("VPUNPCKHQDQ Z%d, Z%d, Z%d", src+2*m+1, src+2*m, dst+2*m+1)
	}
	for g := 0; g < 2; g++ {
		a := dst + 4*g
		p("VSHUFI64X2 $0x88, Z%d, Z%d, Z%d", a+2, a, src+4*g)
		p("VSHUFI64X2 $0xdd, Z%d, Z%d, Z%d", a+2, a, src+4*g+1)
		p("VSHUFI64X2 $0x88, Z%d, Z%d, Z%d", a+3, a+1, src+4*g+2)
		p("VSHUFI64X2 $0xdd, Z%d, Z%d, Z%d", a+3, a+1, src+4*g+3)
	}
	for i, c := range [][2]int{{0, 4}, {2, 6}, {1, 5}, {3, 7}} {
		p("VSHUFI64X2 $0x88, Z%d, Z%d, Z%d", src+4+i, src+i, dst+c[0])
		p("VSHUFI64X2 $0xdd, Z%d, Z%d, Z%d", src+4+i, src+i, dst+c[1])
	}
}
