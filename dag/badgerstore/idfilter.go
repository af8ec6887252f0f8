package badgerstore

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/witan-dev/witan/dag"
)

// idFilter answers "certainly not held" for most ids the store lacks
// without reading Badger. Every Put looks up each of its entries to find
// duplicates, and sync asks Has for ids a peer offers; nearly all of those
// ids are new, and an absent key costs Badger a search of both memtables
// and of every level whose table Bloom filter does not exclude it: about a
// fifth of the CPU of a Put before this filter.
//
// It is a superset of the ids of the entries the store holds (applied,
// pending or quarantined): Put adds a batch's ids before committing it
// (an id added for a batch that then fails only costs a lookup later), and
// nothing is ever deleted. It lives in memory only and is rebuilt by Open
// from the keys (a key-only scan).
//
// The filter is a scalable, blocked Bloom filter: a list of layers, each
// twice the capacity of the one before, each an array of 512-bit blocks
// (one cache line). An id sets and tests 8 bits of one block, so a query
// costs one cache miss per layer. At 16 bits per id a layer's false
// positive rate is about 0.2 %; a false positive costs only the lookup the
// filter would have saved. Ids are SHA-256 digests, so their bytes serve as
// the hash; grinding ids to collide buys an attacker lookups, nothing more.
type idFilter struct {
	mu     sync.Mutex // serialises add
	layers atomic.Pointer[[]*filterLayer]
}

type filterLayer struct {
	blocks []atomic.Uint64 // 8 words per block
	nblock uint64          // a power of two
	cap, n int             // capacity and count, under idFilter.mu
}

const (
	filterBitsPerID = 16
	filterMinCap    = 1 << 16
)

func newFilterLayer(capacity int) *filterLayer {
	capacity = max(capacity, filterMinCap)
	nb := uint64(1)
	for nb*512 < uint64(capacity)*filterBitsPerID {
		nb <<= 1
	}
	return &filterLayer{blocks: make([]atomic.Uint64, nb*8), nblock: nb, cap: capacity}
}

func newIDFilter(expected int) *idFilter {
	f := &idFilter{}
	ls := []*filterLayer{newFilterLayer(2 * expected)}
	f.layers.Store(&ls)
	return f
}

// bits returns the block of id in l and the 8 bit positions in it.
func (l *filterLayer) bits(d *[32]byte) (base uint64, pos [8]uint16) {
	base = (binary.LittleEndian.Uint64(d[0:8]) & (l.nblock - 1)) * 8
	v := binary.LittleEndian.Uint64(d[8:16])
	w := binary.LittleEndian.Uint64(d[16:24])
	for i := range 7 {
		pos[i] = uint16(v & 511)
		v >>= 9
	}
	pos[7] = uint16(w & 511)
	return base, pos
}

func (l *filterLayer) has(d *[32]byte) bool {
	base, pos := l.bits(d)
	for _, p := range pos {
		if l.blocks[base+uint64(p>>6)].Load()&(1<<(p&63)) == 0 {
			return false
		}
	}
	return true
}

// mayHold reports whether the store may hold id; false means it does not.
func (f *idFilter) mayHold(id dag.ID) bool {
	d := id.Digest()
	for _, l := range *f.layers.Load() {
		if l.has(&d) {
			return true
		}
	}
	return false
}

// add records id. Safe for use with concurrent mayHold.
func (f *idFilter) add(id dag.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := *f.layers.Load()
	l := ls[len(ls)-1]
	if l.n >= l.cap {
		l = newFilterLayer(2 * l.cap)
		grown := append(ls[:len(ls):len(ls)], l)
		f.layers.Store(&grown)
	}
	d := id.Digest()
	base, pos := l.bits(&d)
	for _, p := range pos {
		l.blocks[base+uint64(p>>6)].Or(1 << (p & 63))
	}
	l.n++
}

// size returns the filter's memory in bytes.
func (f *idFilter) size() int {
	n := 0
	for _, l := range *f.layers.Load() {
		n += 8 * len(l.blocks)
	}
	return n
}
