package memoryblock

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// Source is what ancestry walks read: the blocks a receiver holds, by hash.
//
// The walks trust the keys: the block under id is taken to be the block
// named id. An honest store keys every block by BlockHash; a store whose
// keys disagree with its blocks can form a cycle, which the walks report
// (BLOCK_CYCLE) and survive.
type Source interface {
	// Block returns the block held under id, and false when there is none.
	Block(id dag.ID) (Block, bool)
}

// SourceFunc is a function used as a Source, built per call like
// KnownFunc.
type SourceFunc func(id dag.ID) (Block, bool)

// Block implements Source.
func (f SourceFunc) Block(id dag.ID) (Block, bool) { return f(id) }

// Map is an in-memory Source (and Known), keyed by block hash.
type Map map[dag.ID]Block

// MapOf returns a Map holding blocks, each under its BlockHash.
func MapOf(blocks ...Block) Map {
	m := make(Map, len(blocks))
	for _, b := range blocks {
		m.Add(b)
	}
	return m
}

// Add stores b under its BlockHash and returns that hash.
func (m Map) Add(b Block) dag.ID {
	id := BlockHash(b)
	m[id] = b
	return id
}

// Block implements Source.
func (m Map) Block(id dag.ID) (Block, bool) { b, ok := m[id]; return b, ok }

// Has implements Known.
func (m Map) Has(id dag.ID) bool { _, ok := m[id]; return ok }

// Overlay returns a Source that holds blocks (each under its BlockHash) on
// top of under: how a receiver asks about a block it has just been offered
// and not yet stored. under may be nil.
func Overlay(under Source, blocks ...Block) Source {
	return overlay{top: MapOf(blocks...), under: under}
}

type overlay struct {
	top   Map
	under Source
}

func (o overlay) Block(id dag.ID) (Block, bool) {
	if b, ok := o.top[id]; ok {
		return b, true
	}
	if o.under == nil {
		return Block{}, false
	}
	return o.under.Block(id)
}

// History is Ancestry's answer. It has no ok and no code: a history with
// gaps is still a history, and knowing how much of it is absent is more
// useful than knowing that some of it is.
type History struct {
	// Chain lists the held blocks reached from the start by following
	// lineage, the start first, breadth-first, parents in lineage order,
	// each block once.
	Chain []dag.ID `json:"chain"`
	// Missing lists every id reached (the start included) that the source
	// does not hold, in the order first met, each once. Nothing beyond a
	// missing block is known, so nothing beyond it is listed.
	Missing []dag.ID `json:"missing"`
	// Cycle is true when following lineage led back to a block the walk
	// was still descending from. CycleAt is the block where it closed.
	Cycle   bool   `json:"cycle"`
	CycleAt dag.ID `json:"cycle_at,omitzero"`
	// Depth is the greatest number of lineage steps from the start to a
	// block in Chain, counting each block by its nearest path: 0 for a
	// root, n-1 for a chain of n blocks.
	Depth int `json:"depth"`
}

// Err returns an *Error with code BLOCK_CYCLE when h found a cycle, else
// nil. It is for a caller that must refuse what such a store says; the walk
// itself has already terminated.
func (h History) Err() error {
	if !h.Cycle {
		return nil
	}
	return &Error{Code: CodeBlockCycle, Field: Lineage, Detail: fmt.Sprintf("lineage returns to %s: the store's keys disagree with its blocks", h.CycleAt)}
}

// Ancestry walks the lineage of the block named start through src
// (ancestry). It never fails and never recurses: it works the same on a
// chain of any depth, on a store with holes and on a corrupted store that
// holds a cycle.
func Ancestry(start dag.ID, src Source) History {
	w := walk(start, src, dag.ID{})
	h := History{Chain: w.chain, Missing: w.missing, Depth: w.depth}
	if h.Chain == nil {
		h.Chain = []dag.ID{}
	}
	if h.Missing == nil {
		h.Missing = []dag.ID{}
	}
	if at, ok := w.findCycle(); ok {
		h.Cycle, h.CycleAt = true, w.chain[at]
	}
	return h
}

// Descent is IsDescendantOf's answer. It is more than a boolean on
// purpose: a claim that descends from something this receiver already
// holds is an echo, not corroboration, and the chain shows which.
type Descent struct {
	// Descendant is true when the ancestor is reachable from the start by
	// one or more lineage steps. A block is not its own descendant.
	Descendant bool `json:"descendant"`
	// Chain is a shortest lineage path from the start to the ancestor, both
	// included, when Descendant; else empty.
	Chain []dag.ID `json:"chain"`
	// Missing lists the ids the walk met and the source does not hold, in
	// the order met. When Descendant is false and Missing is not empty, the
	// answer is "not as far as this receiver can tell".
	Missing []dag.ID `json:"missing"`
	// Checked counts the held blocks whose lineage was read.
	Checked int `json:"checked"`
}

// IsDescendantOf reports whether the block named start descends from the
// block named ancestor through src (isDescendantOf). The ancestor need not
// be held: a lineage that names its hash is enough, since the hash commits
// to it. Like Ancestry it never fails, never recurses and terminates on a
// corrupted store.
func IsDescendantOf(start, ancestor dag.ID, src Source) Descent {
	w := walk(start, src, ancestor)
	d := Descent{Descendant: w.found >= 0, Chain: []dag.ID{}, Missing: w.missing, Checked: w.checked}
	if d.Missing == nil {
		d.Missing = []dag.ID{}
	}
	if d.Descendant {
		n := 1 // the ancestor
		for i := w.found; i >= 0; i = int(w.prev[i]) {
			n++
		}
		d.Chain = make([]dag.ID, n)
		d.Chain[n-1] = ancestor
		for i, k := w.found, n-2; i >= 0; i, k = int(w.prev[i]), k-1 {
			d.Chain[k] = w.chain[i]
		}
	}
	return d
}

// walked is the result of one breadth-first walk: the held blocks reached,
// as a graph in compressed form (the edges of chain[i] are
// edges[off[i]:off[i+1]], indices into chain).
type walked struct {
	chain   []dag.ID
	missing []dag.ID
	prev    []int32 // breadth-first predecessor of chain[i]; -1 for the start
	off     []int32
	edges   []int32
	depth   int
	checked int
	found   int // index in chain of the block whose lineage names the target, or -1
}

// walk does the breadth-first walk from start. When target is valid it
// stops as soon as some held block's lineage names it.
func walk(start dag.ID, src Source, target dag.ID) walked {
	w := walked{found: -1}
	b, ok := src.Block(start)
	if !ok {
		w.missing = append(w.missing, start)
		return w
	}
	index := map[dag.ID]int32{start: 0}
	seenMissing := map[dag.ID]struct{}{}
	w.chain = append(w.chain, start)
	w.prev = append(w.prev, -1)
	lineages := []string{b.Lineage.digests} // parents' digests, read once
	depths := []int32{0}
	if target.Valid() && target == start {
		return w // not its own descendant
	}
	for i := 0; i < len(w.chain); i++ {
		w.off = push(w.off, int32(len(w.edges)))
		w.checked++
		lin := Parents{presence: Present, digests: lineages[i]}
		lineages[i] = "" // let the memory go
		for k := 0; k < lin.Len(); k++ {
			p := lin.At(k)
			if target.Valid() && p == target {
				w.found = i
				w.off = append(w.off, int32(len(w.edges)))
				return w
			}
			if j, ok := index[p]; ok {
				w.edges = push(w.edges, j)
				continue
			}
			if _, ok := seenMissing[p]; ok {
				continue
			}
			pb, ok := src.Block(p)
			if !ok {
				seenMissing[p] = struct{}{}
				w.missing = push(w.missing, p)
				continue
			}
			j := int32(len(w.chain))
			index[p] = j
			w.chain = push(w.chain, p)
			w.prev = push(w.prev, int32(i))
			lineages = push(lineages, pb.Lineage.digests)
			depths = push(depths, depths[i]+1)
			if int(depths[j]) > w.depth {
				w.depth = int(depths[j])
			}
			w.edges = push(w.edges, j)
		}
	}
	w.off = append(w.off, int32(len(w.edges)))
	return w
}

// findCycle looks for a cycle among the walked blocks with an iterative
// depth-first search from the start, and returns the index of the block
// where the first one closes.
func (w *walked) findCycle() (int, bool) {
	if len(w.chain) == 0 {
		return 0, false
	}
	const (
		white = iota
		grey
		black
	)
	colour := make([]uint8, len(w.chain))
	type frame struct{ node, next int32 }
	stack := []frame{{0, w.off[0]}}
	colour[0] = grey
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == w.off[top.node+1] {
			colour[top.node] = black
			stack = stack[:len(stack)-1]
			continue
		}
		to := w.edges[top.next]
		top.next++
		switch colour[to] {
		case grey:
			return int(to), true
		case white:
			colour[to] = grey
			stack = push(stack, frame{to, w.off[to]})
		}
	}
	return 0, false
}

// push appends v to s, doubling the capacity when s is full. append grows
// large slices by a quarter at a time, which on a 100,000-block walk
// allocates several times the final size; doubling keeps the total under
// twice.
func push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		n := make([]T, len(s), max(2*cap(s), 8))
		copy(n, s)
		s = n
	}
	return append(s, v)
}
