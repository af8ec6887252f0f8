package sha8

import (
	"crypto/sha512"
	"testing"
)

// FuzzSums: the input cut into up to eleven messages (each byte of a
// header gives a length), each in three parts, through Sums and through
// the kernel itself, against crypto/sha512. (fuzz/ cannot import this
// internal package; it reaches this code through dag's batch verifier.)
func FuzzSums(f *testing.F) {
	f.Add([]byte{0, 111, 112, 127, 128, 239, 240, 3}, []byte("abc"))
	f.Add([]byte{200, 1}, make([]byte, 300))
	var h Hasher
	f.Fuzz(func(t *testing.T, lens []byte, data []byte) {
		var msgs []Msg
		at := 0
		for k, l := range lens {
			if k == 11 {
				break
			}
			n := min(int(l)*3, len(data)-at)
			m := data[at : at+n]
			at += n
			c := min(int(l)%7, len(m))
			msgs = append(msgs, Msg{m[:c], m[c:c], m[c:]})
		}
		out := make([][64]byte, len(msgs))
		check := func(how string) {
			for i := range msgs {
				m := &msgs[i]
				if out[i] != sha512.Sum512(append(append(append([]byte{}, m[0]...), m[1]...), m[2]...)) {
					t.Fatalf("%s: message %d (%d bytes) differs from crypto/sha512's", how, i, m.len())
				}
			}
		}
		h.Sums(msgs, out)
		check("Sums")
		if hasKernel {
			clear(out)
			h.sums(msgs, out)
			check("the kernel")
		}
	})
}
