// Package asmgen holds what the assembly generators share (the gen.go
// programs of dag/internal/edwards4, msm and sha8, run by go generate).
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

// FrameSlack is the bytes a frame needs beyond its slots for AlignFrame.
const FrameSlack = 64

// AlignFrame writes to w the instructions that point reg at the frame's
// first 64-byte boundary, for a kernel whose frame has FrameSlack bytes
// more than its slots need. Slots addressed from reg are whole cache
// lines: a 64-byte store split across two lines (Go leaves a frame 8-byte
// aligned) is not forwarded to the load that follows it, which made the
// kernels that reload what they stored a fifth slower.
func AlignFrame(w io.Writer, reg string) {
	fmt.Fprintf(w, "\tLEAQ 63(SP), %s\n", reg)
	fmt.Fprintf(w, "\tANDQ $-64, %s\n", reg)
}
