package house

import (
	"crypto/ed25519"
	"encoding/binary"
	"testing"

	"github.com/witan-dev/witan/dag"
	"pgregory.net/rapid"
)

// testKey returns a distinct valid key for every i.
func testKey(t testing.TB, i int) dag.Key {
	seed := make([]byte, ed25519.SeedSize)
	binary.BigEndian.PutUint64(seed, uint64(i)+1)
	k, err := dag.KeyFromBytes(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyIndexIsAPersistentMap: any sequence of sets and clones leaves
// every index answering exactly what a plain map given the same sets
// answers (get, len, each), and a clone is unchanged by what is set on the
// index it came from, or on it, later.
func TestKeyIndexIsAPersistentMap(t *testing.T) {
	keys := make([]dag.Key, 300)
	for i := range keys {
		keys[i] = testKey(t, i)
	}
	rapid.Check(t, func(rt *rapid.T) {
		type version struct {
			x    *keyIndex
			want map[dag.Key]int32
		}
		vs := []version{{&keyIndex{}, map[dag.Key]int32{}}}
		for range rapid.IntRange(1, 400).Draw(rt, "ops") {
			v := rapid.IntRange(0, len(vs)-1).Draw(rt, "version")
			if rapid.IntRange(0, 9).Draw(rt, "op") == 0 {
				c := map[dag.Key]int32{}
				for k, g := range vs[v].want {
					c[k] = g
				}
				vs = append(vs, version{vs[v].x.clone(), c})
				continue
			}
			k := keys[rapid.IntRange(0, len(keys)-1).Draw(rt, "key")]
			g := rapid.Int32().Draw(rt, "g")
			vs[v].x.set(k, g)
			vs[v].want[k] = g
		}
		for i, v := range vs {
			checkKeyIndex(rt, i, v.x, v.want, keys)
		}
	})
}

func checkKeyIndex(rt *rapid.T, i int, x *keyIndex, want map[dag.Key]int32, keys []dag.Key) {
	if x.len() != len(want) {
		rt.Fatalf("version %d: len %d, want %d", i, x.len(), len(want))
	}
	for _, k := range keys {
		g, ok := x.get(k)
		wg, wok := want[k]
		if ok != wok || g != wg {
			rt.Fatalf("version %d: get = %d, %v; want %d, %v", i, g, ok, wg, wok)
		}
	}
	seen := map[dag.Key]int32{}
	x.each(func(k dag.Key, g int32) {
		if _, dup := seen[k]; dup {
			rt.Fatalf("version %d: each gives a key twice", i)
		}
		seen[k] = g
	})
	if len(seen) != len(want) {
		rt.Fatalf("version %d: each gives %d keys, want %d", i, len(seen), len(want))
	}
	for k, g := range want {
		if seen[k] != g {
			rt.Fatalf("version %d: each gives %d for a key, want %d", i, seen[k], g)
		}
	}
}

// TestKeyIndexFullHashCollisions: keys whose hashes agree in all the bits
// the trie uses end in one node at the last level, listed there, each
// still found and updated as itself.
func TestKeyIndexFullHashCollisions(t *testing.T) {
	const h = 0x0123456789abcdef
	var root *keyNode
	var ks []dag.Key
	for i := range 5 {
		k := testKey(t, i)
		ks = append(ks, k)
		added := false
		root = root.with(keyEntry{k, int32(i), h}, 0, &added)
		if !added {
			t.Fatalf("key %d not added", i)
		}
	}
	added := false
	root = root.with(keyEntry{ks[2], 42, h}, 0, &added)
	if added {
		t.Fatal("setting a held key again added it")
	}
	depth, n := 0, root
	for n.nodeMap != 0 {
		n = n.nodes[0]
		depth++
	}
	if depth != keyLevels || len(n.data) != 5 {
		t.Fatalf("the colliding keys sit at depth %d in a node of %d, want %d and 5", depth, len(n.data), keyLevels)
	}
	for i, k := range ks {
		want := int32(i)
		if i == 2 {
			want = 42
		}
		if g, ok := root.get(k, h); !ok || g != want {
			t.Fatalf("key %d: %d, %v; want %d", i, g, ok, want)
		}
	}
	if _, ok := root.get(testKey(t, 99), h); ok {
		t.Fatal("a key never set is found")
	}
}
