package rules

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Electorate is an MR's electorate frozen at open: a set of member keys.
// Members are kept sorted by their string form ("ed25519:<base64url>"),
// the order of the spec's electorate snapshot, and every list this package
// returns follows that order. An Electorate is immutable; one value can be
// shared by every poll that froze the same membership.
type Electorate struct {
	members []dag.Key
	names   []string
	// index finds a member's position: an open-addressing table probed
	// linearly, at most half full, whose slots hold a 32-bit tag of the
	// key's hash and the position+1 (0 is empty). A lookup reads one slot
	// run and the member itself, which a Poll told the position then finds
	// in the cache; a map[dag.Key]int32 would read its control word, its
	// slot and then the member. The hash seed is random per electorate so
	// that nobody can grind keys into one probe run; nothing observable
	// depends on it (the table is never iterated, lookups are exact).
	index []uint64
	seed  maphash.Seed
}

// NewElectorate freezes members, in any order. A zero key or a key listed
// twice is an error (code schema): a frozen group has no duplicates.
func NewElectorate(members []dag.Key) (*Electorate, error) {
	if len(members) > math.MaxInt32 {
		return nil, schemaf("electorate of %d members is too large", len(members))
	}
	type m struct {
		k dag.Key
		s string
	}
	ms := make([]m, len(members))
	for i, k := range members {
		if !k.Valid() {
			return nil, schemaf("electorate: zero key at %d", i)
		}
		ms[i] = m{k, k.String()}
	}
	slices.SortFunc(ms, func(a, b m) int { return strings.Compare(a.s, b.s) })
	slots := 16
	for slots < 2*len(ms) {
		slots <<= 1
	}
	e := &Electorate{
		members: make([]dag.Key, len(ms)),
		names:   make([]string, len(ms)),
		index:   make([]uint64, slots),
		seed:    maphash.MakeSeed(),
	}
	mask := uint64(slots - 1)
	for i, x := range ms {
		if i > 0 && x.s == ms[i-1].s {
			return nil, &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("rules: electorate lists %s twice", x.s), Err: ErrSchema}
		}
		e.members[i], e.names[i] = x.k, x.s
		h := maphash.Comparable(e.seed, x.k)
		j := h & mask
		for e.index[j] != 0 {
			j = (j + 1) & mask
		}
		e.index[j] = h>>32<<32 | uint64(i+1)
	}
	return e, nil
}

// Len returns N, the number of members.
func (e *Electorate) Len() int { return len(e.members) }

// Members returns the members in order.
func (e *Electorate) Members() []dag.Key { return slices.Clone(e.members) }

// Has reports whether k is a member.
func (e *Electorate) Has(k dag.Key) bool {
	_, ok := e.Index(k)
	return ok
}

// Index returns k's position in Members, or false when k is not a member.
func (e *Electorate) Index(k dag.Key) (int, bool) {
	if len(e.index) == 0 {
		return 0, false
	}
	h := maphash.Comparable(e.seed, k)
	tag := h >> 32
	mask := uint64(len(e.index) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		s := e.index[j]
		if s == 0 {
			return 0, false
		}
		if s>>32 == tag {
			if i := int(uint32(s) - 1); e.members[i] == k {
				return i, true
			}
		}
	}
}

// Snapshot returns the electorate snapshot hash of the open points' reading
// of 30k §4: sha256 of the canonical JSON array of the sorted member ids.
func (e *Electorate) Snapshot() dag.ID {
	b := make([]byte, 0, 2+len(e.names)*56)
	b = append(b, '[')
	for i, s := range e.names {
		if i > 0 {
			b = append(b, ',')
		}
		b = dag.AppendString(b, s)
	}
	b = append(b, ']')
	return dag.Sum(b)
}
