package rules

import "github.com/witan-dev/witan/dag"

// Member returns member k's standing in the poll: ok is false when k has
// no counted ballot (or is not in the electorate); void is true when k's
// ballots void each other (equivocation); otherwise choice is k's
// effective ballot's choice. It costs one electorate lookup. The opinion
// layer's ballot_choice assertion (D22) reads it; nothing binding does.
func (p *Poll) Member(k dag.Key) (choice Choice, void_ bool, ok bool) {
	idx, found := p.el.Index(k)
	if !found || p.slot == nil {
		return 0, false, false
	}
	s := p.slot[idx]
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
