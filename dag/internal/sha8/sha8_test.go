package sha8

import (
	"crypto/sha512"
	"testing"

	"pgregory.net/rapid"
)

// The digests of any messages, in any parts, eight or fewer at a time or
// more, equal crypto/sha512's.
func TestSumsMatchSHA512(t *testing.T) {
	var h Hasher
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 20).Draw(t, "n")
		msgs := make([]Msg, n)
		for i := range msgs {
			l := rapid.OneOf(rapid.IntRange(0, 300), rapid.IntRange(100, 140), rapid.IntRange(maxLen-200, maxLen+200)).Draw(t, "len")
			b := make([]byte, l)
			for k := range b {
				b[k] = byte(k*31 + i)
			}
			c1 := rapid.IntRange(0, l).Draw(t, "c1")
			c2 := rapid.IntRange(c1, l).Draw(t, "c2")
			msgs[i] = Msg{b[:c1], b[c1:c2], b[c2:]}
		}
		out := make([][64]byte, n)
		check := func(how string) {
			for i := range msgs {
				m := &msgs[i]
				want := sha512.Sum512(append(append(append([]byte{}, m[0]...), m[1]...), m[2]...))
				if out[i] != want {
					t.Fatalf("%s: message %d (%d bytes): digest differs from crypto/sha512's", how, i, m.len())
				}
			}
		}
		h.Sums(msgs, out)
		check("Sums")
		if hasKernel { // the kernel itself, whatever the bridge said
			clear(out)
			h.sums(msgs, out)
			check("the kernel")
		}
	})
}

// The bridge passes the kernel and refuses one that is wrong: the same
// kernel with one bit of one lane's state flipped after each call.
func TestBridge(t *testing.T) {
	if !hasKernel {
		t.Skip("no AVX-512 here")
	}
	if !bridge(blocks) {
		t.Fatal("the bridge refuses the kernel")
	}
	broken := func(state *[8][8]uint64, buf []byte, stride int, counts *[8]uint64, max int) {
		blocks(state, buf, stride, counts, max)
		state[5][3] ^= 1 << 17
	}
	if bridge(broken) {
		t.Fatal("the bridge passes a broken kernel")
	}
}

// Where the CPU has AVX-512 (F and BW), the fast path is on.
func TestFastPathOnWhereItCan(t *testing.T) {
	if hasKernel && !Enabled() {
		t.Fatal("the CPU has AVX-512 but the bridge refused the kernel")
	}
}

// BenchmarkSums: 1,024 messages of an envelope's size (476 bytes: R, the
// key and 412 bytes signed), eight at a time and by crypto/sha512.
func BenchmarkSums(b *testing.B) {
	msgs := make([]Msg, 1024)
	for i := range msgs {
		m := make([]byte, 412)
		for k := range m {
			m[k] = byte(k + i)
		}
		msgs[i] = Msg{m[:32], m[32:64], m}
	}
	out := make([][64]byte, len(msgs))
	for _, via := range []string{"sha512", "sha8"} {
		b.Run(via, func(b *testing.B) {
			var h Hasher
			for range b.N {
				if via == "sha8" {
					h.Sums(msgs, out)
				} else {
					for i := range msgs {
						out[i] = sumOne(&msgs[i])
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(msgs)), "ns/msg")
		})
	}
}

// Once its buffer has grown, a Hasher allocates nothing per call: the
// lanes' state and block counts live in it, not on a stack they would
// escape from (they are handed to the kernel through a func value).
func TestSumsAllocateNothing(t *testing.T) {
	var h Hasher
	msgs := make([]Msg, 16)
	for i := range msgs {
		msgs[i] = Msg{make([]byte, 32), make([]byte, 32), make([]byte, 150+i)}
	}
	out := make([][64]byte, len(msgs))
	h.Sums(msgs, out)
	if n := testing.AllocsPerRun(20, func() { h.Sums(msgs, out) }); n != 0 {
		t.Errorf("Sums of %d messages: %v allocations a call, want 0", len(msgs), n)
	}
}
