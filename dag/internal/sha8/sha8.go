package sha8

import (
	"crypto/sha512"
	"encoding/binary"
	"sync"
)

// Msg is a message in up to three parts, hashed as their concatenation
// (a signature's R, the key, the signed bytes).
type Msg [3][]byte

func (m *Msg) len() int { return len(m[0]) + len(m[1]) + len(m[2]) }

// maxLen is the longest message that goes through the lanes: the eight
// lanes run as many blocks as the longest of them, so a long one would
// make the seven others wait; longer ones are hashed one by one.
const maxLen = 8 << 10

// Hasher computes SHA-512 digests, eight at a time where Enabled. It keeps
// its buffer from one call to the next; not safe for concurrent use.
type Hasher struct {
	buf []byte
	// state and counts are eight's, here rather than on its stack: handed
	// to kernel, a func value, they would escape and be allocated for
	// every eight messages (72 bytes a signature of a fresh sync).
	state  [8][8]uint64
	counts [8]uint64
	// kernel, when set, replaces blocks (the bridge's test).
	kernel func(state *[8][8]uint64, buf []byte, stride int, counts *[8]uint64, max int)
}

var iv = [8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}

// Sums sets out[i] to the SHA-512 digest of msgs[i]. out must be as long
// as msgs.
func (h *Hasher) Sums(msgs []Msg, out [][64]byte) {
	if !Enabled() {
		for i := range msgs {
			out[i] = sumOne(&msgs[i])
		}
		return
	}
	h.sums(msgs, out)
}

func sumOne(m *Msg) [64]byte {
	d := sha512.New()
	d.Write(m[0])
	d.Write(m[1])
	d.Write(m[2])
	var o [64]byte
	d.Sum(o[:0])
	return o
}

// sums hashes msgs eight at a time through the kernel (and the long ones
// one by one).
func (h *Hasher) sums(msgs []Msg, out [][64]byte) {
	var lane [8]int
	n := 0
	for i := range msgs {
		if msgs[i].len() > maxLen {
			out[i] = sumOne(&msgs[i])
			continue
		}
		lane[n] = i
		n++
		if n == 8 {
			h.eight(msgs, out, lane[:n])
			n = 0
		}
	}
	if n > 0 {
		h.eight(msgs, out, lane[:n])
	}
}

// eight hashes the messages at idx (at most eight), one a lane.
func (h *Hasher) eight(msgs []Msg, out [][64]byte, idx []int) {
	counts := &h.counts
	*counts = [8]uint64{}
	longest := 0
	for j, i := range idx {
		c := (msgs[i].len() + 17 + 127) / 128 // the 0x80 byte and the 16-byte length
		counts[j] = uint64(c)
		longest = max(longest, c)
	}
	stride := 128 * longest
	if cap(h.buf) < 8*stride {
		h.buf = make([]byte, 8*stride)
	}
	buf := h.buf[:8*stride]
	for j, i := range idx {
		b := buf[j*stride : (j+1)*stride]
		m := &msgs[i]
		k := copy(b, m[0])
		k += copy(b[k:], m[1])
		k += copy(b[k:], m[2])
		end := 128 * int(counts[j])
		b[k] = 0x80
		clear(b[k+1 : end-16])
		binary.BigEndian.PutUint64(b[end-16:], uint64(k)>>61)
		binary.BigEndian.PutUint64(b[end-8:], uint64(k)<<3)
	}
	state := &h.state
	for w := range state {
		for j := range state[w] {
			state[w][j] = iv[w]
		}
	}
	if h.kernel != nil {
		h.kernel(state, buf, stride, counts, longest)
	} else {
		blocks(state, buf, stride, counts, longest)
	}
	for j, i := range idx {
		for w := range 8 {
			binary.BigEndian.PutUint64(out[i][8*w:], state[w][j])
		}
	}
}

var (
	bridgeOnce sync.Once
	bridgeOK   bool
)

// Enabled reports whether the kernel runs here and gave crypto/sha512's
// digests on the bridge's messages: lengths at and around every block
// boundary the padding has (0, 111, 112, 127, 128, 239, 240), lanes of
// different lengths together, fewer than eight lanes.
func Enabled() bool {
	bridgeOnce.Do(func() { bridgeOK = hasKernel && bridge(blocks) })
	return bridgeOK
}

// bridge hashes its messages with kernel and compares the digests with
// crypto/sha512's.
func bridge(kernel func(*[8][8]uint64, []byte, int, *[8]uint64, int)) bool {
	lens := []int{0, 1, 64, 111, 112, 113, 127, 128, 129, 239, 240, 241, 255, 256, 500, 1000, 3}
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i*7 + 3)
	}
	var msgs []Msg
	for i, l := range lens {
		a := min(l, i%40)
		msgs = append(msgs, Msg{data[:a], data[a : a+min(l-a, 5)], data[a+min(l-a, 5) : l]})
	}
	out := make([][64]byte, len(msgs))
	h := Hasher{kernel: kernel}
	h.sums(msgs, out)
	for i := range msgs {
		if out[i] != sumOne(&msgs[i]) {
			return false
		}
	}
	return true
}
