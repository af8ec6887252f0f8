package dag

// Faster ancestry and merge-bases for sources that know a linear extension
// of their DAG (a rank), such as a store's log positions: the walks can
// stop at the rank of what they look for instead of reading whole
// ancestries.

import (
	"container/heap"
	"context"
	"slices"
)

// RankedSource is a ParentSource that also ranks its entries: Rank(id) is
// larger than the rank of every proper ancestor of id. A store's log
// positions are such a rank, since a store applies entries only after their
// parents (Source returns a RankedSource). Rank returns an error wrapping
// ErrNotFound for an id the source does not hold.
//
// IsAncestor and MergeBases use the rank, when the source has one, to stop
// early; the results are the same.
type RankedSource interface {
	ParentSource
	Rank(ctx context.Context, id ID) (uint64, error)
}

// Source returns a RankedSource over the applied entries of x, for the
// causal algorithms; its rank is the log position. Each lookup first checks
// the algorithm's ctx, so cancelling it stops a long walk with its error.
func Source(x Index) RankedSource { return indexSource{x} }

type indexSource struct{ x Index }

func (s indexSource) Parents(ctx context.Context, id ID) ([]ID, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.x.Parents(ctx, id)
}

func (s indexSource) Rank(ctx context.Context, id ID) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return s.x.Position(ctx, id)
}

// isAncestorRanked walks down from b, skipping everything ranked below a:
// nothing there can reach a.
func isAncestorRanked(ctx context.Context, src RankedSource, a, b ID) (bool, error) {
	ra, err := src.Rank(ctx, a)
	if err != nil {
		return false, err
	}
	seen := map[ID]struct{}{b: {}}
	stack := []ID{b}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id == a {
			return true, nil
		}
		ps, err := src.Parents(ctx, id)
		if err != nil {
			return false, err
		}
		for _, p := range ps {
			if _, ok := seen[p]; ok {
				continue
			}
			seen[p] = struct{}{}
			r, err := src.Rank(ctx, p)
			if err != nil {
				return false, err
			}
			if r >= ra {
				stack = append(stack, p)
			}
		}
	}
	return false, nil
}

// Flags of the merge-base walk.
const (
	fromA uint8 = 1 << iota
	fromB
	stale // a proper ancestor of a common ancestor already found
)

// mergeBasesRanked paints down from a and b in decreasing rank, as git
// does with generation numbers. Because every descendant of an entry is
// popped before it, an entry carrying both colours is a common ancestor,
// and it is nearest unless a common ancestor popped earlier marked it
// stale. The walk ends when every queued entry is stale.
func mergeBasesRanked(ctx context.Context, src RankedSource, a, b ID) ([]ID, error) {
	flags := map[ID]uint8{}
	q := &rankHeap{}
	live := 0 // queued entries not stale
	push := func(id ID, f uint8) error {
		old, seen := flags[id]
		if seen && old|f == old {
			return nil
		}
		flags[id] = old | f
		if old&stale == 0 && f&stale != 0 && seen && q.has(id) {
			live-- // an entry already queued just became stale
		}
		if seen && q.has(id) {
			return nil
		}
		r, err := src.Rank(ctx, id)
		if err != nil {
			return err
		}
		heap.Push(q, rankItem{id, r})
		if (old|f)&stale == 0 {
			live++
		}
		return nil
	}
	if err := push(a, fromA); err != nil {
		return nil, err
	}
	if err := push(b, fromB); err != nil {
		return nil, err
	}
	var out []ID
	for q.Len() > 0 && live > 0 {
		it := heap.Pop(q).(rankItem)
		f := flags[it.id]
		if f&stale == 0 {
			live--
		}
		ps, err := src.Parents(ctx, it.id)
		if err != nil {
			return nil, err
		}
		paint := f
		if f&(fromA|fromB) == fromA|fromB && f&stale == 0 {
			out = append(out, it.id)
			paint |= stale
		}
		for _, p := range ps {
			if err := push(p, paint); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(out, ID.Compare)
	return out, nil
}

type rankItem struct {
	id   ID
	rank uint64
}

// rankHeap pops the highest rank first (ties by id), and knows what it
// holds.
type rankHeap struct {
	items []rankItem
	in    map[ID]struct{}
}

func (h *rankHeap) has(id ID) bool { _, ok := h.in[id]; return ok }
func (h *rankHeap) Len() int       { return len(h.items) }
func (h *rankHeap) Less(i, j int) bool {
	if h.items[i].rank != h.items[j].rank {
		return h.items[i].rank > h.items[j].rank
	}
	return h.items[i].id.Less(h.items[j].id)
}
func (h *rankHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *rankHeap) Push(x any) {
	it := x.(rankItem)
	if h.in == nil {
		h.in = map[ID]struct{}{}
	}
	h.in[it.id] = struct{}{}
	h.items = append(h.items, it)
}
func (h *rankHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.in, it.id)
	return it
}
