package house

// This file holds the House's index from tx id to entry: the one lookup
// every Admit makes (is the entry already admitted?) in a table of a
// million entries and more.

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/witan-dev/witan/dag"
)

// idIndex maps the tx ids of admitted entries to their entry indexes. It
// is an open-addressing table probed linearly, whose slots hold a 32-bit
// tag of the id's hash and the entry index; the id itself is read from the
// House's entries only when a tag matches.
//
// Why not a map[dag.ID]int32: a map slot holds the 33-byte id, so at a
// million entries the map spans some 50 MB and asking it about an id not
// yet admitted — what every Admit does — costs a cache and TLB miss in
// its control words and often another in its slots. Here the table is
// 8 bytes a slot at most half full (16 MB at a million entries), and an
// absent id is answered from the slots alone, usually from one cache line.
//
// The hash is keyed by a per-table random seed so that nobody can grind
// tx ids into one probe run. Nothing observable depends on the seed: the
// table is never iterated, and lookups are exact.
type idIndex struct {
	slots []uint64 // 0 = empty, else tag<<32 | entry index+1
	n     int      // ids held
	idHash
}

// newIDIndex returns an index sized for about n ids.
func newIDIndex(n int) idIndex {
	return idIndex{slots: make([]uint64, slotsFor(n)), idHash: newIDHash()}
}

// idHash hashes tx ids with random keys.
type idHash struct{ k0, k1 uint64 }

func newIDHash() idHash {
	var s maphash.Hash // a zero Hash takes a random seed
	k0 := s.Sum64()
	s.WriteByte(1)
	return idHash{k0: k0 | 1, k1: s.Sum64() | 1}
}

// slotsFor is the table size for n ids: a power of two at least 2n, and at
// least 16.
func slotsFor(n int) int {
	s := 16
	for s < 2*n {
		s <<= 1
	}
	return s
}

// hash mixes the first 16 bytes of the id's digest (a SHA-256 output) with
// the table's keys: one 64×64→128-bit multiply, folded.
func (x idHash) hash(id dag.ID) uint64 {
	d := id.Digest()
	a := binary.LittleEndian.Uint64(d[0:8]) ^ x.k0
	b := binary.LittleEndian.Uint64(d[8:16]) ^ x.k1
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// get returns the entry index of id, reading candidate ids from ents.
func (x *idIndex) get(id dag.ID, ents []entry) (int32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	h := x.hash(id)
	tag := h >> 32
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if s>>32 == tag {
			if e := int32(uint32(s) - 1); ents[e].id == id {
				return e, true
			}
		}
	}
}

// put records that id is entry e. Entries are indexed in order, so e is
// the number of ids held, and ents[:e] are the entries already indexed
// (read when the table grows). The caller has checked that id is not held.
func (x *idIndex) put(id dag.ID, e int32, ents []entry) {
	if int(e) != x.n {
		panic("house: idIndex.put out of order")
	}
	if 2*(x.n+1) > len(x.slots) {
		x.grow(ents[:x.n])
	}
	x.insert(x.hash(id), e)
	x.n++
}

func (x *idIndex) insert(h uint64, e int32) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = h>>32<<32 | uint64(uint32(e)+1)
}

// grow doubles the table and rehashes ents, the indexed entries, reading
// them in order rather than chasing the old slots.
func (x *idIndex) grow(ents []entry) {
	x.slots = make([]uint64, 2*len(x.slots))
	for e := range ents {
		x.insert(x.hash(ents[e].id), int32(e))
	}
}

// distinct reports whether ids holds no id twice, in O(len(ids)) whatever
// the ids (a determination's body is untrusted input).
func distinct(ids []dag.ID) bool {
	if len(ids) < 2 {
		return true
	}
	x := newIDHash()
	slots := make([]int32, slotsFor(len(ids))) // 0 = empty, else index in ids+1
	mask := uint64(len(slots) - 1)
	for i, id := range ids {
		j := x.hash(id) & mask
		for ; slots[j] != 0; j = (j + 1) & mask {
			if ids[slots[j]-1] == id {
				return false
			}
		}
		slots[j] = int32(i + 1)
	}
	return true
}
