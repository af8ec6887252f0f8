package house

import (
	"testing"

	"pgregory.net/rapid"
)

// TestAncSetMatchesFlatBitsets: over random governance DAGs (each entry's
// past the union of a few earlier entries' sets), the chunked sets answer
// every membership and or into the same flat bitset as the plain
// one-bit-per-entry sets they replace, worked out here the plain way.
func TestAncSetMatchesFlatBitsets(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 2*ancChunkBits+100).Draw(rt, "n")
		seed := rapid.Uint64().Draw(rt, "seed")
		next := func() uint64 { // a small xorshift: rapid draws per entry are too slow at this size
			seed ^= seed << 13
			seed ^= seed >> 7
			seed ^= seed << 17
			return seed
		}
		sets := make([]ancSet, n)
		want := make([][]uint64, n)
		bit := func(set []uint64, a int32) bool { return set[a/64]&(1<<(a%64)) != 0 }
		for g := range int32(n) {
			var parents []int32
			if g > 0 {
				for range next()%3 + 1 {
					// Mostly the entry just before (a chain), sometimes any earlier one.
					p := g - 1
					if next()%4 == 0 {
						p = int32(next() % uint64(g))
					}
					parents = append(parents, p)
				}
			}
			in := make([]ancSet, len(parents))
			want[g] = make([]uint64, n/64+1)
			want[g][g/64] |= 1 << (g % 64)
			for i, p := range parents {
				in[i] = sets[p]
				for w, x := range want[p] {
					want[g][w] |= x
				}
			}
			sets[g] = ancWith(in, g)
		}
		for g := range int32(n) {
			flat := make([]uint64, n/64+1)
			sets[g].orInto(flat)
			for a := range int32(n) {
				if sets[g].has(a) != bit(want[g], a) {
					rt.Fatalf("entry %d: has(%d) = %v, want %v", g, a, sets[g].has(a), bit(want[g], a))
				}
				if bit(flat, a) != bit(want[g], a) {
					rt.Fatalf("entry %d: flat bit %d = %v, want %v", g, a, bit(flat, a), bit(want[g], a))
				}
			}
		}
	})
}

// TestAncSetChainShares: in a chain, an entry's set shares every chunk
// but its last with its parent's, so a long chain costs a chunk an entry,
// not a bit per earlier entry.
func TestAncSetChainShares(t *testing.T) {
	const n = 5 * ancChunkBits
	sets := make([]ancSet, n)
	sets[0] = ancWith(nil, 0)
	chunks := map[*ancChunk]bool{}
	for g := int32(1); g < n; g++ {
		sets[g] = ancWith([]ancSet{sets[g-1]}, g)
	}
	for _, s := range sets {
		for _, c := range s {
			chunks[c] = true
		}
	}
	if len(chunks) != n {
		t.Fatalf("%d entries in a chain hold %d distinct chunks, want one each", n, len(chunks))
	}
	last := sets[n-1]
	for a := range int32(n) {
		if !last.has(a) {
			t.Fatalf("the chain's last entry lacks ancestor %d", a)
		}
	}
}
