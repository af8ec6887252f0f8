//go:build ignore

// gen.go writes fe4_amd64.s, the AVX2 kernels of the four-lane field
// arithmetic (Fe4) and the AVX-512 kernels of the eight-lane one (Fe8):
// the products are all alike, so they are generated rather than typed. Run
// with `go generate` in this directory.
//
// Each kernel follows the generic code in fe4.go step for step: the ten
// limbs of one operand sit in Y0..Y9 (limb i of the four lanes in Yi), the
// other operand's limbs, pre-multiplied by the factor each product needs
// (2 for two odd limbs, 19 for a column folded past 2^255, 2 for the two
// symmetric products of a square), sit in stack slots; column k of the
// product is accumulated with VPMULUDQ (32×32→64 bits per lane) and VPADDQ
// and stored, then the columns are reloaded into Y0..Y9 and carried with the
// chain of carry10. The column sums are the same integers as the generic
// code's, so the limbs are too (the tests compare them).
//
// Two choices come from measuring (and from llvm-mca -mcpu=znver3): the
// loop was bound by memory operands, so the square keeps its odd limbs
// doubled in their registers while it forms the products, which turns
// every product whose factor is 1, 2 or 4 (one or two odd limbs, or a
// square of an even limb) into a register-by-register VPMULUDQ; and the
// multiples 19x, 38x, 76x are shifts and additions rather than VPMULUDQ,
// which the products keep busy. The carries stay a sequential chain: two
// rounds of parallel carries were slower, for all their shorter latency.
package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/witan-dev/witan/dag/internal/asmgen"
)

var out bytes.Buffer

// isa is the vector width a kernel is written for: AVX2's 256-bit Y
// registers (four lanes, Fe4) or AVX-512's 512-bit Z registers (eight
// lanes, Fe8). The arithmetic is the same; only register names, the
// stride of a limb in memory and two mnemonics differ.
type isa struct {
	reg  string // register prefix: "Y" or "Z"
	w    int    // bytes per limb vector: 32 or 64
	mov  string // full-width move
	and  string // bitwise and
	tail string // suffix of the kernels' names
}

var (
	avx2   = isa{reg: "Y", w: 32, mov: "VMOVDQU", and: "VPAND", tail: "AVX2"}
	avx512 = isa{reg: "Z", w: 64, mov: "VMOVDQU64", and: "VPANDQ", tail: "AVX512"}
	v      = avx2
)

// r names vector register n of the current width.
func r(n int) string { return fmt.Sprintf("%s%d", v.reg, n) }

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

// term is one product of column (i+j) mod 10: register limb i times
// operand limb j scaled by s.
type term struct {
	i, j, s int
	reg     bool // both factors in registers (square only)
}

// columns lists the terms of each column; square uses only i ≤ j.
func columns(square bool) [10][]term {
	var cols [10][]term
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			if square && i > j {
				continue
			}
			s := 1
			if square && i != j {
				s *= 2
			}
			if i&1 == 1 && j&1 == 1 {
				s *= 2
			}
			if i+j >= 10 {
				s *= 19
			}
			t := term{i: i, j: j, s: s}
			if square {
				// The square keeps odd limbs doubled in their registers
				// during the products (d below): a product whose factor
				// is d(i)·d(j) needs no memory operand; the others take
				// s/d(i) times the plain limb j from a stack slot.
				d := func(x int) int { return 1 + x&1 }
				if s == d(i)*d(j) {
					t.reg = true
				} else {
					t.s = s / d(i)
				}
			}
			cols[(i+j)%10] = append(cols[(i+j)%10], t)
		}
	}
	return cols
}

type slot struct{ j, s int }

// slots assigns a place to every scaled operand limb (s > 1, and the
// plain limbs of a square): a stack offset past the columns with AVX2's
// sixteen registers, a register of its own (r(16) on) with AVX-512's
// thirty-two, so that the products read no memory operand.
func slots(cols [10][]term, square bool) (map[slot]string, []slot) {
	m := map[slot]string{}
	var order []slot
	for _, c := range cols {
		for _, t := range c {
			k := slot{t.j, t.s}
			if t.reg || (!square && t.s == 1) {
				continue
			}
			if _, ok := m[k]; !ok {
				m[k] = ""
				order = append(order, k)
			}
		}
	}
	sort.Slice(order, func(a, b int) bool {
		if order[a].j != order[b].j {
			return order[a].j < order[b].j
		}
		return order[a].s < order[b].s
	})
	inRegs := v.reg == "Z" && len(order) <= 16
	for n, k := range order {
		if inRegs {
			m[k] = r(16 + n)
		} else {
			m[k] = fmt.Sprintf("%d(%s)", 10*v.w+v.w*n, fp()) // columns first
		}
	}
	return m, order
}

// frameOf is the stack a kernel needs: the ten columns and the slots
// that are not registers.
func frameOf(sl map[slot]string) int {
	n := 10
	for _, loc := range sl {
		if onStack(loc) {
			n++
		}
	}
	return n * v.w
}

// scaleAll writes every needed multiple s·x (s in 1, 2, 4, 19, 38, 76) of
// the limb in register src to its place. No VPMULUDQ: the products keep
// the one port that multiplies busy, so the multiples are shifts and
// additions (19x = 16x + 2x + x, 38x = 2·19x, 76x = 4·19x). A multiple
// whose place is a register is formed there; one on the stack is formed
// in tmp (19x in r(11)) and stored.
func scaleAll(src string, scales map[int]string, tmp string) {
	dst := func(loc, scratch string) string {
		if onStack(loc) {
			return scratch
		}
		return loc
	}
	store := func(val, loc string) {
		if onStack(loc) {
			p("%s %s, %s", v.mov, val, loc)
		}
	}
	if loc, ok := scales[1]; ok {
		if onStack(loc) {
			p("%s %s, %s", v.mov, src, loc)
		} else {
			p("VMOVDQA64 %s, %s", src, loc)
		}
	}
	if loc, ok := scales[2]; ok {
		d := dst(loc, tmp)
		p("VPADDQ %s, %s, %s", src, src, d)
		store(d, loc)
	}
	if loc, ok := scales[4]; ok {
		d := dst(loc, tmp)
		p("VPSLLQ $2, %s, %s", src, d)
		store(d, loc)
	}
	l19, n19 := scales[19]
	l38, n38 := scales[38]
	l76, n76 := scales[76]
	if !n19 && !n38 && !n76 {
		return
	}
	t19 := r(11)
	if n19 {
		t19 = dst(l19, r(11))
	}
	p("VPSLLQ $4, %s, %s", src, t19)
	p("VPADDQ %s, %s, %s", src, src, tmp)
	p("VPADDQ %s, %s, %s", tmp, t19, t19)
	p("VPADDQ %s, %s, %s", src, t19, t19)
	if n19 {
		store(t19, l19)
	}
	if n38 {
		d := dst(l38, tmp)
		p("VPADDQ %s, %s, %s", t19, t19, d)
		store(d, l38)
	}
	if n76 {
		d := dst(l76, tmp)
		p("VPSLLQ $2, %s, %s", t19, d)
		store(d, l76)
	}
}

// scalesOf returns, for limb j, the place of each multiple needed.
func scalesOf(j int, sl map[slot]string, order []slot) map[int]string {
	m := map[int]string{}
	for _, k := range order {
		if k.j == j {
			m[k.s] = sl[k]
		}
	}
	return m
}

// products accumulates the columns into the stack (offsets 32k). The
// unscaled operand limb j is in register opReg(j) (a register or memory).
func products(cols [10][]term, sl map[slot]string, plain func(j int) string) {
	for k := 0; k < 10; k++ {
		acc := [2]string{r(10), r(12)}
		tmp := [2]string{r(11), r(13)}
		for n, t := range cols[k] {
			var src string
			switch {
			case t.reg:
				src = r(t.j)
			case t.s == 1 && plain != nil:
				src = plain(t.j)
			default:
				src = sl[slot{t.j, t.s}]
			}
			a := n & 1
			if n < 2 {
				p("VPMULUDQ %s, %s, %s", src, r(t.i), acc[a])
			} else {
				p("VPMULUDQ %s, %s, %s", src, r(t.i), tmp[a])
				p("VPADDQ %s, %s, %s", tmp[a], acc[a], acc[a])
			}
		}
		p("VPADDQ %s, %s, %s", r(12), r(10), r(10))
		p("%s %s, %d(%s)", v.mov, r(10), v.w*k, fp())
	}
}

// carry reloads the columns into Y0..Y9 and runs the carry chain of
// carry10 (masks in r(14) = 2^26-1, r(15) = 2^25-1).
func carry() {
	for k := 0; k < 10; k++ {
		p("%s %d(%s), %s", v.mov, v.w*k, fp(), r(k))
	}
	step := func(i int) {
		w, m := 26, r(14)
		if i&1 == 1 {
			w, m = 25, r(15)
		}
		t := r(10)
		if i >= 5 {
			t = r(11)
		}
		p("VPSRLQ $%d, %s, %s", w, r(i), t)
		p("%s %s, %s, %s", v.and, m, r(i), r(i))
		p("VPADDQ %s, %s, %s", t, r(i+1), r(i+1))
	}
	for _, i := range []int{0, 4, 1, 5, 2, 6, 3, 7, 4, 8} {
		step(i)
	}
	p("VPSRLQ $25, %s, %s", r(9), r(10))
	p("%s %s, %s, %s", v.and, r(15), r(9), r(9))
	p("VPSLLQ $1, %s, %s", r(10), r(11))
	p("VPSLLQ $4, %s, %s", r(10), r(12))
	p("VPADDQ %s, %s, %s", r(10), r(0), r(0))
	p("VPADDQ %s, %s, %s", r(11), r(12), r(12))
	p("VPADDQ %s, %s, %s", r(12), r(0), r(0))
	step(0)
}

func loadMasks() {
	if v.w == 32 {
		p("VMOVDQU mask26<>(SB), Y14")
		p("VMOVDQU mask25<>(SB), Y15")
		return
	}
	p("VPBROADCASTQ mask26<>(SB), %s", r(14))
	p("VPBROADCASTQ mask25<>(SB), %s", r(15))
}

func constant(name string, v uint64) {
	for k := 0; k < 4; k++ {
		fmt.Fprintf(&out, "DATA %s<>+%d(SB)/8, $%d\n", name, 8*k, v)
	}
	fmt.Fprintf(&out, "GLOBL %s<>(SB), RODATA|NOPTR, $32\n\n", name)
}

func main() {
	fmt.Fprintf(&out, "// Code generated by gen.go; DO NOT EDIT.\n\n")
	fmt.Fprintf(&out, "//go:build amd64 && !purego\n\n")
	fmt.Fprintf(&out, "#include \"textflag.h\"\n\n")
	constant("mask26", 1<<26-1)
	constant("mask25", 1<<25-1)

	kernels(avx2, "Fe4")
	fmt.Fprintln(&out)
	kernels(avx512, "Fe8")

	// The output path is fe4_amd64.s unless an argument names another:
	// TestGeneratedAssembly writes to a temporary file and compares.
	path := "fe4_amd64.s"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// kernels writes mul and sqrN for the isa: mul(h, f, x *T) with f in
// r(0)..r(9) and x's scaled limbs on the stack, its plain limbs read from
// x; sqrN(h, f *T, n int) with the state in r(0)..r(9) for n squarings.
func kernels(is isa, typ string) {
	v = is
	mc := columns(false)
	msl, morder := slots(mc, false)
	frame := frameOf(msl)
	fmt.Fprintf(&out, "// func mul%s(h, f, x *%s)\n", v.tail, typ)
	fmt.Fprintf(&out, "TEXT ·mul%s(SB), 0, $%d-24\n", v.tail, frame+alignExtra())
	alignFrame()
	p("MOVQ h+0(FP), DI")
	p("MOVQ f+8(FP), SI")
	p("MOVQ x+16(FP), BX")
	for j := 0; j < 10; j++ {
		// scaled copies of x, one limb at a time
		sc := scalesOf(j, msl, morder)
		if len(sc) == 0 {
			continue
		}
		p("%s %d(BX), %s", v.mov, v.w*j, r(10))
		scaleAll(r(10), sc, r(12))
	}
	for i := 0; i < 10; i++ {
		p("%s %d(SI), %s", v.mov, v.w*i, r(i))
	}
	products(mc, msl, func(j int) string { return fmt.Sprintf("%d(BX)", v.w*j) })
	loadMasks()
	carry()
	for i := 0; i < 10; i++ {
		p("%s %s, %d(DI)", v.mov, r(i), v.w*i)
	}
	p("VZEROUPPER")
	p("RET")
	fmt.Fprintln(&out)

	sc := columns(true)
	ssl, sorder := slots(sc, true)
	frame = frameOf(ssl)
	fmt.Fprintf(&out, "// func sqrN%s(h, f *%s, n int)\n", v.tail, typ)
	fmt.Fprintf(&out, "TEXT ·sqrN%s(SB), 0, $%d-24\n", v.tail, frame+alignExtra())
	alignFrame()
	p("MOVQ h+0(FP), DI")
	p("MOVQ f+8(FP), SI")
	p("MOVQ n+16(FP), CX")
	for i := 0; i < 10; i++ {
		p("%s %d(SI), %s", v.mov, v.w*i, r(i))
	}
	loadMasks()
	fmt.Fprintf(&out, "loop%s:\n", v.tail)
	for j := 0; j < 10; j++ {
		if sc := scalesOf(j, ssl, sorder); len(sc) > 0 {
			scaleAll(r(j), sc, r(10))
		}
	}
	for j := 1; j < 10; j += 2 {
		p("VPADDQ %s, %s, %s", r(j), r(j), r(j))
	}
	products(sc, ssl, nil)
	carry()
	p("DECQ CX")
	p("JNZ loop%s", v.tail)
	for i := 0; i < 10; i++ {
		p("%s %s, %d(DI)", v.mov, r(i), v.w*i)
	}
	p("VZEROUPPER")
	p("RET")
}

// fp is where a kernel's stack slots are: for the AVX2 kernels, which
// spill most, the frame's first 64-byte boundary (asmgen.AlignFrame); the
// AVX-512 kernels, which keep their limbs in registers, measured no gain
// from it (their mul a little slower) and use SP.
func fp() string {
	if v.reg == "Y" {
		return "R11"
	}
	return "SP"
}

// onStack reports whether loc is a stack slot.
func onStack(loc string) bool { return strings.HasSuffix(loc, "("+fp()+")") }

// alignExtra is the bytes a frame needs for its alignment; alignFrame,
// written right after a kernel's TEXT line, sets fp.
func alignExtra() int {
	if fp() == "SP" {
		return 0
	}
	return asmgen.FrameSlack
}

func alignFrame() {
	if fp() != "SP" {
		asmgen.AlignFrame(&out, fp())
	}
}
