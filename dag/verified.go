package dag

import "sync"

// VerifiedSet remembers, for a while, entries whose signatures were found
// valid, by id, so that a check done ahead of time (a requester verifying
// the next batch while the one before is written) is not done again when
// the entry is ingested. It is safe for concurrent use and bounded: when
// it is full it starts afresh, and an entry it forgot is verified again,
// so it changes how much work is done, never a verdict.
//
// Only what a verifier found valid goes in (Add after BatchVerifier or
// Verify said so, for the id DecodeSigned computed from the same bytes).
// An id names the canonical bytes, signature included, so an entry whose
// id is in the set has a valid signature by the author it names whoever
// sends it again; whether that author may sign is judged elsewhere.
type VerifiedSet struct {
	mu  sync.Mutex
	m   map[ID]struct{}
	max int
}

// DefaultVerifiedSetSize holds a requester's read-ahead several times over
// (a few frames of some thousand entries each) at 48 bytes or so an id.
const DefaultVerifiedSetSize = 1 << 16

// NewVerifiedSet returns a set of at most max ids (DefaultVerifiedSetSize
// if max <= 0).
func NewVerifiedSet(max int) *VerifiedSet {
	if max <= 0 {
		max = DefaultVerifiedSetSize
	}
	return &VerifiedSet{m: make(map[ID]struct{}), max: max}
}

// Add records ids as verified. A nil set records nothing.
func (s *VerifiedSet) Add(ids ...ID) {
	if s == nil || len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if len(s.m) >= s.max {
			clear(s.m)
		}
		s.m[id] = struct{}{}
	}
}

// Take reports whether id was recorded as verified, and forgets it: an
// entry is ingested once. A nil set holds nothing.
func (s *VerifiedSet) Take(id ID) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; ok {
		delete(s.m, id)
		return true
	}
	return false
}

// Len returns how many ids the set holds.
func (s *VerifiedSet) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
