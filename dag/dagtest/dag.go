package dagtest

// Random DAGs for property tests, and deliberately naive reference
// implementations of the causal algorithms to check fast ones against.

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"pgregory.net/rapid"
)

// DAG is a random DAG of one space. Entries are in the order they were
// generated, which is a topological order: every entry comes after its
// parents. Each entry's Data is a small canonical JSON object naming its
// index, space and parents, and its ID is the SHA-256 of Data, so ids are
// unrelated to the topology and ties broken by id are exercised.
type DAG struct {
	Space   string
	Entries []dag.Entry
}

// DAGOptions shapes the DAGs that DAGs generates. The zero value gives DAGs
// of up to 32 entries with up to 3 parents each and possibly several roots.
type DAGOptions struct {
	Space      string // space of every entry; "space" if empty
	MaxEntries int    // at most this many entries (at least 1); 32 if 0
	MaxParents int    // at most this many parents per entry; 3 if 0
	SingleRoot bool   // only the first entry has no parents (a 30k session)
}

// DAGs returns a generator of random DAGs. Each entry after the first picks
// a random set of distinct earlier entries as parents, favouring recent
// ones so that both long chains and wide merges appear.
func DAGs(o DAGOptions) *rapid.Generator[DAG] {
	if o.Space == "" {
		o.Space = "space"
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 32
	}
	if o.MaxParents <= 0 {
		o.MaxParents = 3
	}
	return rapid.Custom(func(t *rapid.T) DAG {
		n := rapid.IntRange(1, o.MaxEntries).Draw(t, "entries")
		salt := rapid.Uint32().Draw(t, "salt")
		d := DAG{Space: o.Space, Entries: make([]dag.Entry, 0, n)}
		for i := 0; i < n; i++ {
			var parents []dag.ID
			if i > 0 {
				lo := 0
				if o.SingleRoot {
					lo = 1
				}
				k := rapid.IntRange(lo, min(o.MaxParents, i)).Draw(t, "parents")
				for len(parents) < k {
					// Bias towards recent entries: pick a distance back.
					back := rapid.IntRange(1, i).Draw(t, "back")
					p := d.Entries[i-back].ID
					if !slices.Contains(parents, p) {
						parents = append(parents, p)
					}
				}
			}
			d.Entries = append(d.Entries, NewEntry(o.Space, salt, i, parents))
		}
		return d
	})
}

// NewEntry returns the entry numbered n of space with the given parents:
// its Data is canonical JSON, its ID the hash of Data. salt varies ids
// between DAGs of the same shape.
func NewEntry(space string, salt uint32, n int, parents []dag.ID) dag.Entry {
	b := []byte(`{"n":`)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"parents":[`...)
	for i, p := range parents {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, p.String())
	}
	b = append(b, `],"salt":`...)
	b = strconv.AppendUint(b, uint64(salt), 10)
	b = append(b, `,"space":`...)
	b = dag.AppendString(b, space)
	b = append(b, '}')
	return dag.Entry{ID: dag.Sum(b), Space: space, Parents: slices.Clone(parents), Data: b}
}

// ParentMap returns the DAG as a ParentSource for the causal algorithms.
func (d DAG) ParentMap() dag.ParentMap {
	m := make(dag.ParentMap, len(d.Entries))
	for _, e := range d.Entries {
		m[e.ID] = e.Parents
	}
	return m
}

// IDs returns the ids of the entries in generation order.
func (d DAG) IDs() []dag.ID {
	out := make([]dag.ID, len(d.Entries))
	for i, e := range d.Entries {
		out[i] = e.ID
	}
	return out
}

// Arrivals returns a generator of arrival sequences for d's entries: every
// entry at least once, in any order, some of them repeated, as a replica
// might receive them from several peers.
func Arrivals(d DAG) *rapid.Generator[[]dag.Entry] {
	return rapid.Custom(func(t *rapid.T) []dag.Entry {
		seq := slices.Clone(d.Entries)
		dups := rapid.IntRange(0, len(d.Entries)).Draw(t, "duplicates")
		for i := 0; i < dups; i++ {
			seq = append(seq, d.Entries[rapid.IntRange(0, len(d.Entries)-1).Draw(t, "duplicate")])
		}
		return rapid.Permutation(seq).Draw(t, "order")
	})
}

// Batches returns a generator that cuts seq into consecutive non-empty
// batches of random sizes.
func Batches(seq []dag.Entry) *rapid.Generator[[][]dag.Entry] {
	return rapid.Custom(func(t *rapid.T) [][]dag.Entry {
		var out [][]dag.Entry
		for rest := seq; len(rest) > 0; {
			k := rapid.IntRange(1, len(rest)).Draw(t, "batch")
			out = append(out, rest[:k])
			rest = rest[k:]
		}
		return out
	})
}

// The naive references below work on a ParentMap by brute force, with no
// cleverness to get wrong. They are quadratic or worse: keep DAGs small.

// NaiveAncestors returns the ancestors of id (id included) by iterating to
// a fixed point.
func NaiveAncestors(pm dag.ParentMap, id dag.ID) map[dag.ID]bool {
	anc := map[dag.ID]bool{id: true}
	for changed := true; changed; {
		changed = false
		for x := range anc {
			for _, p := range pm[x] {
				if !anc[p] {
					anc[p], changed = true, true
				}
			}
		}
	}
	return anc
}

// NaiveHeads returns the entries of pm that are nobody's parent, sorted.
func NaiveHeads(pm dag.ParentMap) []dag.ID {
	isParent := map[dag.ID]bool{}
	for _, ps := range pm {
		for _, p := range ps {
			isParent[p] = true
		}
	}
	var out []dag.ID
	for id := range pm {
		if !isParent[id] {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// NaiveMergeBase returns the merge-base of a and b by the definition: the
// smallest id among the common ancestors that are not a proper ancestor of
// another common ancestor; ok is false when there is no common ancestor.
func NaiveMergeBase(pm dag.ParentMap, a, b dag.ID) (base dag.ID, ok bool) {
	ancA, ancB := NaiveAncestors(pm, a), NaiveAncestors(pm, b)
	var common []dag.ID
	for x := range ancA {
		if ancB[x] {
			common = append(common, x)
		}
	}
	var best []dag.ID
	for _, c := range common {
		nearest := true
		for _, d := range common {
			if d != c && NaiveAncestors(pm, d)[c] {
				nearest = false
				break
			}
		}
		if nearest {
			best = append(best, c)
		}
	}
	if len(best) == 0 {
		return dag.ID{}, false
	}
	return slices.MinFunc(best, dag.ID.Compare), true
}

// NaiveTopoOrder returns every entry of pm in witan's order by repeatedly
// scanning for the smallest id whose parents are all listed.
func NaiveTopoOrder(pm dag.ParentMap) []dag.ID {
	var out []dag.ID
	done := map[dag.ID]bool{}
	for len(out) < len(pm) {
		var next dag.ID
		for id, ps := range pm {
			if done[id] {
				continue
			}
			ready := true
			for _, p := range ps {
				ready = ready && done[p]
			}
			if ready && (!next.Valid() || id.Less(next)) {
				next = id
			}
		}
		if !next.Valid() {
			panic(fmt.Sprintf("dagtest: NaiveTopoOrder: %d entries never ready (missing parent or cycle)", len(pm)-len(out)))
		}
		done[next] = true
		out = append(out, next)
	}
	return out
}

// IsLinearExtension reports whether order lists every entry of pm once,
// each after all of its parents.
func IsLinearExtension(pm dag.ParentMap, order []dag.ID) bool {
	if len(order) != len(pm) {
		return false
	}
	pos := make(map[dag.ID]int, len(order))
	for i, id := range order {
		if _, dup := pos[id]; dup {
			return false
		}
		if _, ok := pm[id]; !ok {
			return false
		}
		pos[id] = i
	}
	for id, ps := range pm {
		for _, p := range ps {
			if pos[p] >= pos[id] {
				return false
			}
		}
	}
	return true
}

// GoString prints d compactly (rapid prints drawn values with %#v): one
// "index:id8 <- parent indexes" line per entry.
func (d DAG) GoString() string {
	idx := make(map[dag.ID]int, len(d.Entries))
	b := []byte("dagtest.DAG{" + strconv.Quote(d.Space))
	for i, e := range d.Entries {
		idx[e.ID] = i
		b = fmt.Appendf(b, "; %d:%s", i, e.ID.String()[7:15])
		for j, p := range e.Parents {
			if j == 0 {
				b = append(b, " <-"...)
			}
			b = fmt.Appendf(b, " %d", idx[p])
		}
	}
	return string(append(b, '}'))
}
