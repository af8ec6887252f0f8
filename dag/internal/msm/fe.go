package msm

import (
	"encoding/binary"
	"math/bits"
)

// fe is an element of GF(2^255 − 19) in five limbs of radix 2^51, as
// curve25519-voi's 64-bit backend holds one. The operations here keep every
// limb below 2^52 ("loose"): add and sub carry their results, mul's are
// carried, so any result may be the input of any operation, here or in
// the IFMA kernels (which read only the low 52 bits of a limb).
type fe [5]uint64

const mask51 = 1<<51 - 1

// carry brings limbs below 2^63 to below 2^51 + 2^17: each limb's carry
// goes to the next, limb 4's to limb 0 times 19 (2^255 ≡ 19).
func (v *fe) carry() {
	c0, c1, c2, c3, c4 := v[0]>>51, v[1]>>51, v[2]>>51, v[3]>>51, v[4]>>51
	v[0] = v[0]&mask51 + c4*19
	v[1] = v[1]&mask51 + c0
	v[2] = v[2]&mask51 + c1
	v[3] = v[3]&mask51 + c2
	v[4] = v[4]&mask51 + c3
}

func feAdd(a, b *fe) (v fe) {
	for i := range v {
		v[i] = a[i] + b[i]
	}
	v.carry()
	return v
}

// fourP is 4p in radix 2^51: every limb above 2^52, so a + 4p − b stays
// positive for loose b.
var fourP = fe{4 * (1<<51 - 19), 4 * mask51, 4 * mask51, 4 * mask51, 4 * mask51}

func feSub(a, b *fe) (v fe) {
	for i := range v {
		v[i] = a[i] + fourP[i] - b[i]
	}
	v.carry()
	return v
}

type u128 struct{ hi, lo uint64 }

func mulAdd(v u128, a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	lo, c := bits.Add64(lo, v.lo, 0)
	hi += v.hi + c
	return u128{hi, lo}
}

func (v u128) shr51() uint64 { return v.hi<<13 | v.lo>>51 }

// feMul returns a·b for loose a and b: each column is below 2^111, its
// carry below 2^60.
func feMul(a, b *fe) (v fe) {
	a0, a1, a2, a3, a4 := a[0], a[1], a[2], a[3], a[4]
	b0, b1, b2, b3, b4 := b[0], b[1], b[2], b[3], b[4]
	b1x, b2x, b3x, b4x := b1*19, b2*19, b3*19, b4*19
	var r0, r1, r2, r3, r4 u128
	r0 = mulAdd(mulAdd(mulAdd(mulAdd(mulAdd(r0, a0, b0), a1, b4x), a2, b3x), a3, b2x), a4, b1x)
	r1 = mulAdd(mulAdd(mulAdd(mulAdd(mulAdd(r1, a0, b1), a1, b0), a2, b4x), a3, b3x), a4, b2x)
	r2 = mulAdd(mulAdd(mulAdd(mulAdd(mulAdd(r2, a0, b2), a1, b1), a2, b0), a3, b4x), a4, b3x)
	r3 = mulAdd(mulAdd(mulAdd(mulAdd(mulAdd(r3, a0, b3), a1, b2), a2, b1), a3, b0), a4, b4x)
	r4 = mulAdd(mulAdd(mulAdd(mulAdd(mulAdd(r4, a0, b4), a1, b3), a2, b2), a3, b1), a4, b0)
	c0, c1, c2, c3, c4 := r0.shr51(), r1.shr51(), r2.shr51(), r3.shr51(), r4.shr51()
	v[0] = r0.lo&mask51 + c4*19
	v[1] = r1.lo&mask51 + c0
	v[2] = r2.lo&mask51 + c1
	v[3] = r3.lo&mask51 + c2
	v[4] = r4.lo&mask51 + c3
	v.carry()
	return v
}

// canonical returns v's limbs reduced modulo p, each below 2^51: the
// unique representation.
func (v fe) canonical() fe {
	v.carry()
	v.carry()
	// q is 1 when v ≥ p: v + 19 then overflows 2^255.
	q := (v[0] + 19) >> 51
	q = (v[1] + q) >> 51
	q = (v[2] + q) >> 51
	q = (v[3] + q) >> 51
	q = (v[4] + q) >> 51
	v[0] += 19 * q
	v[1] += v[0] >> 51
	v[0] &= mask51
	v[2] += v[1] >> 51
	v[1] &= mask51
	v[3] += v[2] >> 51
	v[2] &= mask51
	v[4] += v[3] >> 51
	v[3] &= mask51
	v[4] &= mask51
	return v
}

func (v fe) isZero() bool { return v.canonical() == fe{} }

// bytes returns v's canonical 32-byte little-endian encoding.
func (v fe) bytes() (b [32]byte) {
	c := v.canonical()
	binary.LittleEndian.PutUint64(b[0:], c[0]|c[1]<<51)
	binary.LittleEndian.PutUint64(b[8:], c[1]>>13|c[2]<<38)
	binary.LittleEndian.PutUint64(b[16:], c[2]>>26|c[3]<<25)
	binary.LittleEndian.PutUint64(b[24:], c[3]>>39|c[4]<<12)
	return b
}
