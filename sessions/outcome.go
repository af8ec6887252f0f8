package sessions

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SessionID is the 64-bit random session ID of Inv 2.5. The zero value is
// not a session.
type SessionID uint64

// String renders the ID as 16 hex digits.
func (id SessionID) String() string { return fmt.Sprintf("%016x", uint64(id)) }

// ParseSessionID reads the 16 hex digits String writes.
func ParseSessionID(s string) (SessionID, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("sessions: session ID %q: want 16 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("sessions: session ID %q: want 16 hex digits, not all zero", s)
	}
	return SessionID(v), nil
}

// OutcomeKind says what an Outcome reports.
type OutcomeKind uint8

// The outcomes the engine reports.
const (
	SessionStarted  OutcomeKind = iota + 1 // a session began (Def 2.1)
	SessionEnded                           // a session ended (§8.1); Closure is set
	Filed                                  // a span was filed and stamped (Def 6.1)
	Refused                                // a span was not filed; Refusal says why
	Restamped                              // a segment's stamped or held level fell
	Decided                                // an intent ended; Result and Reason say how
	WindowOpened                           // a provisional raise began (§5)
	WindowRestarted                        // a second raise restarted the clock (Inv 5.6)
	WindowConfirmed                        // the window closed without objection
	WindowUndone                           // the raise was undone (Inv 5.3)
	StillOff                               // the eye was pressed while the room was off
	BatteryShown                           // the eye was held
)

var outcomeNames = [...]string{"", "session-started", "session-ended", "filed", "refused", "restamped",
	"decided", "window-opened", "window-restarted", "window-confirmed", "window-undone", "still-off", "battery"}

func (k OutcomeKind) String() string {
	if int(k) < len(outcomeNames) && k != 0 {
		return outcomeNames[k]
	}
	return fmt.Sprintf("outcome(%d)", k)
}

// Refusal says why a span was not filed (Def 6.1).
type Refusal uint8

// The refusals of Def 6.1.
const (
	OverCap     Refusal = iota + 1 // the voice is over capacity (Def 2.3)
	BeforeStart                    // the span starts before this session (or the last one's end)
)

func (r Refusal) String() string {
	switch r {
	case OverCap:
		return "over-cap"
	case BeforeStart:
		return "before-start"
	}
	return fmt.Sprintf("refusal(%d)", r)
}

// Segment is u = ⟨voice, t₀, t₁, s, h⟩ of §1.3: one voice's span of speech
// and its levels.
type Segment struct {
	Seq     int    // order of filing within the session, from 0
	Ref     uint64 // the caller's handle, from Speech.Ref
	Voice   string // the pseudonym, "v1"…
	Start   Time
	End     Time
	Stamped Level // s
	Held    Level // h, or Unset when no raise is pending over the segment
}

// Outcome is one thing the engine reports. Which fields are set depends on
// Kind. No field ever carries a label.
type Outcome struct {
	Kind    OutcomeKind
	At      Time
	Session SessionID
	Voice   string   // the pseudonym concerned, if any
	Intent  *Intent  // Decided
	Result  Result   // Decided
	Reason  Reason   // Decided, when Result is Ignored
	Segment *Segment // Filed, Restamped
	Refusal Refusal  // Refused
	Ref     uint64   // Refused: the caller's handle of the span
	Until   Time     // WindowOpened, WindowRestarted: the end of the window
	Closure *Closure // SessionEnded
}

// String renders the outcome as one line of a transcript.
func (o Outcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", o.At.Seconds(), o.Kind)
	if o.Voice != "" {
		b.WriteString(" " + o.Voice)
	}
	switch o.Kind {
	case SessionStarted:
		b.WriteString(" " + o.Session.String())
	case SessionEnded:
		if o.Closure != nil {
			fmt.Fprintf(&b, " voices=%d records=%d", o.Closure.Voices, len(o.Closure.Records))
		}
	case Filed, Restamped:
		u := o.Segment
		fmt.Fprintf(&b, " u%d [%s,%s] s=%d", u.Seq, u.Start.Seconds(), u.End.Seconds(), u.Stamped)
		if u.Held != Unset {
			fmt.Fprintf(&b, " h=%d", u.Held)
		}
	case Refused:
		b.WriteString(" " + o.Refusal.String())
	case Decided:
		fmt.Fprintf(&b, " %s %s", o.Intent, o.Result)
		if o.Reason != NoReason {
			b.WriteString(" " + o.Reason.String())
		}
	case WindowOpened, WindowRestarted:
		fmt.Fprintf(&b, " until %s", o.Until.Seconds())
	}
	return b.String()
}

// Record is a segment as it leaves its session (§8.1): its stamped level is
// final, and Limit is λ*(x) = ρ ∧ λ(x) frozen at the end (Forever if none).
type Record struct {
	Session SessionID
	Seq     int
	Ref     uint64
	Voice   string
	Start   Time
	End     Time
	Stamped Level
	Limit   time.Duration
}

// Readable is X_u(t) of Def 7.4 for the record at now. If the caller cannot
// vouch for the time (now == NoTime) it reads 0 (decision D1).
func (r Record) Readable(s Retention, now Time) Level {
	if now == NoTime {
		return Off
	}
	return s.Readable(r.Stamped, Unset, r.Limit, now.Sub(r.End))
}

// Expired reports whether nothing of the record may be kept at now, not
// even that a gap occurred: its limit or the last step of the schedule has
// passed (decision D5). A caller prunes expired records.
func (r Record) Expired(s Retention, now Time) bool {
	if now == NoTime {
		return true
	}
	return now.Sub(r.End) >= minDur(s.Longest(), r.Limit)
}

// Closure is what a session leaves when it ends (§8.1): its records with
// their final levels and limits, and a count of voices. Identities, levels,
// limits, forget spans and the reply graph are gone.
type Closure struct {
	Session SessionID
	Profile string
	Start   Time
	End     Time
	// Voices is the number of identities the session assigned; OverCap
	// the number of labels heard over capacity.
	Voices    int
	OverCap   int
	RoomLimit time.Duration // ρ at the end, Forever if none
	Records   []Record
}
