package edwards4

// carryPass carries limb 0 into 1, 1 into 2, …, 8 into 9, then the carry
// out of limb 9 back into limb 0 times 19 (2^255 ≡ 19).
func carryPass(e *[10]uint64) {
	for i := 0; i < 10; i += 2 {
		e[i+1] += e[i] >> 26
		e[i] &= mask26
		if i+2 < 10 {
			e[i+2] += e[i+1] >> 25
			e[i+1] &= mask25
		}
	}
	t := e[9] >> 25
	e[9] &= mask25
	e[0] += 19 * t
}

// canonical returns the limbs of e fully reduced: each limb within its
// width and the value in [0, p).
func canonical(e [10]uint64) [10]uint64 {
	// Three passes bring every limb within its width and the value below
	// 2^255, whatever the input: after the first, limbs 1..9 are within
	// their widths and limb 0 exceeds its own by at most 19·2^39; the
	// second's carry out of limb 9 is then at most 1, and if it is 1 the
	// limbs 1..9 have rippled to 0, so the third carries no further than
	// limb 1.
	carryPass(&e)
	carryPass(&e)
	carryPass(&e)
	// value ≥ p iff value + 19 ≥ 2^255: q is the carry out of bit 255 of
	// value + 19, and value + 19·q with bit 255 dropped is value mod p.
	q := (e[0] + 19) >> 26
	for i := 1; i < 10; i += 2 {
		q = (e[i] + q) >> 25
		if i+1 < 10 {
			q = (e[i+1] + q) >> 26
		}
	}
	e[0] += 19 * q
	for i := 0; i < 10; i += 2 {
		e[i+1] += e[i] >> 26
		e[i] &= mask26
		if i+2 < 10 {
			e[i+2] += e[i+1] >> 25
			e[i+1] &= mask25
		}
	}
	e[9] &= mask25
	return e
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

// isZero10 and equal10 compare canonical limbs.
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
