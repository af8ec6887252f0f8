package rules

import "math/bits"

// Exact integer arithmetic for the rule tests of §7. Every comparison the
// spec writes as a*b cmp c*d is done on 128-bit products, so no operand
// size can overflow and no rational is ever rounded.

// cmpProducts returns -1, 0 or +1 as a*b is less than, equal to or greater
// than c*d.
func cmpProducts(a, b, c, d uint64) int {
	h1, l1 := bits.Mul64(a, b)
	h2, l2 := bits.Mul64(c, d)
	switch {
	case h1 < h2:
		return -1
	case h1 > h2:
		return 1
	case l1 < l2:
		return -1
	case l1 > l2:
		return 1
	}
	return 0
}

// holds reports whether a*b cmp c*d holds, for cmp gt or gte.
func (c Cmp) holds(a, b, x, y uint64) bool {
	r := cmpProducts(a, b, x, y)
	if c == CmpGT {
		return r > 0
	}
	return r >= 0
}

// Ratio is an exact non-negative rational Num/Den. A Ratio with Den == 0 is
// undefined (for example approve_of_cast when no one has voted approve or
// reject); it marshals with a zero den and callers must not divide by it.
type Ratio struct {
	Num uint64 `json:"num"`
	Den uint64 `json:"den"`
}

// Defined reports whether r has a non-zero denominator.
func (r Ratio) Defined() bool { return r.Den != 0 }

// Cmp compares r with o exactly: -1, 0 or +1. Undefined ratios sort before
// every defined one and equal each other.
func (r Ratio) Cmp(o Ratio) int {
	switch {
	case !r.Defined() && !o.Defined():
		return 0
	case !r.Defined():
		return -1
	case !o.Defined():
		return 1
	}
	return cmpProducts(r.Num, o.Den, o.Num, r.Den)
}
