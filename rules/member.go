package rules

import "github.com/witan-dev/witan/dag"

// Member returns member k's standing in the poll: ok is false when k has
// no counted ballot (or is not in the electorate); void is true when k's
// ballots void each other (equivocation); otherwise choice is k's
// effective ballot's choice. It costs one electorate lookup. The opinion
// layer's ballot_choice assertion (D22) reads it; nothing binding does.
func (p *Poll) Member(k dag.Key) (choice Choice, void_ bool, ok bool) {
	idx, found := p.el.Index(k)
	if !found {
		return 0, false, false
	}
	return p.MemberAt(idx)
}

// MemberAt is Member for the electorate's member at position i (in
// Electorate().Members() order), without a lookup: an export walks the
// whole electorate with it. It answers ok false for i out of range.
func (p *Poll) MemberAt(i int) (choice Choice, void_ bool, ok bool) {
	if p.slot == nil || i < 0 || i >= len(p.slot) {
		return 0, false, false
	}
	s := p.slot[i]
	if s == 0 {
		return 0, false, false
	}
	switch v := &p.voters[s-1]; v.contrib {
	case void:
		return 0, true, true
	case effective:
		return v.choice, false, true
	}
	return 0, false, false
}

// At returns the member at position i of Members (0 <= i < Len()) without
// copying the members.
func (e *Electorate) At(i int) dag.Key { return e.members[i] }

// NameAt returns the string form of the member at position i (what
// At(i).String() returns), kept by the electorate: no allocation.
func (e *Electorate) NameAt(i int) string { return e.names[i] }
