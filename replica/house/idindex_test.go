package house

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
)

// TestIDIndexMatchesMap: the id index answers exactly as a map would,
// through growth, for ids whose hashes collide in the slot and in the tag
// (forced by zero keys and equal leading digest bytes), and for ids never
// put.
func TestIDIndexMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := newIDIndex(rapid.IntRange(0, 40).Draw(t, "size"))
		if rapid.Bool().Draw(t, "zero keys") {
			x.k0, x.k1 = 0, 0 // every id whose first 16 bytes are zero hashes to 0
		}
		var ents []entry
		want := map[dag.ID]int32{}
		id := func(label string) dag.ID {
			var d [32]byte
			if rapid.Bool().Draw(t, label+" collides") {
				d[31] = rapid.Byte().Draw(t, label+" tail")
				d[30] = rapid.Byte().Draw(t, label+" tail2")
			} else {
				d = dag.Sum([]byte{rapid.Byte().Draw(t, label), rapid.Byte().Draw(t, label+"2")}).Digest()
			}
			return dag.IDFromDigest(d)
		}
		for i, n := 0, rapid.IntRange(0, 300).Draw(t, "ops"); i < n; i++ {
			q := id("id")
			got, ok := x.get(q, ents)
			w, wok := want[q]
			if ok != wok || got != w {
				t.Fatalf("get(%s) = %d, %v; want %d, %v", q, got, ok, w, wok)
			}
			if !ok && rapid.Bool().Draw(t, "put") {
				e := int32(len(ents))
				x.put(q, e, ents)
				ents = append(ents, entry{id: q})
				want[q] = e
			}
		}
		if x.n != len(want) || 2*x.n > len(x.slots) {
			t.Fatalf("%d ids in %d slots, want %d at most half full", x.n, len(x.slots), len(want))
		}
		for q, w := range want {
			if got, ok := x.get(q, ents); !ok || got != w {
				t.Fatalf("after all puts: get(%s) = %d, %v; want %d", q, got, ok, w)
			}
		}
	})
}

// TestIDIndexSeeded: two tables hash with different keys, so nobody can
// grind ids into one probe run of every replica's table.
func TestIDIndexSeeded(t *testing.T) {
	a, b := newIDIndex(0), newIDIndex(0)
	if a.k0 == b.k0 && a.k1 == b.k1 {
		t.Fatalf("two indexes share the keys %x %x", a.k0, a.k1)
	}
}

func BenchmarkIDIndexMiss(b *testing.B) {
	const n = 1 << 20
	x := newIDIndex(n)
	ents := make([]entry, 0, n)
	for i := 0; i < n; i++ {
		id := dag.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
		x.put(id, int32(i), ents)
		ents = append(ents, entry{id: id})
	}
	probes := make([]dag.ID, n)
	for i := range probes {
		probes[i] = dag.Sum([]byte{'x', byte(i), byte(i >> 8), byte(i >> 16)})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := x.get(probes[i%len(probes)], ents); ok {
			b.Fatal("found an id never put")
		}
	}
}

func TestDistinct(t *testing.T) {
	a, b, c := dag.Sum([]byte("a")), dag.Sum([]byte("b")), dag.Sum([]byte("c"))
	for _, tc := range []struct {
		ids  []dag.ID
		want bool
	}{
		{nil, true},
		{[]dag.ID{a}, true},
		{[]dag.ID{a, b, c}, true},
		{[]dag.ID{a, a}, false},
		{[]dag.ID{a, b, c, b}, false},
		{[]dag.ID{c, b, a, c}, false},
		{[]dag.ID{{}, a}, true},
		{[]dag.ID{{}, {}}, false},
	} {
		if got := distinct(tc.ids); got != tc.want {
			t.Errorf("distinct(%v) = %v, want %v", tc.ids, got, tc.want)
		}
	}
	// Many ids, one repeated at the end.
	many := make([]dag.ID, 5000)
	for i := range many {
		many[i] = dag.Sum([]byte{byte(i), byte(i >> 8)})
	}
	if !distinct(many) {
		t.Fatal("5000 distinct ids reported as repeating")
	}
	if distinct(append(many, many[1234])) {
		t.Fatal("a repeat among 5001 ids not found")
	}
}
