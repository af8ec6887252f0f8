package rules

import (
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// The 128-bit comparisons agree with big-integer arithmetic over the whole
// uint64 range, so no parameter or count size can overflow a rule test.
func TestCmpProductsMatchesBigInt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		draw := func(name string) uint64 {
			switch rapid.IntRange(0, 3).Draw(t, name+" size") {
			case 0:
				return rapid.Uint64Range(0, 16).Draw(t, name)
			case 1:
				return rapid.Uint64Range(1<<53-16, 1<<53+16).Draw(t, name)
			case 2:
				return rapid.Uint64Range(^uint64(0)-16, ^uint64(0)).Draw(t, name)
			}
			return rapid.Uint64().Draw(t, name)
		}
		a, b, c, d := draw("a"), draw("b"), draw("c"), draw("d")
		l := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
		r := new(big.Int).Mul(new(big.Int).SetUint64(c), new(big.Int).SetUint64(d))
		if got, want := cmpProducts(a, b, c, d), l.Cmp(r); got != want {
			t.Fatalf("cmpProducts(%d, %d, %d, %d) = %d, want %d", a, b, c, d, got, want)
		}
		if CmpGT.holds(a, b, c, d) != (l.Cmp(r) > 0) || CmpGTE.holds(a, b, c, d) != (l.Cmp(r) >= 0) {
			t.Fatal("holds disagrees with the comparison")
		}
	})
}

func TestRatioCmp(t *testing.T) {
	cases := []struct {
		a, b Ratio
		want int
	}{
		{Ratio{1, 2}, Ratio{2, 4}, 0},
		{Ratio{1, 3}, Ratio{1, 2}, -1},
		{Ratio{2, 3}, Ratio{1, 2}, 1},
		{Ratio{0, 0}, Ratio{0, 1}, -1},
		{Ratio{0, 0}, Ratio{5, 0}, 0},
		{Ratio{1<<53 - 1, 1 << 53}, Ratio{1<<53 - 2, 1<<53 - 1}, 1},
	}
	for _, tc := range cases {
		if got := tc.a.Cmp(tc.b); got != tc.want {
			t.Errorf("%v cmp %v = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := tc.b.Cmp(tc.a); got != -tc.want {
			t.Errorf("%v cmp %v = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}
