package edwards4

import (
	"math/rand/v2"
	"testing"
)

// FuzzEdwardsDecompress4: four 32-byte encodings (the input cut or padded
// with zeros to 128 bytes) decode through DecompressEach, in one batch and
// one at a time, with the verdicts, points, compressions and memory of
// voi's SetCompressedY. (fuzz/ cannot import this internal package; its
// FuzzEdwardsDecompress4 checks the same inputs end to end through dag's
// batch verifier.)
func FuzzEdwardsDecompress4(f *testing.F) {
	r := rand.New(rand.NewPCG(31, 32))
	var seeds [][32]byte
	for k := 0; k < 6; k++ {
		p := randomPoint(r)
		seeds = append(seeds, encodingOf(&p))
	}
	pts, err := torsionPoints()
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range pts {
		e := encodingOf(&p)
		seeds = append(seeds, e)
		e[31] |= 0x80
		seeds = append(seeds, e)
	}
	seeds = append(seeds, craftedEncodings()[:8]...)
	seeds = append(seeds, randBytes(r), randBytes(r), [32]byte{2})
	for k := 0; k+4 <= len(seeds); k += 2 {
		var b []byte
		for j := 0; j < 4; j++ {
			b = append(b, seeds[k+j][:]...)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var in [128]byte
		copy(in[:], b)
		encs := make([][32]byte, 4)
		for j := range encs {
			copy(encs[j][:], in[32*j:])
		}
		checkAgainstVoi(t, encs)
		for j := range encs {
			checkAgainstVoi(t, encs[j:j+1])
		}
	})
}
