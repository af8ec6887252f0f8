package house

// ancSet is the set of a governance entry's ancestors-or-self among the
// governance entries, as a bitset of fixed-size chunks that the sets of
// later entries share where they are equal.
//
// A flat bitset per governance entry takes one bit per earlier one, the
// square of their number in all: 0.6 GB for a session of 100,000
// governance entries (a class's key registrations). An entry's set is its
// parents' union plus itself, so in a chain every chunk but the last is
// the parent's own chunk: each entry allocates one chunk and a slice of
// pointers (a pointer per ancChunkBits earlier entries), about 45 MB at
// 100,000. The chunks are never written once shared.
type ancSet []*ancChunk

// ancChunkBits is the number of governance entries one chunk covers.
const ancChunkBits = 2048

type ancChunk [ancChunkBits / 64]uint64

// has reports whether governance entry g is in s.
func (s ancSet) has(g int32) bool {
	c := int(g) / ancChunkBits
	if c >= len(s) || s[c] == nil {
		return false
	}
	b := int(g) % ancChunkBits
	return s[c][b/64]&(1<<(b%64)) != 0
}

// ancWith returns the union of sets with g added, g being larger than
// every member of the sets. A chunk that every set holding one shares is
// shared again; one that differs is or-ed into a new chunk; g's chunk is
// always new.
func ancWith(sets []ancSet, g int32) ancSet {
	n := int(g)/ancChunkBits + 1
	out := make(ancSet, n)
	for c := range n {
		var first *ancChunk
		shared := true
		for _, s := range sets {
			if c >= len(s) || s[c] == nil {
				continue
			}
			if first == nil {
				first = s[c]
			} else if s[c] != first {
				shared = false
			}
		}
		if shared {
			out[c] = first
			continue
		}
		nc := new(ancChunk)
		for _, s := range sets {
			if c < len(s) && s[c] != nil {
				for w, x := range s[c] {
					nc[w] |= x
				}
			}
		}
		out[c] = nc
	}
	c := int(g) / ancChunkBits
	nc := new(ancChunk)
	if out[c] != nil {
		*nc = *out[c]
	}
	b := int(g) % ancChunkBits
	nc[b/64] |= 1 << (b % 64)
	out[c] = nc
	return out
}

// orInto ors s into the flat bitset set (one bit per governance entry).
func (s ancSet) orInto(set []uint64) {
	for c, ch := range s {
		if ch == nil {
			continue
		}
		off := c * len(ch)
		for w, x := range ch {
			if off+w < len(set) {
				set[off+w] |= x
			}
		}
	}
}
