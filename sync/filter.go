package sync

// The requester's summary of its recent entries: a Bloom filter whose hash
// is SipHash-2-4 keyed with a random salt chosen per request. A peer that
// grinds entry ids cannot know which bits they will set, so it cannot make
// its entries look already held (which would blind the filter) more often
// than the false-positive rate.

import (
	"encoding/binary"
	"io"
	"math/bits"

	"github.com/witan-dev/witan/dag"
)

// Filter is a salted Bloom filter over entry ids.
type Filter struct {
	Salt [16]byte
	K    uint8
	Bits []byte
}

// BitsPerEntry and Hashes size filters: about 0.8% false positives.
const (
	BitsPerEntry = 10
	Hashes       = 7
)

// NewFilter returns a filter sized for n ids, salted from rnd.
func NewFilter(rnd io.Reader, n int) (*Filter, error) {
	f := &Filter{K: Hashes}
	if _, err := io.ReadFull(rnd, f.Salt[:]); err != nil {
		return nil, err
	}
	nb := (n*BitsPerEntry + 7) / 8
	nb = max(nb, 8)
	nb = min(nb, MaxFilterBytes)
	f.Bits = make([]byte, nb)
	return f, nil
}

func (f *Filter) positions(id dag.ID, fn func(bit uint64) bool) bool {
	d := id.Digest()
	h := siphash(binary.LittleEndian.Uint64(f.Salt[:8]), binary.LittleEndian.Uint64(f.Salt[8:]), d[:])
	h1, h2 := h&0xffffffff, h>>32|1
	m := uint64(len(f.Bits)) * 8
	for i := uint64(0); i < uint64(f.K); i++ {
		if !fn((h1 + i*h2) % m) {
			return false
		}
	}
	return true
}

// Add adds id.
func (f *Filter) Add(id dag.ID) {
	f.positions(id, func(b uint64) bool { f.Bits[b/8] |= 1 << (b % 8); return true })
}

// Has reports whether id may have been added: never false for an id that
// was, rarely true for one that was not.
func (f *Filter) Has(id dag.ID) bool {
	if f == nil {
		return false
	}
	return f.positions(id, func(b uint64) bool { return f.Bits[b/8]&(1<<(b%8)) != 0 })
}

// siphash is SipHash-2-4 (Aumasson and Bernstein) of m under key (k0, k1).
func siphash(k0, k1 uint64, m []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(m)
	for len(m) >= 8 {
		w := binary.LittleEndian.Uint64(m)
		v3 ^= w
		round()
		round()
		v0 ^= w
		m = m[8:]
	}
	var last [8]byte
	copy(last[:], m)
	last[7] = byte(n)
	w := binary.LittleEndian.Uint64(last[:])
	v3 ^= w
	round()
	round()
	v0 ^= w
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}
