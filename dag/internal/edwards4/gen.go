//go:build ignore

// gen.go writes fe4_amd64.s, the AVX2 kernels of the four-lane field
// arithmetic: the products are all alike, so they are generated rather than
// typed. Run with `go generate` in this directory.
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
)

var out bytes.Buffer

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

// slots assigns a stack offset to every scaled operand limb (s > 1).
func slots(cols [10][]term, square bool) (map[slot]int, []slot) {
	m := map[slot]int{}
	var order []slot
	for _, c := range cols {
		for _, t := range c {
			k := slot{t.j, t.s}
			if t.reg || (!square && t.s == 1) {
				continue
			}
			if _, ok := m[k]; !ok {
				m[k] = 0
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
	for n, k := range order {
		m[k] = 320 + 32*n // columns first: 0..319
	}
	return m, order
}

// scaleAll writes every needed multiple s·x (s in 2, 4, 19, 38, 76) of
// the limb in register src to its stack slot. No VPMULUDQ: the products
// keep the one port that multiplies busy, so the multiples are shifts and
// additions (19x = 16x + 2x + x, 38x = 2·19x, 76x = 4·19x), using Y11 for
// 19x and tmp for the rest.
func scaleAll(src string, scales map[int]int, tmp string) {
	if off, ok := scales[1]; ok {
		p("VMOVDQU %s, %d(SP)", src, off)
	}
	if _, ok := scales[2]; ok {
		p("VPADDQ %s, %s, %s", src, src, tmp)
		p("VMOVDQU %s, %d(SP)", tmp, scales[2])
	}
	if _, ok := scales[4]; ok {
		p("VPSLLQ $2, %s, %s", src, tmp)
		p("VMOVDQU %s, %d(SP)", tmp, scales[4])
	}
	_, n19 := scales[19]
	_, n38 := scales[38]
	_, n76 := scales[76]
	if !n19 && !n38 && !n76 {
		return
	}
	p("VPSLLQ $4, %s, Y11", src)
	p("VPADDQ %s, %s, %s", src, src, tmp)
	p("VPADDQ %s, Y11, Y11", tmp)
	p("VPADDQ %s, Y11, Y11", src)
	if n19 {
		p("VMOVDQU Y11, %d(SP)", scales[19])
	}
	if n38 {
		p("VPADDQ Y11, Y11, %s", tmp)
		p("VMOVDQU %s, %d(SP)", tmp, scales[38])
	}
	if n76 {
		p("VPSLLQ $2, Y11, %s", tmp)
		p("VMOVDQU %s, %d(SP)", tmp, scales[76])
	}
}

// scalesOf returns, for limb j, the stack offset of each multiple needed.
func scalesOf(j int, sl map[slot]int, order []slot) map[int]int {
	m := map[int]int{}
	for _, k := range order {
		if k.j == j {
			m[k.s] = sl[k]
		}
	}
	return m
}

// products accumulates the columns into the stack (offsets 32k). The
// unscaled operand limb j is in register opReg(j) (a register or memory).
func products(cols [10][]term, sl map[slot]int, plain func(j int) string) {
	for k := 0; k < 10; k++ {
		acc := [2]string{"Y10", "Y12"}
		tmp := [2]string{"Y11", "Y13"}
		for n, t := range cols[k] {
			var src string
			switch {
			case t.reg:
				src = fmt.Sprintf("Y%d", t.j)
			case t.s == 1 && plain != nil:
				src = plain(t.j)
			default:
				src = fmt.Sprintf("%d(SP)", sl[slot{t.j, t.s}])
			}
			a := n & 1
			if n < 2 {
				p("VPMULUDQ %s, Y%d, %s", src, t.i, acc[a])
			} else {
				p("VPMULUDQ %s, Y%d, %s", src, t.i, tmp[a])
				p("VPADDQ %s, %s, %s", tmp[a], acc[a], acc[a])
			}
		}
		p("VPADDQ Y12, Y10, Y10")
		p("VMOVDQU Y10, %d(SP)", 32*k)
	}
}

// carry reloads the columns into Y0..Y9 and runs the carry chain of
// carry10 (masks in Y14 = 2^26-1, Y15 = 2^25-1).
func carry() {
	for k := 0; k < 10; k++ {
		p("VMOVDQU %d(SP), Y%d", 32*k, k)
	}
	step := func(i int) {
		w, m := 26, "Y14"
		if i&1 == 1 {
			w, m = 25, "Y15"
		}
		t := "Y10"
		if i >= 5 {
			t = "Y11"
		}
		p("VPSRLQ $%d, Y%d, %s", w, i, t)
		p("VPAND %s, Y%d, Y%d", m, i, i)
		p("VPADDQ %s, Y%d, Y%d", t, i+1, i+1)
	}
	for _, i := range []int{0, 4, 1, 5, 2, 6, 3, 7, 4, 8} {
		step(i)
	}
	p("VPSRLQ $25, Y9, Y10")
	p("VPAND Y15, Y9, Y9")
	p("VPSLLQ $1, Y10, Y11")
	p("VPSLLQ $4, Y10, Y12")
	p("VPADDQ Y10, Y0, Y0")
	p("VPADDQ Y11, Y12, Y12")
	p("VPADDQ Y12, Y0, Y0")
	step(0)
}

func loadMasks() {
	p("VMOVDQU mask26<>(SB), Y14")
	p("VMOVDQU mask25<>(SB), Y15")
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

	// mulAVX2(h, f, g *Fe4): f in Y0..Y9, g's scaled limbs on the stack,
	// g's plain limbs read from g.
	mc := columns(false)
	msl, morder := slots(mc, false)
	frame := 320 + 32*len(morder)
	fmt.Fprintf(&out, "// func mulAVX2(h, f, x *Fe4)\n")
	fmt.Fprintf(&out, "TEXT ·mulAVX2(SB), 0, $%d-24\n", frame)
	p("MOVQ h+0(FP), DI")
	p("MOVQ f+8(FP), SI")
	p("MOVQ x+16(FP), BX")
	for j := 0; j < 10; j++ {
		// scaled copies of x, one limb at a time
		sc := scalesOf(j, msl, morder)
		if len(sc) == 0 {
			continue
		}
		p("VMOVDQU %d(BX), Y10", 32*j)
		scaleAll("Y10", sc, "Y12")
	}
	for i := 0; i < 10; i++ {
		p("VMOVDQU %d(SI), Y%d", 32*i, i)
	}
	products(mc, msl, func(j int) string { return fmt.Sprintf("%d(BX)", 32*j) })
	loadMasks()
	carry()
	for i := 0; i < 10; i++ {
		p("VMOVDQU Y%d, %d(DI)", i, 32*i)
	}
	p("VZEROUPPER")
	p("RET")
	fmt.Fprintln(&out)

	// sqrNAVX2(h, f *Fe4, n int): n squarings, the state in Y0..Y9.
	sc := columns(true)
	ssl, sorder := slots(sc, true)
	frame = 320 + 32*len(sorder)
	fmt.Fprintf(&out, "// func sqrNAVX2(h, f *Fe4, n int)\n")
	fmt.Fprintf(&out, "TEXT ·sqrNAVX2(SB), 0, $%d-24\n", frame)
	p("MOVQ h+0(FP), DI")
	p("MOVQ f+8(FP), SI")
	p("MOVQ n+16(FP), CX")
	for i := 0; i < 10; i++ {
		p("VMOVDQU %d(SI), Y%d", 32*i, i)
	}
	loadMasks()
	fmt.Fprintf(&out, "loop:\n")
	for j := 0; j < 10; j++ {
		if sc := scalesOf(j, ssl, sorder); len(sc) > 0 {
			scaleAll(fmt.Sprintf("Y%d", j), sc, "Y10")
		}
	}
	for j := 1; j < 10; j += 2 {
		p("VPADDQ Y%d, Y%d, Y%d", j, j, j)
	}
	products(sc, ssl, nil)
	carry()
	p("DECQ CX")
	p("JNZ loop")
	for i := 0; i < 10; i++ {
		p("VMOVDQU Y%d, %d(DI)", i, 32*i)
	}
	p("VZEROUPPER")
	p("RET")

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
