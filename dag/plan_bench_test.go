package dag_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/dagtest"
)

// BenchmarkMemStorePut measures the planner through MemStore: a chain of
// 2000 entries in batches of 100, in order (every entry applied at once)
// and children first (every batch pending until the last promotes them
// all). ns/op is per entry.
func BenchmarkMemStorePut(b *testing.B) {
	const n, batch = 2000, 100
	var chain []dag.Entry
	var parents []dag.ID
	for i := 0; i < n; i++ {
		e := dagtest.NewEntry("s", 3, i, parents)
		chain = append(chain, e)
		parents = []dag.ID{e.ID}
	}
	reversed := slices.Clone(chain)
	slices.Reverse(reversed)
	for _, c := range []struct {
		name    string
		entries []dag.Entry
	}{{"in-order", chain}, {"children-first", reversed}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i += n {
				s := dag.NewMemStore()
				for j := 0; j < n; j += batch {
					if _, err := s.Put(ctx, dag.Batch{Entries: c.entries[j : j+batch]}); err != nil {
						b.Fatal(err)
					}
				}
				if h, _ := s.Heads(ctx, "s"); len(h) != 1 {
					b.Fatal("heads " + strconv.Itoa(len(h)))
				}
				s.Close()
			}
		})
	}
}
