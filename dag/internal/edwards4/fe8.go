package edwards4

// Fe8 holds eight elements of GF(2^255-19) side by side, as Fe4 holds
// four: Fe8[i][j] is limb i of lane j, limb i of the eight lanes in one
// 512-bit vector, which the AVX-512 kernels load into one Z register each.
// It carries only the exponentiation of decompress8 (powP58x8), where
// nearly all the multiplications of a decompression are; the rest of a
// decompression runs on two Fe4.
type Fe8 [10][8]uint64

// join sets h's lanes 0–3 from a and 4–7 from b.
func (h *Fe8) join(a, b *Fe4) {
	for i := range h {
		copy(h[i][:4], a[i][:])
		copy(h[i][4:], b[i][:])
	}
}

// split sets a from h's lanes 0–3 and b from 4–7.
func (h *Fe8) split(a, b *Fe4) {
	for i := range h {
		copy(a[i][:], h[i][:4])
		copy(b[i][:], h[i][4:])
	}
}

// mul8Generic and sqrN8Generic are the generic four-lane arithmetic on
// each half.
func mul8Generic(h, f, g *Fe8) {
	var f0, f1, g0, g1 Fe4
	f.split(&f0, &f1)
	g.split(&g0, &g1)
	mulGeneric(&f0, &f0, &g0)
	mulGeneric(&f1, &f1, &g1)
	h.join(&f0, &f1)
}

func sqrN8Generic(h, f *Fe8, n int) {
	var f0, f1 Fe4
	f.split(&f0, &f1)
	sqrNGeneric(&f0, &f0, n)
	sqrNGeneric(&f1, &f1, n)
	h.join(&f0, &f1)
}

// Mul sets h = f·g lane by lane, as Fe4.Mul does.
func (h *Fe8) Mul(f, g *Fe8) *Fe8 { mul8(h, f, g); return h }

// Square sets h = f² lane by lane.
func (h *Fe8) Square(f *Fe8) *Fe8 { sqrN8(h, f, 1); return h }

// SquareN sets h = f^(2^n) lane by lane, n ≥ 1.
func (h *Fe8) SquareN(f *Fe8, n int) *Fe8 {
	if n < 1 {
		panic("edwards4: SquareN with n < 1")
	}
	sqrN8(h, f, n)
	return h
}
