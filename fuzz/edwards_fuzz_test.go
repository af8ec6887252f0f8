package fuzz

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// edwardsBatch is eight signatures by two keys (a batch dag verifies with
// its grouped equation), over fixed messages.
func edwardsBatch(f *testing.F) (keys []dag.Key, msgs, sigs [][]byte) {
	for i := 0; i < 8; i++ {
		s, err := dag.SignerFromSeed(bytes.Repeat([]byte{byte(i%2 + 11)}, 32))
		if err != nil {
			f.Fatal(err)
		}
		m := []byte{'e', 'd', byte(i)}
		keys = append(keys, s.Key())
		msgs = append(msgs, m)
		sigs = append(sigs, s.Sign(dag.DomainEnvelope, m))
	}
	return keys, msgs, sigs
}

// FuzzEdwardsDecompress4: four 32-byte encodings (the input cut or padded
// with zeros to 128 bytes) replace the R of four of the eight signatures
// of a batch; dag's batch verifier, whose grouped equation decompresses
// the R's four at a time (dag/internal/edwards4), must give every
// signature the verdict of single verification (voi's ZIP-215
// VerifyWithOptions), and the four untouched signatures must stay valid.
//
// Go's internal-package rule keeps this package from calling edwards4
// itself; the point-by-point comparison with voi's SetCompressedY (same
// verdicts, same points, same memory) is the target of the same name in
// dag/internal/edwards4, run with
//
//	go test ./dag/internal/edwards4 -run '^$' -fuzz '^FuzzEdwardsDecompress4$'
func FuzzEdwardsDecompress4(f *testing.F) {
	keys, msgs, sigs := edwardsBatch(f)
	var genuine []byte
	for i := 0; i < 4; i++ {
		genuine = append(genuine, sigs[i][:32]...)
	}
	f.Add(genuine) // all valid: the grouped equation holds
	flipped := bytes.Clone(genuine)
	flipped[32+31] ^= 0x80 // the negated R: invalid signature, valid point
	f.Add(flipped)
	f.Add(append(bytes.Clone(genuine[:96]), make([]byte, 32)...)) // y = 0, order 4
	nonCanon := bytes.Repeat([]byte{0xff}, 32)
	nonCanon[31] = 0x7f
	nonCanon[0] = 0xed // y = p: non-canonical 0
	f.Add(append(bytes.Clone(genuine[:64]), append(nonCanon, genuine[96:]...)...))
	f.Add(bytes.Repeat([]byte{0x02}, 128)) // y = 2…: not on the curve
	f.Fuzz(func(t *testing.T, b []byte) {
		var in [128]byte
		copy(in[:], b)
		bv := dag.NewBatchVerifier()
		want := make([]bool, len(sigs))
		for i := range sigs {
			sig := bytes.Clone(sigs[i])
			if i < 4 {
				copy(sig[:32], in[32*i:])
			}
			want[i] = dag.Verify(keys[i], dag.DomainEnvelope, msgs[i], sig)
			bv.Add(keys[i], dag.DomainEnvelope, msgs[i], sig)
		}
		all, valid := bv.Verify()
		wantAll := true
		for i := range want {
			wantAll = wantAll && want[i]
			if valid[i] != want[i] {
				t.Fatalf("signature %d (R %x): batch says %v, single %v", i, in[:], valid[i], want[i])
			}
			if i >= 4 && !valid[i] {
				t.Fatalf("untouched signature %d refused", i)
			}
		}
		if all != wantAll {
			t.Fatalf("all = %v, want %v", all, wantAll)
		}
	})
}
