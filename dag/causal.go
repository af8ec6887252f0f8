package dag

// This file holds the causal algorithms: ancestry, merge-bases, the
// deterministic topological order and missing parents. They are generic
// over any DAG that can name an id's parents (a ParentSource): a space's
// entries in a Store, or the Change DAG of a statute branch.
//
// Every algorithm is iterative (explicit stacks and queues, never recursion),
// so a chain of a million entries does not grow the Go stack. Walks visit
// each id once; their cost is proportional to the part of the DAG they
// visit, and their memory to the same.

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
)

// ParentSource names the parents of the entries of one DAG.
//
// Parents returns the parents of id in the order the entry lists them. For
// an id the source does not hold it returns an error wrapping ErrNotFound;
// any other error stops the algorithm that asked and is returned to its
// caller unchanged. A source must describe an acyclic graph whose parents
// never change, which content addressing guarantees.
type ParentSource interface {
	Parents(ctx context.Context, id ID) ([]ID, error)
}

// ParentsFunc adapts a function to a ParentSource.
type ParentsFunc func(ctx context.Context, id ID) ([]ID, error)

// Parents calls f(id).
func (f ParentsFunc) Parents(ctx context.Context, id ID) ([]ID, error) { return f(ctx, id) }

// ParentMap is an in-memory ParentSource: each key's value is its parents.
// An id that is not a key is not found.
type ParentMap map[ID][]ID

// Parents returns m[id], or an error wrapping ErrNotFound.
func (m ParentMap) Parents(_ context.Context, id ID) ([]ID, error) {
	p, ok := m[id]
	if !ok {
		return nil, fmt.Errorf("dag: parents of %s: %w", id, ErrNotFound)
	}
	return p, nil
}

// ErrNoCommonAncestor is wrapped (inside a *ProtocolError with code
// no_common_ancestor) by MergeBase when two entries share no ancestor.
var ErrNoCommonAncestor = errors.New("dag: no common ancestor")

// ErrCycle is returned by TopoOrder when a ParentSource describes a cycle,
// which content-addressed parents cannot, but a hand-written source might.
var ErrCycle = errors.New("dag: parents form a cycle")

// Ancestry in this package is reflexive: a is an ancestor of b when a == b
// or a is reached from b by following parents one or more times. This is
// git's convention; it makes the merge-base of an entry and its descendant
// the entry itself.

// walk visits every id reachable from starts by following parents
// (starts included), each once, depth first with an explicit stack. visit
// may return stop=true to end the walk early. An id the source does not hold
// is reported to missing (when non-nil) and not descended into; with a nil
// missing it is an error.
func walk(ctx context.Context, src ParentSource, starts []ID, seen map[ID]struct{}, missing func(ID), visit func(id ID, parents []ID) (stop bool)) error {
	stack := make([]ID, 0, len(starts))
	for i := len(starts) - 1; i >= 0; i-- {
		stack = append(stack, starts[i])
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := seen[id]; ok {
			continue
		}
		seen[id] = struct{}{}
		ps, err := src.Parents(ctx, id)
		if err != nil {
			if missing != nil && errors.Is(err, ErrNotFound) {
				missing(id)
				continue
			}
			return err
		}
		if visit != nil && visit(id, ps) {
			return nil
		}
		for i := len(ps) - 1; i >= 0; i-- {
			if _, ok := seen[ps[i]]; !ok {
				stack = append(stack, ps[i])
			}
		}
	}
	return nil
}

// ancestorSet returns every ancestor of ids (ids included).
func ancestorSet(ctx context.Context, src ParentSource, ids []ID) (map[ID]struct{}, error) {
	seen := make(map[ID]struct{})
	if err := walk(ctx, src, ids, seen, nil, nil); err != nil {
		return nil, err
	}
	return seen, nil
}

// Ancestors returns every ancestor of ids, ids included, sorted by id. Every
// id reached must be in src (else an error wrapping ErrNotFound).
func Ancestors(ctx context.Context, src ParentSource, ids []ID) ([]ID, error) {
	set, err := ancestorSet(ctx, src, ids)
	if err != nil {
		return nil, err
	}
	return sortedKeys(set), nil
}

// IsAncestor reports whether a is an ancestor of b: a == b, or a is reached
// from b by following parents. It stops as soon as it meets a. b and
// everything the walk reaches must be in src.
func IsAncestor(ctx context.Context, src ParentSource, a, b ID) (bool, error) {
	if a == b {
		if _, err := src.Parents(ctx, b); err != nil {
			return false, err
		}
		return true, nil
	}
	if r, ok := src.(RankedSource); ok {
		return isAncestorRanked(ctx, r, a, b)
	}
	found := false
	err := walk(ctx, src, []ID{b}, make(map[ID]struct{}), nil, func(id ID, _ []ID) bool {
		found = id == a
		return found
	})
	return found, err
}

// CommonAncestors returns every common ancestor of a and b (each
// reflexive), sorted by id; it is empty when they share none.
func CommonAncestors(ctx context.Context, src ParentSource, a, b ID) ([]ID, error) {
	common, err := commonSet(ctx, src, a, b)
	if err != nil {
		return nil, err
	}
	return sortedKeys(common), nil
}

func commonSet(ctx context.Context, src ParentSource, a, b ID) (map[ID]struct{}, error) {
	ofA, err := ancestorSet(ctx, src, []ID{a})
	if err != nil {
		return nil, err
	}
	common := make(map[ID]struct{})
	// Walk b's ancestors but do not descend below a common one: everything
	// below it is common too and is added by the closing walk.
	seen := make(map[ID]struct{})
	stack := []ID{b}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := seen[id]; ok {
			continue
		}
		seen[id] = struct{}{}
		if _, ok := ofA[id]; ok {
			common[id] = struct{}{}
			continue
		}
		ps, err := src.Parents(ctx, id)
		if err != nil {
			return nil, err
		}
		stack = append(stack, ps...)
	}
	// The common set is closed under ancestry: add the ancestors of the
	// common entries met, which a's walk already proved present.
	var starts []ID
	for _, r := range sortedKeys(common) {
		ps, err := src.Parents(ctx, r)
		if err != nil {
			return nil, err
		}
		starts = append(starts, ps...)
	}
	if err := walk(ctx, src, starts, common, nil, nil); err != nil {
		return nil, err
	}
	return common, nil
}

// MergeBases returns the merge-bases of a and b, sorted by id: the nearest
// common ancestors. A common ancestor c is nearest when no other common
// ancestor has c as a proper ancestor, that is, when c is a maximal element
// of the common-ancestor set (git's "best common ancestors"). The result is
// empty when a and b share no ancestor. If a is an ancestor of b, the only
// merge-base is a.
//
// Nearness is a property of the DAG alone: it does not count path lengths
// or depend on the order entries arrived in.
func MergeBases(ctx context.Context, src ParentSource, a, b ID) ([]ID, error) {
	if r, ok := src.(RankedSource); ok {
		return mergeBasesRanked(ctx, r, a, b)
	}
	common, err := commonSet(ctx, src, a, b)
	if err != nil {
		return nil, err
	}
	// Every proper ancestor of a common entry is a parent of some common
	// entry (the common set is closed under ancestry), so the maximal
	// elements are the common entries that are nobody's parent in it.
	below := make(map[ID]struct{}, len(common))
	for c := range common {
		ps, err := src.Parents(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			below[p] = struct{}{}
		}
	}
	out := make([]ID, 0, 1)
	for c := range common {
		if _, ok := below[c]; !ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, ID.Compare)
	return out, nil
}

// MergeBase returns the merge-base of a and b: of their nearest common
// ancestors (see MergeBases), the one with the smallest id. When they share
// no ancestor it returns a *ProtocolError with code no_common_ancestor
// wrapping ErrNoCommonAncestor.
func MergeBase(ctx context.Context, src ParentSource, a, b ID) (ID, error) {
	bases, err := MergeBases(ctx, src, a, b)
	if err != nil {
		return ID{}, err
	}
	if len(bases) == 0 {
		return ID{}, &ProtocolError{Code: CodeNoCommonAncestor, Detail: fmt.Sprintf("%s and %s share no ancestor", a, b), Err: ErrNoCommonAncestor}
	}
	return bases[0], nil
}

// Frontier returns the maximal elements of ids: those that are not a proper
// ancestor of another id in the list, sorted by id and without duplicates.
// Given the heads of two replicas it returns the heads of their union.
func Frontier(ctx context.Context, src ParentSource, ids []ID) ([]ID, error) {
	want := make(map[ID]struct{}, len(ids))
	for _, id := range ids {
		want[id] = struct{}{}
	}
	// Mark everything strictly below some id: start from their parents.
	var starts []ID
	for _, id := range sortedKeys(want) {
		ps, err := src.Parents(ctx, id)
		if err != nil {
			return nil, err
		}
		starts = append(starts, ps...)
	}
	below := make(map[ID]struct{})
	if err := walk(ctx, src, starts, below, nil, nil); err != nil {
		return nil, err
	}
	out := make([]ID, 0, len(want))
	for id := range want {
		if _, ok := below[id]; !ok {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, ID.Compare)
	return out, nil
}

// MissingParents returns, sorted by id, every id that the ancestors of ids
// refer to but src does not hold (a start id src does not hold counts too).
// It never fails for missing ids; it fails only on other errors from src.
func MissingParents(ctx context.Context, src ParentSource, ids []ID) ([]ID, error) {
	var missing []ID
	err := walk(ctx, src, ids, make(map[ID]struct{}), func(id ID) { missing = append(missing, id) }, nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(missing, ID.Compare)
	return missing, nil
}

// TopoOrder returns every ancestor of heads (heads included) in witan's
// deterministic topological order: parents always before children, and
// among the entries whose parents have all been listed, the smallest id
// first (Kahn's algorithm with a min-heap on ID.Compare).
//
// The order is a function of the DAG alone, never of arrival order or of
// the order of heads, so every replica holding the same entries folds them
// in the same order. Every ancestor must be in src.
func TopoOrder(ctx context.Context, src ParentSource, heads []ID) ([]ID, error) {
	parents := make(map[ID][]ID)
	err := walk(ctx, src, heads, make(map[ID]struct{}), nil, func(id ID, ps []ID) bool {
		parents[id] = uniq(ps)
		return false
	})
	if err != nil {
		return nil, err
	}
	return topo(parents)
}

// topo orders a closed parents map (every parent is a key).
func topo(parents map[ID][]ID) ([]ID, error) {
	waiting := make(map[ID]int, len(parents)) // parents not yet listed
	children := make(map[ID][]ID, len(parents))
	ready := &idHeap{}
	for id, ps := range parents {
		if len(ps) == 0 {
			*ready = append(*ready, id)
			continue
		}
		waiting[id] = len(ps)
		for _, p := range ps {
			children[p] = append(children[p], id)
		}
	}
	heap.Init(ready)
	out := make([]ID, 0, len(parents))
	for ready.Len() > 0 {
		id := heap.Pop(ready).(ID)
		out = append(out, id)
		for _, c := range children[id] {
			waiting[c]--
			if waiting[c] == 0 {
				delete(waiting, c)
				heap.Push(ready, c)
			}
		}
		delete(children, id)
	}
	if len(out) != len(parents) {
		return nil, fmt.Errorf("%w (%d entries never became ready)", ErrCycle, len(parents)-len(out))
	}
	return out, nil
}

// uniq returns ps without repeated ids, reusing ps when it has none.
func uniq(ps []ID) []ID {
	dup := false
	if len(ps) <= 16 {
		for i := 1; i < len(ps) && !dup; i++ {
			for j := 0; j < i; j++ {
				if ps[i] == ps[j] {
					dup = true
					break
				}
			}
		}
	} else {
		seen := make(map[ID]struct{}, len(ps))
		for _, p := range ps {
			if _, ok := seen[p]; ok {
				dup = true
				break
			}
			seen[p] = struct{}{}
		}
	}
	if !dup {
		return ps
	}
	out := make([]ID, 0, len(ps))
	seen := make(map[ID]struct{}, len(ps))
	for _, p := range ps {
		if _, ok := seen[p]; !ok {
			seen[p] = struct{}{}
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys(m map[ID]struct{}) []ID {
	out := make([]ID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.SortFunc(out, ID.Compare)
	return out
}

// idHeap is a min-heap of IDs for container/heap.
type idHeap []ID

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i].Compare(h[j]) < 0 }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(ID)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
