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
		if s, ok := unixSeconds(env.TS); ok {
			w = max(w, s)
		}
	}
	return w
}

// unixSeconds reads an envelope ts (RFC 3339 UTC, checked by dag) in whole
// seconds. The common form YYYY-MM-DDTHH:MM:SSZ is read by hand, since
// every entry pays for it; any other goes through time.Parse.
func unixSeconds(ts string) (int64, bool) {
	if len(ts) == 20 && ts[4] == '-' && ts[7] == '-' && ts[10] == 'T' && ts[13] == ':' && ts[16] == ':' && ts[19] == 'Z' {
		n := func(i, j int) (int, bool) {
			v := 0
			for k := i; k < j; k++ {
				c := ts[k]
				if c < '0' || c > '9' {
					return 0, false
				}
				v = v*10 + int(c-'0')
			}
			return v, true
		}
		y, ok1 := n(0, 4)
		mo, ok2 := n(5, 7)
		d, ok3 := n(8, 10)
		hh, ok4 := n(11, 13)
		mm, ok5 := n(14, 16)
		ss, ok6 := n(17, 19)
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && hh < 24 && mm < 60 && ss < 60 {
			return time.Date(y, time.Month(mo), d, hh, mm, ss, 0, time.UTC).Unix(), true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
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
