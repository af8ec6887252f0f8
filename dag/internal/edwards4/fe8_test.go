package edwards4

import (
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// lane returns the ten limbs of lane j.
func (h *Fe8) lane(j int) [10]uint64 {
	var e [10]uint64
	for i := range e {
		e[i] = h[i][j]
	}
	return e
}

// pairs joins consecutive four-lane inputs into eight-lane ones.
func pairs(in []Fe4) []Fe8 {
	out := make([]Fe8, 0, len(in)/2)
	for n := 0; n+1 < len(in); n += 2 {
		var f Fe8
		f.join(&in[n], &in[n+1])
		out = append(out, f)
	}
	return out
}

// The eight-lane arithmetic is the four-lane arithmetic in each half: the
// AVX-512 kernels (where they run) and the generic code give, limb for
// limb, what the four-lane generic code gives on each half, and the values
// are the products mod p.
func TestFe8MatchesFe4(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	in := pairs(inputs(r, 800))
	type impl8 struct {
		name string
		mul  func(h, f, g *Fe8)
		sqr  func(h, f *Fe8, n int)
	}
	is := []impl8{{"generic", mul8Generic, sqrN8Generic}}
	if hasAsm512 {
		is = append(is, impl8{"avx512", mul8, sqrN8})
	} else {
		t.Log("no AVX-512 kernels here: only the generic eight-lane code is tested")
	}
	for _, im := range is {
		for n := 0; n+1 < len(in); n++ {
			f, g := in[n], in[n+1]
			k := 1 + n%7
			var h, s Fe8
			im.mul(&h, &f, &g)
			im.sqr(&s, &f, k)
			var f0, f1, g0, g1, h0, h1, s0, s1 Fe4
			f.split(&f0, &f1)
			g.split(&g0, &g1)
			h.split(&h0, &h1)
			s.split(&s0, &s1)
			for half, q := range [2][4]*Fe4{{&f0, &g0, &h0, &s0}, {&f1, &g1, &h1, &s1}} {
				var wm, ws Fe4
				mulGeneric(&wm, q[0], q[1])
				sqrNGeneric(&ws, q[0], k)
				if *q[2] != wm || *q[3] != ws {
					t.Fatalf("%s, input %d, half %d: limbs differ from the four-lane code", im.name, n, half)
				}
			}
			if n%50 == 0 {
				for j := 0; j < 8; j++ {
					fv, gv := toBig(f.lane(j)), toBig(g.lane(j))
					checkOut(t, im.name+" mul", h.lane(j), new(big.Int).Mod(new(big.Int).Mul(fv, gv), bigP))
					e := new(big.Int).Lsh(big.NewInt(1), uint(k))
					checkOut(t, im.name+" square^k", s.lane(j), new(big.Int).Exp(fv, e, bigP))
				}
			}
		}
		// In place, as the exponentiation calls them.
		f, g := in[3], in[3]
		im.mul(&f, &f, &f)
		mul8Generic(&g, &g, &g)
		if f != g {
			t.Fatalf("%s: in-place mul differs", im.name)
		}
	}
}

// powP58x8 gives in each lane what powP58 gives.
func TestPowP58x8(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	in := inputs(r, 40)
	for n := 0; n+1 < len(in); n += 2 {
		var z Fe8
		z.join(&in[n], &in[n+1])
		powP58x8(&z, &z)
		var w0, w1, g0, g1 Fe4
		powP58(&w0, &in[n])
		powP58(&w1, &in[n+1])
		z.split(&g0, &g1)
		if g0 != w0 || g1 != w1 {
			t.Fatalf("input %d: powP58x8 differs from powP58", n)
		}
	}
}

// Where the CPU has AVX-512 and the fast path runs, the eight-lane passes
// must run too: this learns what the machine has on its own, so a switch
// left off by mistake (hasAsm512 false everywhere, a bridge8 that refuses)
// fails here rather than only costing speed.
func TestEightLanesWhereTheyCan(t *testing.T) {
	if runtime.GOARCH != "amd64" || !cpu.X86.HasAVX512F || puregoTag {
		t.Skipf("no AVX-512 kernels for %s (AVX512F %v, purego %v)", runtime.GOARCH, cpu.X86.HasAVX512F, puregoTag)
	}
	if !bridge() {
		t.Skip("the four-lane fast path is off here (TestFastPathOnWhereItCan says why)")
	}
	if !hasAsm512 {
		t.Fatal("the AVX-512 kernels are built and the CPU has AVX512F, yet hasAsm512 is false")
	}
	if !bridge8() {
		t.Fatal("the AVX-512 kernels run here, yet decompress8 disagreed with decompress4 on the bridge vectors")
	}
}

// Each special encoding in every lane of an eight-lane pass, among random
// points, and every batch length from 5 to 17, so that eight-lane passes,
// four-lane tails and single points to voi all run.
func TestDecompress8(t *testing.T) {
	encs := specialEncodings(t)
	r := rand.New(rand.NewPCG(35, 36))
	checkInEveryLane(t, encs, 8, r)
	var mix [][32]byte
	for k := 0; k < 40; k++ {
		p := randomPoint(r)
		mix = append(mix, encodingOf(&p), randBytes(r))
	}
	mix = append(mix, craftedEncodings()...)
	r.Shuffle(len(mix), func(i, j int) { mix[i], mix[j] = mix[j], mix[i] })
	for n := 5; n <= 17; n++ {
		checkAgainstVoi(t, mix[:n])
	}
	checkAgainstVoi(t, mix)
	// decompress8 itself, generic arithmetic included, against decompress4.
	check := func(what string) {
		for k := 0; k+8 <= len(mix); k += 8 {
			enc := (*[8][32]byte)(mix[k : k+8])
			if j := differs8(enc); j >= 0 {
				t.Fatalf("%s: %x: decompress8 lane %d differs from decompress4", what, enc[j], j)
			}
		}
	}
	check("kernels")
	withGeneric(func() { check("generic") })
}
