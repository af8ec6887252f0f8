package heads

import (
	"crypto/sha256"
	"slices"

	"github.com/witan-dev/witan/dag"
)

// Frontier is the exact frontier of one space's DAG: its heads, the
// entries that no known entry lists as a parent. Entries may be added in
// any order, with repeats, and with parents not (yet) known; Heads is
// always the set of maximal elements of the entries added so far, never a
// stale head. A Frontier remembers every id it has seen (entries and the
// parents they list), so its memory grows with the space.
//
// A Frontier is not safe for concurrent use. The zero value is not ready;
// use New.
type Frontier struct {
	known  map[dag.ID]struct{} // entries added
	listed map[dag.ID]struct{} // ids some added entry lists as a parent
	heads  map[dag.ID]struct{}
}

// New returns an empty frontier.
func New() *Frontier {
	return &Frontier{known: map[dag.ID]struct{}{}, listed: map[dag.ID]struct{}{}, heads: map[dag.ID]struct{}{}}
}

// FromHeads returns the frontier of a DAG whose heads are given, as read
// from a store that keeps them (dag.Index.Heads). Later Adds must then be
// of entries the store did not hold, in causal order or not.
func FromHeads(heads []dag.ID) *Frontier {
	f := New()
	for _, h := range heads {
		f.known[h] = struct{}{}
		f.heads[h] = struct{}{}
	}
	return f
}

// Add records the entry id with its parents and reports whether the head
// set changed. Adding an entry again changes nothing.
func (f *Frontier) Add(id dag.ID, parents []dag.ID) bool {
	if _, ok := f.known[id]; ok {
		return false
	}
	f.known[id] = struct{}{}
	changed := false
	for _, p := range parents {
		f.listed[p] = struct{}{}
		if _, ok := f.heads[p]; ok {
			delete(f.heads, p)
			changed = true
		}
	}
	if _, ok := f.listed[id]; !ok {
		f.heads[id] = struct{}{}
		changed = true
	}
	return changed
}

// Heads returns the heads, sorted by id.
func (f *Frontier) Heads() []dag.ID {
	out := make([]dag.ID, 0, len(f.heads))
	for h := range f.heads {
		out = append(out, h)
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}

// IsHead reports whether id is a head.
func (f *Frontier) IsHead(id dag.ID) bool {
	_, ok := f.heads[id]
	return ok
}

// Len returns the number of heads.
func (f *Frontier) Len() int { return len(f.heads) }

// Digest returns the digest of the current heads (see Digest).
func (f *Frontier) Digest() dag.ID { return Digest(f.Heads()) }

// DigestDomain starts the bytes hashed by Digest.
const DigestDomain = "witan/heads/v1\n"

// Digest returns a digest of a head set: the SHA-256 of DigestDomain
// followed by the 32-byte SHA-256 digests of the distinct heads in
// ascending order (the order of dag.ID.Compare), with no separators. The
// order and repeats of heads do not matter. Two replicas whose digests
// agree hold the same heads (barring a SHA-256 collision), so sync can skip
// the reconciliation; the empty set has a digest too.
func Digest(heads []dag.ID) dag.ID {
	hs := slices.Clone(heads)
	slices.SortFunc(hs, dag.ID.Compare)
	hs = slices.Compact(hs)
	h := sha256.New()
	h.Write([]byte(DigestDomain))
	for _, id := range hs {
		d := id.Digest()
		h.Write(d[:])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return dag.IDFromDigest(sum)
}
