package house

// Witnessed time (docs/deviations.md, OPEN-POINTS 7, 12 and 14): the time
// rules that an eventual node must still apply identically everywhere
// read the witnessed time at an entry, never a replica's own clock or
// checkpoints. It is the largest ts among the entries in the entry's
// causal past (itself included) that are signed by a roster member, or by
// the session's author for session.create: a non-member key cannot move
// it, and a member who post-dates an entry is accountable by signature.
// Every replica holding the same entries computes the same value.

import (
	"time"

	"github.com/witan-dev/witan/dag"
)

// witness returns the witnessed time at an entry with the given parents,
// in Unix seconds.
func (h *House) witness(env *dag.Envelope, st *govState, parents []int32) int64 {
	var w int64
	for _, p := range parents {
		w = max(w, h.ents[p].wit)
	}
	member := env.Type == dag.TxSessionCreate
	if !member && st.session != nil {
		if r := st.roster(h); r != nil {
			member = r.isMember(env.Author)
		}
	}
	if member {
		if t, err := time.Parse(time.RFC3339Nano, env.TS); err == nil {
			w = max(w, t.Unix())
		}
	}
	return w
}

// Witnessed returns the witnessed time at the admitted entry tx, and
// false for an entry this House did not admit.
func (h *House) Witnessed(tx dag.ID) (time.Time, bool) {
	i, ok := h.idx.get(tx, h.ents)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(h.ents[i].wit, 0).UTC(), true
}
