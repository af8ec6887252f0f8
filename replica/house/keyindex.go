package house

// This file holds a state's registered keys (key.register): key → the
// governance index that registered it.

import (
	"hash/maphash"
	"maps"

	"github.com/witan-dev/witan/dag"
)

// keyIndex is the registered keys of one governance state. The House keeps
// a state after every governance entry, each a clone of the one before
// with that entry applied; as a plain map, every clone copied every key,
// so a session's memory grew with the square of its key registrations
// (10,000 of them made some 3 GB in each replica). Here the keys are split
// in keyShards maps by a keyed hash; a clone shares them all (2 KiB of
// pointers) and a write copies only the shard it writes to, so a state
// costs about 2 KiB plus 1/256 of the keys.
//
// The hash is keyed by a per-process random seed so that nobody can grind
// keys into one shard; nothing observable depends on it: lookups are
// exact, and each's order is unspecified, as a map's (its one caller
// sorts).
type keyIndex struct {
	shards [keyShards]map[dag.Key]int32
	// owned marks the shards this index alone holds and may write in
	// place; the others are shared with clones and copied on write.
	owned [keyShards / 64]uint64
	n     int
}

const keyShards = 256

var keySeed = maphash.MakeSeed()

func keyShard(k dag.Key) int { return int(maphash.Comparable(keySeed, k) % keyShards) }

// clone returns a copy of x that shares its shards: from now on neither
// writes a shared shard in place.
func (x *keyIndex) clone() *keyIndex {
	c := &keyIndex{shards: x.shards, n: x.n}
	x.owned = [keyShards / 64]uint64{}
	return c
}

func (x *keyIndex) get(k dag.Key) (int32, bool) {
	g, ok := x.shards[keyShard(k)][k]
	return g, ok
}

func (x *keyIndex) set(k dag.Key, g int32) {
	i := keyShard(k)
	m := x.shards[i]
	if x.owned[i/64]&(1<<(i%64)) == 0 {
		m = maps.Clone(m)
		if m == nil {
			m = map[dag.Key]int32{}
		}
		x.shards[i] = m
		x.owned[i/64] |= 1 << (i % 64)
	}
	if _, ok := m[k]; !ok {
		x.n++
	}
	m[k] = g
}

func (x *keyIndex) len() int { return x.n }

// each calls fn with every key, in no particular order.
func (x *keyIndex) each(fn func(k dag.Key, g int32)) {
	for _, m := range x.shards {
		for k, g := range m {
			fn(k, g)
		}
	}
}
