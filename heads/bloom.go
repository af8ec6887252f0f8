package heads

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// Bloom is a keyed Bloom filter over entry ids: a compact, salted summary
// of the entries a replica holds (say, its recent ones), which a peer tests
// its own entries against to guess what to send.
//
// A Bloom filter has no false negatives and some false positives: Has may
// say yes for an id never added, and a sender trusting it would skip an
// entry the receiver lacks. The salt is what makes that harmless. The
// caller draws a fresh random salt for every sync session, so an id that
// collides in one session almost surely does not in the next, and nobody
// can craft ids that collide on purpose without knowing the salt. Sync
// must therefore still ask for missing parents by id.
//
// An id's bit positions come from SHA-256(salt || id digest): its first
// eight bytes h1 and next eight h2 (made odd) give positions h1 + i·h2
// modulo the bit count for i = 0..k-1 (Kirsch–Mitzenmacher). Integers only.
type Bloom struct {
	salt []byte
	k    int
	bits []byte
}

// Limits on a Bloom filter, also applied when decoding one from a peer.
const (
	MinSaltLen   = 16
	MaxSaltLen   = 64
	MaxBloomBits = 1 << 24 // 2 MiB of bits
	MaxHashes    = 32
)

// ErrBloom is wrapped by the errors of NewBloom and UnmarshalBinary.
var ErrBloom = errors.New("heads: invalid bloom filter")

// NewBloom returns an empty filter sized for n ids at bitsPerID bits each
// (10 gives about 1 % false positives), keyed by salt, which must be
// MinSaltLen to MaxSaltLen random bytes that the caller draws per session.
// The number of hash functions is bitsPerID·0.69 (ln 2), at least one.
func NewBloom(salt []byte, n, bitsPerID int) (*Bloom, error) {
	if len(salt) < MinSaltLen || len(salt) > MaxSaltLen {
		return nil, fmt.Errorf("%w: salt is %d bytes, want %d to %d", ErrBloom, len(salt), MinSaltLen, MaxSaltLen)
	}
	if n < 1 || bitsPerID < 1 || bitsPerID > 64 {
		return nil, fmt.Errorf("%w: n=%d, bitsPerID=%d", ErrBloom, n, bitsPerID)
	}
	m := n * bitsPerID
	if m > MaxBloomBits || m/bitsPerID != n {
		return nil, fmt.Errorf("%w: %d ids × %d bits is more than %d bits", ErrBloom, n, bitsPerID, MaxBloomBits)
	}
	m = max(64, (m+7)/8*8)
	k := min(MaxHashes, max(1, bitsPerID*69/100))
	return &Bloom{salt: append([]byte(nil), salt...), k: k, bits: make([]byte, m/8)}, nil
}

func (b *Bloom) positions(id dag.ID, fn func(bit uint64) bool) bool {
	h := sha256.New()
	h.Write(b.salt)
	d := id.Digest()
	h.Write(d[:])
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	h1 := binary.BigEndian.Uint64(sum[0:8])
	h2 := binary.BigEndian.Uint64(sum[8:16]) | 1
	m := uint64(len(b.bits)) * 8
	for i := 0; i < b.k; i++ {
		if !fn((h1 + uint64(i)*h2) % m) {
			return false
		}
	}
	return true
}

// Add adds id to the filter.
func (b *Bloom) Add(id dag.ID) {
	b.positions(id, func(bit uint64) bool {
		b.bits[bit/8] |= 1 << (bit % 8)
		return true
	})
}

// Has reports whether id may have been added: always true for an id that
// was, and rarely for one that was not.
func (b *Bloom) Has(id dag.ID) bool {
	return b.positions(id, func(bit uint64) bool { return b.bits[bit/8]&(1<<(bit%8)) != 0 })
}

// Salt returns a copy of the filter's salt.
func (b *Bloom) Salt() []byte { return append([]byte(nil), b.salt...) }

// Hashes returns the number of hash functions, k.
func (b *Bloom) Hashes() int { return b.k }

// Bits returns the size of the filter in bits.
func (b *Bloom) Bits() int { return len(b.bits) * 8 }

// bloomVersion is the first byte of a marshalled filter.
const bloomVersion = 1

// MarshalBinary encodes the filter: version (1), k, salt length, salt,
// then the bit array (bit i is bit i%8 of byte i/8).
func (b *Bloom) MarshalBinary() ([]byte, error) {
	out := make([]byte, 0, 3+len(b.salt)+len(b.bits))
	out = append(out, bloomVersion, byte(b.k), byte(len(b.salt)))
	out = append(out, b.salt...)
	return append(out, b.bits...), nil
}

// UnmarshalBinary decodes a filter from untrusted bytes, checking every
// limit; the result is independent of data.
func (b *Bloom) UnmarshalBinary(data []byte) error {
	if len(data) < 3 || data[0] != bloomVersion {
		return fmt.Errorf("%w: bad header", ErrBloom)
	}
	k, sl := int(data[1]), int(data[2])
	if k < 1 || k > MaxHashes || sl < MinSaltLen || sl > MaxSaltLen || len(data) < 3+sl {
		return fmt.Errorf("%w: k=%d, salt length %d", ErrBloom, k, sl)
	}
	bits := data[3+sl:]
	if len(bits) < 8 || len(bits)*8 > MaxBloomBits {
		return fmt.Errorf("%w: %d bytes of bits", ErrBloom, len(bits))
	}
	*b = Bloom{salt: append([]byte(nil), data[3:3+sl]...), k: k, bits: append([]byte(nil), bits...)}
	return nil
}
