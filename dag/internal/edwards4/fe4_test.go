package edwards4

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

var bigP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))

// toBig is the value of ten limbs (any size).
func toBig(e [10]uint64) *big.Int {
	v := new(big.Int)
	for i := 9; i >= 0; i-- {
		v.Add(v, new(big.Int).Lsh(new(big.Int).SetUint64(e[i]), limbPos[i]))
	}
	return v
}

func bytesOf(v *big.Int) [32]byte {
	var b [32]byte
	be := v.Bytes()
	for i, c := range be {
		b[len(be)-1-i] = c
	}
	return b
}

// edgeValues are the inputs every field test runs on besides random ones.
func edgeValues() []*big.Int {
	one := big.NewInt(1)
	two255 := new(big.Int).Lsh(one, 255)
	return []*big.Int{
		big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(19),
		new(big.Int).Sub(bigP, one), new(big.Int).Set(bigP), new(big.Int).Add(bigP, one),
		new(big.Int).Sub(two255, one), new(big.Int).Sub(two255, big.NewInt(20)),
		new(big.Int).Lsh(one, 254), new(big.Int).Lsh(one, 128), new(big.Int).Sub(new(big.Int).Lsh(one, 128), one),
	}
}

func randBytes(r *rand.Rand) [32]byte {
	var b [32]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// maxLimbs is the largest limbs this package's outputs can carry (the
// carry chain leaves even limbs < 2^26 + 2^16, odd < 2^25 + 2^16): the
// kernels' bounds must hold there.
func maxLimbs() [10]uint64 {
	var e [10]uint64
	for i := range e {
		e[i] = 1<<width(i) - 1 + 1<<16
	}
	return e
}

type impl struct {
	name string
	mul  func(h, f, g *Fe4)
	sqr  func(h, f *Fe4, n int)
}

func impls(t *testing.T) []impl {
	is := []impl{{"generic", mulGeneric, sqrNGeneric}}
	if hasAsm {
		is = append(is, asmImpl())
	} else {
		t.Log("no AVX2 kernels here: only the generic path is tested")
	}
	return is
}

// inputs returns sets of four lanes: edge values, max limbs and random.
func inputs(r *rand.Rand, n int) []Fe4 {
	var vals [][10]uint64
	for _, v := range edgeValues() {
		var f Fe4
		b := bytesOf(v)
		f.SetBytes(0, &b)
		vals = append(vals, f.lane(0))
	}
	vals = append(vals, maxLimbs())
	var sets []Fe4
	for k := 0; k < n; k++ {
		var f Fe4
		for j := 0; j < 4; j++ {
			var e [10]uint64
			switch {
			case k < len(vals)*len(vals):
				e = vals[(k/len(vals)*(j+1)+k*j)%len(vals)]
			default:
				b := randBytes(r)
				f.SetBytes(j, &b)
				e = f.lane(j)
				if r.IntN(4) == 0 { // random limbs up to the bound
					for i := range e {
						e[i] = r.Uint64N(1<<width(i) + 1<<16)
					}
				}
			}
			f.setLane(j, &e)
		}
		sets = append(sets, f)
	}
	return sets
}

func TestMulSquareAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	in := inputs(r, 600)
	for _, im := range impls(t) {
		for n := 0; n+1 < len(in); n++ {
			f, g := in[n], in[n+1]
			var h, s, s3 Fe4
			im.mul(&h, &f, &g)
			im.sqr(&s, &f, 1)
			im.sqr(&s3, &f, 3)
			for j := 0; j < 4; j++ {
				fv, gv := toBig(f.lane(j)), toBig(g.lane(j))
				want := new(big.Int).Mul(fv, gv)
				want.Mod(want, bigP)
				checkOut(t, im.name+" mul", h.lane(j), want)
				want.Mul(fv, fv).Mod(want, bigP)
				checkOut(t, im.name+" square", s.lane(j), want)
				want.Exp(fv, big.NewInt(8), bigP)
				checkOut(t, im.name+" square^3", s3.lane(j), want)
			}
		}
	}
}

// checkOut checks an output's value and its limb bounds.
func checkOut(t *testing.T, what string, e [10]uint64, want *big.Int) {
	t.Helper()
	got := new(big.Int).Mod(toBig(e), bigP)
	if got.Cmp(want) != 0 {
		t.Fatalf("%s: got %x want %x", what, got, want)
	}
	for i, v := range e {
		if v >= 1<<width(i)+1<<16 {
			t.Fatalf("%s: limb %d = %#x out of bounds", what, i, v)
		}
	}
	c := canonical(e)
	if toBig(c).Cmp(want) != 0 {
		t.Fatalf("%s: canonical gives %x want %x", what, toBig(c), want)
	}
}

func TestAsmMatchesGenericLimbs(t *testing.T) {
	if !hasAsm {
		t.Skip("no AVX2 kernels here")
	}
	a := asmImpl()
	r := rand.New(rand.NewPCG(3, 4))
	in := inputs(r, 400)
	for n := 0; n+1 < len(in); n++ {
		var h1, h2, s1, s2 Fe4
		a.mul(&h1, &in[n], &in[n+1])
		mulGeneric(&h2, &in[n], &in[n+1])
		k := 1 + n%7
		a.sqr(&s1, &in[n], k)
		sqrNGeneric(&s2, &in[n], k)
		if h1 != h2 || s1 != s2 {
			t.Fatalf("input %d: asm and generic limbs differ", n)
		}
	}
	// In place, as the exponentiation calls them.
	f := in[5]
	g := f
	a.mul(&f, &f, &f)
	mulGeneric(&g, &g, &g)
	if f != g {
		t.Fatal("in-place mul differs")
	}
}

func TestAddSubSetBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	in := inputs(r, 300)
	for n := 0; n+1 < len(in); n++ {
		f, g := in[n], in[n+1]
		var a, s Fe4
		a.Add(&f, &g)
		s.Sub(&f, &g)
		for j := 0; j < 4; j++ {
			fv, gv := toBig(f.lane(j)), toBig(g.lane(j))
			checkOut(t, "add", a.lane(j), new(big.Int).Mod(new(big.Int).Add(fv, gv), bigP))
			checkOut(t, "sub", s.lane(j), new(big.Int).Mod(new(big.Int).Sub(fv, gv), bigP))
		}
	}
	// SetBytes keeps the 255 low bits as they are; Bytes and Limbs51 give
	// the value mod p.
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(1))
	for k := 0; k < 2000; k++ {
		var b [32]byte
		if k < len(edgeValues()) {
			b = bytesOf(edgeValues()[k])
		} else {
			b = randBytes(r)
		}
		if k%3 == 0 {
			b[31] |= 0x80
		}
		var f Fe4
		f.SetBytes(2, &b)
		le := make([]byte, 32)
		for i := range le {
			le[i] = b[31-i]
		}
		v := new(big.Int).And(new(big.Int).SetBytes(le), mask)
		if toBig(f.lane(2)).Cmp(v) != 0 {
			t.Fatalf("SetBytes(%x) = %x want %x", b, toBig(f.lane(2)), v)
		}
		red := new(big.Int).Mod(v, bigP)
		if got, want := f.Bytes(2), bytesOf(red); got != want {
			t.Fatalf("Bytes(%x) = %x want %x", b, got, want)
		}
		l := f.Limbs51(2)
		got := new(big.Int)
		for m := 4; m >= 0; m-- {
			if l[m] >= 1<<51 {
				t.Fatalf("Limbs51(%x): limb %d = %#x", b, m, l[m])
			}
			got.Lsh(got, 51).Add(got, new(big.Int).SetUint64(l[m]))
		}
		if got.Cmp(red) != 0 {
			t.Fatalf("Limbs51(%x) = %x want %x", b, got, red)
		}
	}
}
