//go:build ignore

// gen.go writes msm_amd64.s, the AVX-512 IFMA kernels of the eight-lane
// bucket method (see doc.go): the field arithmetic is the same few steps
// over and over, so it is generated rather than typed. Run with
// `go generate` in this directory.
//
// A field element of eight lanes (fe8) is five limbs of radix 2^51, limb i
// of the eight lanes in one 512-bit vector, as curve25519-voi holds one
// element in five uint64. Every operation reads its operands from memory
// (stack slots, buckets, or a point broadcast to all lanes) and writes its
// result to a slot; only the products' accumulators live in registers.
//
//   - mul: VPMADD52LUQ/VPMADD52HUQ form the low and high 52 bits of each
//     limb product (inputs below 2^52); the low half goes to column i+j,
//     the high half, worth 2^52 = 2·2^51, doubled to column i+j+1.
//     Columns 5..9 fold into 0..4 times 19 (2^255 ≡ 19), then one carry
//     chain leaves limbs below 2^51 but limb 1, at most 2^51.
//   - add and sub (a + 4p − b) carry their result the same way, so that
//     every input of a product is below 2^52, as IFMA requires.
//
// The bounds are in doc.go; the tests check the kernels against math/big
// and the whole multiplication against curve25519-voi's.
package main

import (
	"bytes"
	"fmt"
	"math/big"
	"os"

	"github.com/witan-dev/witan/dag/internal/asmgen"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

// A slot is where a field element of eight lanes lives: a base register
// and an offset; limb i is 64·i bytes further.
type slot struct {
	base string
	off  int
	// bcast: a single element (five uint64) broadcast to every lane, limb i
	// 8·i bytes further.
	bcast bool
}

func (s slot) limb(i int) string {
	if s.base == "twoD<>" {
		return fmt.Sprintf("twoD<>+%d(SB)", 8*i)
	}
	if s.bcast {
		return fmt.Sprintf("%d(%s)", s.off+8*i, s.base)
	}
	return fmt.Sprintf("%d(%s)", s.off+64*i, s.base)
}

// op is the mnemonic for a memory operand of s (with .BCST for a
// broadcast element).
func op(name string, s slot) string {
	if s.bcast {
		return name + ".BCST"
	}
	return name
}

func z(n int) string { return fmt.Sprintf("Z%d", n) }

// Registers: a product's operand limbs in Z0..Z4, its columns in Z5..Z22;
// temporaries Z23..Z25; 2^51 − 1 in every lane of Z31, loaded once per
// kernel. The bucket kernel's eight lane addresses are in general
// registers (laneRegs), its transposes use Z0..Z15.

// times19 adds 19·src to dst, with Z23 and Z24 as temporaries.
func times19(dst, src int) {
	p("VPSLLQ $4, %s, Z23", z(src))
	p("VPSLLQ $1, %s, Z24", z(src))
	p("VPADDQ Z23, Z24, Z23")
	p("VPADDQ %s, Z23, Z23", z(src))
	p("VPADDQ Z23, %s, %s", z(dst), z(dst))
}

// carry brings limbs in registers r[0..4] (each below 2^62) to below 2^51
// but r[1], at most 2^51: a chain from limb 0 to 4, limb 4's carry folded
// into limb 0 times 19, and limb 0's carry into limb 1 once more.
func carry(r [5]int) {
	for k := 0; k < 4; k++ {
		p("VPSRLQ $51, %s, Z25", z(r[k]))
		p("VPANDQ Z31, %s, %s", z(r[k]), z(r[k]))
		p("VPADDQ Z25, %s, %s", z(r[k+1]), z(r[k+1]))
	}
	p("VPSRLQ $51, %s, Z25", z(r[4]))
	p("VPANDQ Z31, %s, %s", z(r[4]), z(r[4]))
	times19(r[0], 25)
	p("VPSRLQ $51, %s, Z25", z(r[0]))
	p("VPANDQ Z31, %s, %s", z(r[0]), z(r[0]))
	p("VPADDQ Z25, %s, %s", z(r[1]), z(r[1]))
}

func store(dst slot, r [5]int) {
	for i := range 5 {
		p("VMOVDQU64 %s, %s", z(r[i]), dst.limb(i))
	}
}

// mul: dst = a·b. a is never a broadcast; b may be.
func mul(dst, a, b slot) {
	for i := range 5 {
		p("VMOVDQU64 %s, %s", a.limb(i), z(i))
	}
	// low halves: column k in Z(5+k), k = 0..8; high halves: column k in
	// Z(13+k), k = 1..9.
	for k := 5; k <= 22; k++ {
		p("VPXORQ %s, %s, %s", z(k), z(k), z(k))
	}
	for j := range 5 {
		for i := range 5 {
			p("%s %s, %s, %s", op("VPMADD52LUQ", b), b.limb(j), z(i), z(5+i+j))
			p("%s %s, %s, %s", op("VPMADD52HUQ", b), b.limb(j), z(i), z(13+i+j+1))
		}
	}
	// column k = low(k) + 2·high(k)
	for k := 1; k <= 8; k++ {
		p("VPADDQ %s, %s, %s", z(13+k), z(13+k), z(13+k))
		p("VPADDQ %s, %s, %s", z(13+k), z(5+k), z(5+k))
	}
	p("VPADDQ Z22, Z22, Z22") // column 9, high half only
	// fold columns 5..9 into 0..4: column 9 is Z22, the others Z10..Z13
	for k := 0; k < 5; k++ {
		src := 10 + k
		if k == 4 {
			src = 22
		}
		times19(5+k, src)
	}
	r := [5]int{5, 6, 7, 8, 9}
	carry(r)
	store(dst, r)
}

// add: dst = a + b, carried.
func add(dst, a, b slot) {
	for i := range 5 {
		p("VMOVDQU64 %s, %s", a.limb(i), z(i))
		p("%s %s, %s, %s", op("VPADDQ", b), b.limb(i), z(i), z(i))
	}
	r := [5]int{0, 1, 2, 3, 4}
	carry(r)
	store(dst, r)
}

// sub: dst = a + 4p − b, carried. b's limbs are below 2^52 (every slot's
// are), 4p's above 2^52, so no lane goes negative.
func sub(dst, a, b slot) {
	for i := range 5 {
		p("VMOVDQU64 %s, %s", a.limb(i), z(i))
		p("VPADDQ.BCST fourP<>+%d(SB), %s, %s", 8*i, z(i), z(i))
		p("%s %s, %s, %s", op("VPSUBQ", b), b.limb(i), z(i), z(i))
	}
	r := [5]int{0, 1, 2, 3, 4}
	carry(r)
	store(dst, r)
}

const fe8Size = 5 * 64

// A point of eight lanes in memory: X, Y, Z, T, each an fe8.
type pt struct{ x, y, zz, t slot }

// A cached point: Y+X, Y−X, 2Z, 2d·T.
type cached struct{ ypx, ymx, z2, t2d slot }

// Stack slots of the frame, each an fe8.
func frame(i int) slot { return slot{base: "R15", off: i * fe8Size} }

// addCached: dst = a + q (extended plus cached, the unified formula of
// Hisil, Wong, Carter and Dawson for a = −1, complete on Ed25519), with
// frame slots tmp[0..9] as scratch. dst may be a.
func addCached(dst, a pt, q cached, tmp []slot) {
	t0, t1 := tmp[0], tmp[1]
	A, B, C, D := tmp[2], tmp[3], tmp[4], tmp[5]
	E, F, G, H := tmp[6], tmp[7], tmp[8], tmp[9]
	sub(t0, a.y, a.x)
	add(t1, a.y, a.x)
	mul(A, t0, q.ymx)
	mul(B, t1, q.ypx)
	mul(C, a.t, q.t2d)
	mul(D, a.zz, q.z2)
	sub(E, B, A)
	sub(F, D, C)
	add(G, D, C)
	add(H, B, A)
	mul(dst.x, E, F)
	mul(dst.y, G, H)
	mul(dst.t, E, H)
	mul(dst.zz, F, G)
}

func header() {
	fmt.Fprintf(&out, "// Code generated by gen.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\n#include \"textflag.h\"\n\n")
	pr := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	// 4p in radix 2^51: 4·(2^51 − 19), then 4·(2^51 − 1) four times.
	limbs := []uint64{4 * (1<<51 - 19), 4 * (1<<51 - 1), 4 * (1<<51 - 1), 4 * (1<<51 - 1), 4 * (1<<51 - 1)}
	data("fourP", limbs)
	data("mask51", []uint64{1<<51 - 1})
	// 2d, d = −121665/121666 mod p, in radix 2^51.
	d := new(big.Int).Mul(big.NewInt(-121665), new(big.Int).ModInverse(big.NewInt(121666), pr))
	d.Mod(d, pr)
	d.Lsh(d, 1).Mod(d, pr)
	var d2 []uint64
	m := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 51), big.NewInt(1))
	for range 5 {
		d2 = append(d2, new(big.Int).And(d, m).Uint64())
		d.Rsh(d, 51)
	}
	data("twoD", d2)
}

func data(name string, v []uint64) {
	for i, x := range v {
		fmt.Fprintf(&out, "DATA %s<>+%d(SB)/8, $%d\n", name, 8*i, x)
	}
	fmt.Fprintf(&out, "GLOBL %s<>(SB), RODATA|NOPTR, $%d\n\n", name, 8*len(v))
}

func main() {
	header()
	accum()
	sums()
	name := "msm_amd64.s"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// A bucket holds eight lanes' points, each lane's contiguous: X, Y, Z, T,
// five limbs each, and four limbs of padding, 192 bytes (three Z
// registers); lane j's bucket d is at (8d + j)·192. Lanes are moved between
// this layout and the limb-by-limb one of the arithmetic by 8×8 transposes.
const (
	lanePointSize = 24 * 8
	bucketSize    = 8 * lanePointSize
)

// laneRegs hold the address of each lane's point.
var laneRegs = [8]string{"AX", "BX", "CX", "DX", "SI", "DI", "R12", "R13"}

// loadLanes reads the eight lanes' points at laneRegs into limb vectors
// 0..23 at dst (limb k at dst + 64k; 20..23 are padding).
func loadLanes(dst slot) {
	for b := 0; b < 3; b++ {
		for j := 0; j < 8; j++ {
			p("VMOVDQU64 %d(%s), Z%d", 64*b, laneRegs[j], j)
		}
		asmgen.Transpose8(&out, 0, 8)
		for k := 0; k < 8; k++ {
			p("VMOVDQU64 Z%d, %d(%s)", 8+k, dst.off+64*(8*b+k), dst.base)
		}
	}
}

// storeLanes writes limb vectors 0..23 at src back to the lanes' points.
func storeLanes(src slot) {
	for b := 0; b < 3; b++ {
		for k := 0; k < 8; k++ {
			p("VMOVDQU64 %d(%s), Z%d", src.off+64*(8*b+k), src.base, k)
		}
		asmgen.Transpose8(&out, 0, 8)
		for j := 0; j < 8; j++ {
			p("VMOVDQU64 Z%d, %d(%s)", 8+j, 64*b, laneRegs[j])
		}
	}
}

// accum: for each of n points, add the point (cached, broadcast) to the
// bucket its magnitude names in each lane, negated in the lanes its signs
// mark: byte j of the magnitudes is lane j's bucket, bit j of the signs
// its sign. A negated point's Y+X and Y−X trade places and its 2d·T is the
// point's −2d·T: broadcast loads masked by the signs pick them lane by
// lane into three frame slots, and the addition reads those.
func accum() {
	const slots = 17
	fmt.Fprintf(&out, "// func accumIFMA(b *buckets, pts *cachedPoint, mags *uint64, signs *uint8, n int)\n")
	fmt.Fprintf(&out, "TEXT ·accumIFMA(SB), 0, $%d-40\n", slots*fe8Size+asmgen.FrameSlack)
	alignFrame()
	p("MOVQ b+0(FP), R8")
	p("MOVQ pts+8(FP), R9")
	p("MOVQ mags+16(FP), R10")
	p("MOVQ signs+24(FP), R14")
	p("VPBROADCASTQ mask51<>(SB), Z31")
	fmt.Fprintf(&out, "loop:\n")
	p("CMPQ n+32(FP), $0") // the count of points left, kept in its argument
	p("JEQ done")
	for j, r := range laneRegs { // lane j's point: b + digit·1536 + j·192
		p("MOVBQZX %d(R10), %s", j, r)
		p("SHLQ $9, %s", r)
		p("LEAQ (%s)(%s*2), %s", r, r, r)
		p("LEAQ %d(R8)(%s*1), %s", j*lanePointSize, r, r)
	}
	p("MOVBQZX (R14), R11")
	p("KMOVW R11, K1")
	// the point's Y+X, Y−X, 2Z, 2d·T, −2d·T at R9, 40 bytes each
	ypx, ymx, t2d := frame(14), frame(15), frame(16)
	for i := range 5 {
		pick := func(dst slot, plus, minus, reg int) {
			p("VPBROADCASTQ %d(R9), Z%d", plus+8*i, reg)
			p("VPBROADCASTQ %d(R9), K1, Z%d", minus+8*i, reg)
			p("VMOVDQU64 Z%d, %s", reg, dst.limb(i))
		}
		pick(ypx, 0, 40, 26)
		pick(ymx, 40, 0, 27)
		pick(t2d, 120, 160, 28)
	}
	a := pt{frame(0), frame(1), frame(2), frame(3)}
	// limbs 20..23 land in frame(4), the first scratch slot, and are
	// overwritten by the addition before they are written back as padding
	loadLanes(frame(0))
	tmp := make([]slot, 10)
	for i := range tmp {
		tmp[i] = frame(4 + i)
	}
	q := cached{ypx: ypx, ymx: ymx, z2: slot{base: "R9", off: 80, bcast: true}, t2d: t2d}
	addCached(a, a, q, tmp)
	storeLanes(frame(0))
	p("ADDQ $200, R9")
	p("ADDQ $8, R10")
	p("INCQ R14")
	p("DECQ n+32(FP)")
	p("JMP loop")
	fmt.Fprintf(&out, "done:\n")
	p("VZEROUPPER")
	p("RET")
	fmt.Fprintln(&out)
}

// sums: out = Σ_{d=1}^{128} d·buckets[d], lane by lane, as running sums from
// the top bucket down: running += buckets[d]; sum += running.
func sums() {
	// frames: running 0..3, sum 4..7, q 8..11, scratch 12..21, the bucket
	// read 22..26 (24 limb vectors)
	const slots = 4 + 4 + 4 + 10 + 5
	fmt.Fprintf(&out, "// func sumsIFMA(b *buckets, out *point8)\n")
	fmt.Fprintf(&out, "TEXT ·sumsIFMA(SB), 0, $%d-16\n", slots*fe8Size+asmgen.FrameSlack)
	alignFrame()
	p("MOVQ b+0(FP), R8")
	p("MOVQ out+8(FP), R9")
	p("VPBROADCASTQ mask51<>(SB), Z31")
	run := pt{frame(0), frame(1), frame(2), frame(3)}
	sum := pt{frame(4), frame(5), frame(6), frame(7)}
	q := cached{frame(8), frame(9), frame(10), frame(11)}
	tmp := make([]slot, 10)
	for i := range tmp {
		tmp[i] = frame(12 + i)
	}
	bk := pt{frame(22), frame(23), frame(24), frame(25)}
	// running = sum = buckets[128]
	p("LEAQ %d(R8), R10", 128*bucketSize)
	laneAddrs := func() {
		for j, r := range laneRegs {
			p("LEAQ %d(R10), %s", j*lanePointSize, r)
		}
	}
	laneAddrs()
	loadLanes(frame(22))
	for i := 0; i < 4*fe8Size; i += 64 {
		p("VMOVDQU64 %d(R15), Z0", 22*fe8Size+i)
		p("VMOVDQU64 Z0, %d(R15)", i)
		p("VMOVDQU64 Z0, %d(R15)", 4*fe8Size+i)
	}
	p("MOVQ $127, R11")
	fmt.Fprintf(&out, "sloop:\n")
	p("SUBQ $%d, R10", bucketSize)
	laneAddrs()
	loadLanes(frame(22))
	toCachedSB(q, bk)
	addCached(run, run, q, tmp)
	toCachedSB(q, run)
	addCached(sum, sum, q, tmp)
	p("DECQ R11")
	p("JNZ sloop")
	for i := 0; i < 4*fe8Size; i += 64 {
		p("VMOVDQU64 %d(R15), Z0", 4*fe8Size+i)
		p("VMOVDQU64 Z0, %d(R9)", i)
	}
	p("VZEROUPPER")
	p("RET")
}

// toCachedSB: q = the cached form of a, 2d read from the data.
func toCachedSB(q cached, a pt) {
	add(q.ypx, a.y, a.x)
	sub(q.ymx, a.y, a.x)
	add(q.z2, a.zz, a.zz)
	mulTwoD(q.t2d, a.t)
}

// mulTwoD: dst = a·2d, 2d broadcast from the data.
func mulTwoD(dst, a slot) {
	mul(dst, a, slot{base: "twoD<>", bcast: true})
}

// alignFrame points R15, the frames' base, at the frame's first 64-byte
// boundary (asmgen.AlignFrame).
func alignFrame() { asmgen.AlignFrame(&out, "R15") }
