package sessions

import (
	"slices"
	"time"
)

// Voice is the state of one identity (§1.3), without its label.
type Voice struct {
	ID      string
	Slot    int
	Request Level         // r(x), Unset if none
	Cap     Level         // κ(x), Top if none
	Limit   time.Duration // λ(x), Forever if none
	Applied Level         // A(x) of Def 4.1
}

// Window is the open objection window of Def 5.1.
type Window struct {
	Since, Opened, Until Time
	Default, Ceiling     Level // δ⁻ and c⁻
}

// State is a snapshot of σ (§1.3) for callers and tests. It holds no label.
type State struct {
	Open      bool // a session is open; the other fields are zero if not
	Session   SessionID
	Start     Time
	Last      Time
	Default   Level         // δ
	Ceiling   Level         // c
	RoomLimit time.Duration // ρ, Forever if none
	Window    *Window
	Voices    []Voice
	OverCap   int // |O|
	Forgotten []Span
	Segments  []Segment
	// Groups are the components of the reply graph with two or more
	// members, by pseudonym; Split is §4.5's split.
	Groups [][]string
	Split  bool
	// Anyone is A(*), the level of a voice that has set nothing.
	Anyone Level
}

// Applied returns A(x) for the pseudonym id, or Unset if there is none.
func (st State) Applied(id string) Level {
	for _, v := range st.Voices {
		if v.ID == id {
			return v.Applied
		}
	}
	return Unset
}

// State returns a copy of the state of the open session.
func (e *Engine) State() State {
	s := e.s
	if s == nil {
		return State{Default: e.p.DefaultLevel, Ceiling: Top, RoomLimit: Forever, Anyone: e.p.DefaultLevel}
	}
	st := State{Open: true, Session: s.id, Start: s.start, Last: s.last, Default: s.delta,
		Ceiling: s.ceiling, RoomLimit: s.roomLimit, OverCap: s.overCap,
		Forgotten: slices.Clone(s.forgotten), Anyone: s.applied(nil)}
	if w := s.win; w != nil {
		st.Window = &Window{Since: w.since, Opened: w.opened, Until: w.opened.Add(e.p.ObjectionWindow),
			Default: w.delta, Ceiling: w.ceiling}
	}
	for _, v := range s.voices {
		st.Voices = append(st.Voices, Voice{ID: v.id, Slot: v.slot, Request: v.r, Cap: v.cap,
			Limit: v.limit, Applied: s.applied(v)})
	}
	for _, u := range s.segs {
		st.Segments = append(st.Segments, u.Segment)
	}
	if e.p.Has(ExtSideConversations) {
		comp, split := s.groups(e.p.RepliesForGroup)
		st.Split = split
		for root := range comp {
			var g []string
			for i, c := range comp {
				if c == root {
					g = append(g, s.voices[i].id)
				}
			}
			if len(g) >= 2 {
				st.Groups = append(st.Groups, g)
			}
		}
	}
	return st
}

// Segment returns segment seq of the open session (Segment.Seq, as the
// Filed and Restamped outcomes carry it) with its current levels, or false
// when no session is open or it has no such segment.
func (e *Engine) Segment(seq int) (Segment, bool) {
	if e.s == nil || seq < 0 || seq >= len(e.s.segs) {
		return Segment{}, false
	}
	return e.s.segs[seq].Segment, true
}

// Readable is X_u(t) of Def 7.4 for segment seq of the open session at now,
// using the held level while a raise is pending (Inv 5.4) and the limit
// λ*(x) = ρ ∧ λ(x) (Def 7.3). It is 0 for an unknown segment or at NoTime.
func (e *Engine) Readable(seq int, now Time) Level {
	s := e.s
	if s == nil || seq < 0 || seq >= len(s.segs) || now == NoTime {
		return Off
	}
	u := s.segs[seq]
	return e.stair.Readable(u.Stamped, u.Held, minDur(s.roomLimit, u.v.limit), now.Sub(u.End))
}

// Usable is §8.2: the segments an artefact at level l may use at now,
// {u : X_u(now) ≥ l}. Each voice's contribution is bounded by its own
// level.
func (e *Engine) Usable(l Level, now Time) []Segment {
	if e.s == nil {
		return nil
	}
	var out []Segment
	for _, u := range e.s.segs {
		if e.Readable(u.Seq, now) >= l {
			out = append(out, u.Segment)
		}
	}
	return out
}

// Log returns a copy of the session's event log E: every outcome of the
// open session, with the pseudonym of a voice that erased itself removed
// (Def 2.6). The log goes with the session (decision D4).
func (e *Engine) Log() []Outcome {
	if e.s == nil {
		return nil
	}
	out := make([]Outcome, len(e.s.log))
	for i, o := range e.s.log {
		out[i] = cloneOutcome(o)
	}
	return out
}
