package edwards4

import "encoding/binary"

// Fe4 holds four elements of GF(2^255-19) side by side ("vertical"
// layout): Fe4[i][j] is limb i of lane j. Ten limbs in radix 2^25.5:
// limb i has weight 2^ceil(25.5*i), even limbs carry 26 bits and odd limbs
// 25 bits once reduced. The memory layout is that of ten 256-bit vectors,
// limb i of the four lanes in one vector, which is what the amd64 kernels
// load into one YMM register each.
type Fe4 [10][4]uint64

const (
	mask26 = 1<<26 - 1
	mask25 = 1<<25 - 1
)

// width is the bit width of limb i.
func width(i int) uint { return 26 - uint(i&1) }

// lane returns the ten limbs of lane j.
func (f *Fe4) lane(j int) [10]uint64 {
	var e [10]uint64
	for i := range e {
		e[i] = f[i][j]
	}
	return e
}

// setLane sets the ten limbs of lane j.
func (f *Fe4) setLane(j int, e *[10]uint64) {
	for i := range e {
		f[i][j] = e[i]
	}
}

// carry10 propagates the carries of the columns c of a product (or of a
// sum) so that every limb is back at its width plus a small excess: even
// limbs < 2^26 + 2^16, odd limbs < 2^25 + 2^16. The chain runs in two
// interleaved halves, 0→1→…→4→5 and 4→5→…→9→0 (the carry out of limb 9
// re-enters limb 0 times 19, since 2^255 ≡ 19), then 0→1 once more. The
// amd64 kernels run the same chain, so both paths give the same limbs.
func carry10(c *[10]uint64) {
	step := func(i int) {
		w := width(i)
		c[i+1] += c[i] >> w
		c[i] &= 1<<w - 1
	}
	step(0)
	step(4)
	step(1)
	step(5)
	step(2)
	step(6)
	step(3)
	step(7)
	step(4)
	step(8)
	t := c[9] >> 25
	c[9] &= mask25
	c[0] += t + t<<1 + t<<4
	step(0)
}

// mul10 sets h = f·g for single elements whose limbs are below 2^26.1.
// Column k of the schoolbook product collects f_i·g_j with i+j = k, and
// i+j = k+10 times 19 (weight 2^255 folded back); a product of two odd
// limbs is doubled because ceil(25.5i) + ceil(25.5j) = ceil(25.5(i+j)) - 1
// exactly when i and j are both odd.
func mul10(h, f, g *[10]uint64) {
	var c [10]uint64
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			p := f[i] * g[j]
			if i&1 == 1 && j&1 == 1 {
				p *= 2
			}
			if i+j >= 10 {
				c[i+j-10] += 19 * p
			} else {
				c[i+j] += p
			}
		}
	}
	carry10(&c)
	*h = c
}

func mulGeneric(h, f, g *Fe4) {
	for j := 0; j < 4; j++ {
		a, b := f.lane(j), g.lane(j)
		mul10(&a, &a, &b)
		h.setLane(j, &a)
	}
}

func sqrNGeneric(h, f *Fe4, n int) {
	for j := 0; j < 4; j++ {
		a := f.lane(j)
		for k := 0; k < n; k++ {
			mul10(&a, &a, &a)
		}
		h.setLane(j, &a)
	}
}

// Mul sets h = f·g lane by lane. Inputs' limbs must be below 2^26.1 (any
// output of this package's operations is).
func (h *Fe4) Mul(f, g *Fe4) *Fe4 { mul4(h, f, g); return h }

// Square sets h = f² lane by lane.
func (h *Fe4) Square(f *Fe4) *Fe4 { sqrN4(h, f, 1); return h }

// SquareN sets h = f^(2^n) lane by lane, n ≥ 1: the hot loop of the
// exponentiations.
func (h *Fe4) SquareN(f *Fe4, n int) *Fe4 {
	if n < 1 {
		panic("edwards4: SquareN with n < 1")
	}
	sqrN4(h, f, n)
	return h
}

// Add sets h = f + g lane by lane, carried.
func (h *Fe4) Add(f, g *Fe4) *Fe4 {
	for j := 0; j < 4; j++ {
		var c [10]uint64
		for i := range c {
			c[i] = f[i][j] + g[i][j]
		}
		carry10(&c)
		h.setLane(j, &c)
	}
	return h
}

// fourP is 4p in the ten-limb radix, every limb larger than any reduced
// limb, so that 4p + f - g never underflows.
var fourP = [10]uint64{
	4 * (mask26 - 18), 4 * mask25, 4 * mask26, 4 * mask25, 4 * mask26,
	4 * mask25, 4 * mask26, 4 * mask25, 4 * mask26, 4 * mask25,
}

// Sub sets h = f - g lane by lane (computed as f + 4p - g), carried.
func (h *Fe4) Sub(f, g *Fe4) *Fe4 {
	for j := 0; j < 4; j++ {
		var c [10]uint64
		for i := range c {
			c[i] = f[i][j] + fourP[i] - g[i][j]
		}
		carry10(&c)
		h.setLane(j, &c)
	}
	return h
}

// limbPos[i] is the bit position ceil(25.5*i) of limb i.
var limbPos = [10]uint{0, 26, 51, 77, 102, 128, 153, 179, 204, 230}

// SetBytes sets lane j from 32 little-endian bytes as voi's field SetBytes
// does: bit 255 is ignored, and a value in [p, 2^255) is kept as it is
// (it stands for value - p).
func (h *Fe4) SetBytes(j int, b *[32]byte) {
	var w [5]uint64 // the 255 bits as four words, a zero fifth
	for k := 0; k < 4; k++ {
		w[k] = binary.LittleEndian.Uint64(b[8*k:])
	}
	w[3] &= 1<<63 - 1
	for i := 0; i < 10; i++ {
		pos := limbPos[i]
		q, r := pos/64, pos%64
		v := w[q] >> r
		if r != 0 {
			v |= w[q+1] << (64 - r)
		}
		h[i][j] = v & (1<<width(i) - 1)
	}
}
