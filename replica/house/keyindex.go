package house

// This file holds a state's registered keys (key.register): key → the
// governance index that registered it.

import (
	"hash/maphash"
	"math/bits"

	"github.com/witan-dev/witan/dag"
)

// keyIndex is the registered keys of one governance state, as a persistent
// hash trie (a CHAMP: Steindorfer and Vinju, "Optimizing Hash-Array Mapped
// Tries for Fast and Lean Immutable JVM Collections", 2015). The House keeps
// a state after every governance entry, each a clone of the one before with
// that entry applied, so the clone must share what it does not change: a
// clone copies nothing, and a write copies the nodes on its key's path
// (about four of at most 32 slots each for 100,000 keys, some 1 KB), never
// the others. As a plain map every clone copied every key, so a session's
// memory grew with the square of its key registrations (some 3 GB in each
// replica for 10,000); sharded maps copied on write cut that by their
// number of shards but kept the square (521 MiB for 50,000).
//
// The hash is keyed by a per-process random seed so that nobody can grind
// keys into one path; nothing observable depends on it: lookups are
// exact, and each's order is unspecified, as a map's (its one caller
// sorts).
type keyIndex struct {
	root *keyNode // nil: no key
	n    int
}

// keyNode is a trie node. A slot (5 bits of the key's hash at the node's
// depth) holds nothing, an entry (dataMap) or a child node (nodeMap); the
// entries and the children are stored densely, in slot order. Below
// keyLevels the hash is used up and a node lists its entries in data,
// dataMap unused. A node is never written once it is reachable from an
// index: writes copy it.
type keyNode struct {
	dataMap, nodeMap uint32
	data             []keyEntry
	nodes            []*keyNode
}

type keyEntry struct {
	k dag.Key
	g int32
	h uint64 // k's hash, kept to move the entry down without hashing again
}

const (
	keySlotBits = 5
	keyLevels   = 64 / keySlotBits // 12 levels use 60 bits of the hash
)

var keySeed = maphash.MakeSeed()

func keyHash(k dag.Key) uint64 { return maphash.Comparable(keySeed, k) }

// keySlot is the bit of k's slot at depth lvl.
func keySlot(h uint64, lvl int) uint32 {
	return 1 << ((h >> (lvl * keySlotBits)) & (1<<keySlotBits - 1))
}

// keyPos is the dense position of slot bit among the slots set in m.
func keyPos(m, bit uint32) int { return bits.OnesCount32(m & (bit - 1)) }

// clone returns a copy of x; they share every node, which neither writes.
func (x *keyIndex) clone() *keyIndex {
	c := *x
	return &c
}

func (x *keyIndex) get(k dag.Key) (int32, bool) { return x.root.get(k, keyHash(k)) }

// get finds k, whose hash is h, under n.
func (n *keyNode) get(k dag.Key, h uint64) (int32, bool) {
	for lvl := 0; n != nil; lvl++ {
		if lvl == keyLevels {
			for _, e := range n.data {
				if e.k == k {
					return e.g, true
				}
			}
			return 0, false
		}
		bit := keySlot(h, lvl)
		switch {
		case n.dataMap&bit != 0:
			if e := n.data[keyPos(n.dataMap, bit)]; e.k == k {
				return e.g, true
			}
			return 0, false
		case n.nodeMap&bit != 0:
			n = n.nodes[keyPos(n.nodeMap, bit)]
		default:
			return 0, false
		}
	}
	return 0, false
}

func (x *keyIndex) set(k dag.Key, g int32) {
	added := false
	x.root = x.root.with(keyEntry{k, g, keyHash(k)}, 0, &added)
	if added {
		x.n++
	}
}

// with returns a copy of n (nil: an empty node) with e set, n at depth
// lvl; added reports whether e.k is new.
func (n *keyNode) with(e keyEntry, lvl int, added *bool) *keyNode {
	c := &keyNode{}
	if n != nil {
		*c = keyNode{dataMap: n.dataMap, nodeMap: n.nodeMap}
		c.data = append(make([]keyEntry, 0, len(n.data)+1), n.data...)
		c.nodes = append(make([]*keyNode, 0, len(n.nodes)+1), n.nodes...)
	}
	if lvl == keyLevels {
		for i := range c.data {
			if c.data[i].k == e.k {
				c.data[i].g = e.g
				return c
			}
		}
		c.data = append(c.data, e)
		*added = true
		return c
	}
	bit := keySlot(e.h, lvl)
	switch {
	case c.dataMap&bit != 0:
		i := keyPos(c.dataMap, bit)
		old := c.data[i]
		if old.k == e.k {
			c.data[i].g = e.g
			return c
		}
		// Two keys in one slot: both move to a new child a level down.
		var moved bool
		child := (*keyNode)(nil).with(old, lvl+1, &moved)
		child = child.with(e, lvl+1, added)
		c.data = append(c.data[:i], c.data[i+1:]...)
		c.dataMap &^= bit
		c.nodeMap |= bit
		j := keyPos(c.nodeMap, bit)
		c.nodes = append(c.nodes[:j], append([]*keyNode{child}, c.nodes[j:]...)...)
	case c.nodeMap&bit != 0:
		j := keyPos(c.nodeMap, bit)
		c.nodes[j] = c.nodes[j].with(e, lvl+1, added)
	default:
		c.dataMap |= bit
		i := keyPos(c.dataMap, bit)
		c.data = append(c.data[:i], append([]keyEntry{e}, c.data[i:]...)...)
		*added = true
	}
	return c
}

func (x *keyIndex) len() int { return x.n }

// each calls fn with every key, in no particular order.
func (x *keyIndex) each(fn func(k dag.Key, g int32)) {
	x.root.each(fn)
}

func (n *keyNode) each(fn func(k dag.Key, g int32)) {
	if n == nil {
		return
	}
	for _, e := range n.data {
		fn(e.k, e.g)
	}
	for _, c := range n.nodes {
		c.each(fn)
	}
}
