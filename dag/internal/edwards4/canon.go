package edwards4

// canonical returns the limbs of e fully reduced: each limb within its
// width and the value in [0, p).
func canonical(e [10]uint64) [10]uint64 {
	e0, e1, e2, e3, e4, e5, e6, e7, e8, e9 := e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9]
	// Three passes of carries, limb 0 up to limb 9 and limb 9's carry back
	// into limb 0 times 19 (2^255 ≡ 19), bring every limb within its width
	// and the value below 2^255, whatever the input: after the first,
	// limbs 1..9 are within their widths and limb 0 exceeds its own by at
	// most 19·2^39; the second's carry out of limb 9 is then at most 1, and
	// if it is 1 the limbs 1..9 have rippled to 0, so the third carries no
	// further than limb 1.
	for pass := 0; pass < 3; pass++ {
		e1 += e0 >> 26
		e0 &= mask26
		e2 += e1 >> 25
		e1 &= mask25
		e3 += e2 >> 26
		e2 &= mask26
		e4 += e3 >> 25
		e3 &= mask25
		e5 += e4 >> 26
		e4 &= mask26
		e6 += e5 >> 25
		e5 &= mask25
		e7 += e6 >> 26
		e6 &= mask26
		e8 += e7 >> 25
		e7 &= mask25
		e9 += e8 >> 26
		e8 &= mask26
		t := e9 >> 25
		e9 &= mask25
		e0 += 19 * t
	}
	// value ≥ p iff value + 19 ≥ 2^255: q is the carry out of bit 255 of
	// value + 19, and value + 19·q with bit 255 dropped is value mod p.
	q := (e0 + 19) >> 26
	q = (e1 + q) >> 25
	q = (e2 + q) >> 26
	q = (e3 + q) >> 25
	q = (e4 + q) >> 26
	q = (e5 + q) >> 25
	q = (e6 + q) >> 26
	q = (e7 + q) >> 25
	q = (e8 + q) >> 26
	q = (e9 + q) >> 25
	e0 += 19 * q
	e1 += e0 >> 26
	e0 &= mask26
	e2 += e1 >> 25
	e1 &= mask25
	e3 += e2 >> 26
	e2 &= mask26
	e4 += e3 >> 25
	e3 &= mask25
	e5 += e4 >> 26
	e4 &= mask26
	e6 += e5 >> 25
	e5 &= mask25
	e7 += e6 >> 26
	e6 &= mask26
	e8 += e7 >> 25
	e7 &= mask25
	e9 += e8 >> 26
	e8 &= mask26
	e9 &= mask25
	return [10]uint64{e0, e1, e2, e3, e4, e5, e6, e7, e8, e9}
}

// limbs51 packs ten canonical limbs into voi's five 51-bit limbs: limb
// pairs (2m, 2m+1) span 26+25 = 51 bits exactly.
func limbs51(e *[10]uint64) [5]uint64 {
	var l [5]uint64
	for m := range l {
		l[m] = e[2*m] | e[2*m+1]<<26
	}
	return l
}

// isZero10 reports whether canonical limbs are zero.
func isZero10(e *[10]uint64) bool {
	var acc uint64
	for _, v := range e {
		acc |= v
	}
	return acc == 0
}

// neg10 returns p - e for canonical e ≠ 0 (and p for e = 0: callers treat
// zero apart).
func neg10(e *[10]uint64) [10]uint64 {
	var r [10]uint64
	var borrow uint64
	for i := 0; i < 10; i++ {
		w := width(i)
		pi := uint64(1)<<w - 1
		if i == 0 {
			pi -= 18
		}
		d := pi - e[i] - borrow
		borrow = d >> 63
		r[i] = d & (1<<w - 1)
	}
	return r
}

// toBytes encodes canonical limbs as 32 little-endian bytes.
func toBytes(e *[10]uint64) [32]byte {
	var b [32]byte
	for i := 0; i < 10; i++ {
		pos := limbPos[i]
		v := e[i]
		for k := uint(0); k < width(i); {
			bp := pos + k
			n := 8 - bp%8 // bits left in this byte
			if n > width(i)-k {
				n = width(i) - k
			}
			b[bp/8] |= byte((v >> k) & (1<<n - 1) << (bp % 8))
			k += n
		}
	}
	return b
}

// Bytes returns lane j as 32 little-endian bytes, fully reduced (the
// encoding voi's field ToBytes gives).
func (f *Fe4) Bytes(j int) [32]byte {
	c := canonical(f.lane(j))
	return toBytes(&c)
}

// Limbs51 returns lane j fully reduced in voi's radix 2^51: five limbs,
// each below 2^51, of value below p.
func (f *Fe4) Limbs51(j int) [5]uint64 {
	c := canonical(f.lane(j))
	return limbs51(&c)
}
