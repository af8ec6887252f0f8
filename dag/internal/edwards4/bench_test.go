package edwards4

import (
	"math/rand/v2"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
)

func benchEncodings(n int) [][]byte {
	r := rand.New(rand.NewPCG(21, 22))
	in := make([][]byte, n)
	for i := range in {
		p := randomPoint(r)
		e := encodingOf(&p)
		in[i] = e[:]
	}
	return in
}

// BenchmarkDecompress: ns/op is per point, voi's SetCompressedY against
// this package's four-lane path, on valid points (the common case).
func BenchmarkDecompress(b *testing.B) {
	const n = 64
	in := benchEncodings(n)
	dst := make([]curve.EdwardsPoint, n)
	b.Run("voi", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			k := i % n
			if !voiDecompress(&dst[k], in[k]) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("edwards4", func(b *testing.B) {
		if !bridge() {
			b.Skip("fast path off here")
		}
		for i := 0; i < b.N; i += n {
			m := min(n, b.N-i)
			if !Decompress(dst[:m], in[:m]) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("edwards4-four-lanes", func(b *testing.B) {
		if !bridge() {
			b.Skip("fast path off here")
		}
		withFourLanes(func() {
			for i := 0; i < b.N; i += n {
				m := min(n, b.N-i)
				if !Decompress(dst[:m], in[:m]) {
					b.Fatal("refused")
				}
			}
		})
	})
	b.Run("edwards4-generic", func(b *testing.B) {
		var enc [4][32]byte
		for j := range enc {
			copy(enc[j][:], in[j])
		}
		var out [4]pointLimbs
		withGeneric(func() {
			for i := 0; i < b.N; i += 4 {
				decompress4(&enc, &out)
			}
		})
	})
}

func BenchmarkSquare(b *testing.B) {
	r := rand.New(rand.NewPCG(23, 24))
	f := inputs(r, 100)[99]
	b.Run("sqrN-100", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f.SquareN(&f, 100)
		}
	})
	b.Run("mul", func(b *testing.B) {
		g := f
		for i := 0; i < b.N; i++ {
			f.Mul(&f, &g)
		}
	})
}
