package meeting

import (
	"fmt"
	"time"

	"github.com/witan-dev/witan/sessions"
)

// Event is one input of a meeting, as a device sends it and as a line of
// a transcript for `witan meeting replay`. Times are Unix milliseconds UTC.
//
//	{"type":"speech","label":"spk-2","start":…,"end":…,"confidence":950,"text":"…"}
//	{"type":"press","at":…,"held_ms":2000}
//	{"type":"tick","at":…}
//	{"type":"end","at":…}
//
// A speech segment without a confidence is unsure (0): uncertainty falls
// toward less (Def 3.6).
type Event struct {
	Type       string `json:"type"`
	Label      string `json:"label,omitempty"`
	Start      int64  `json:"start,omitempty"`
	End        int64  `json:"end,omitempty"`
	At         int64  `json:"at,omitempty"`
	HeldMS     int64  `json:"held_ms,omitempty"`
	Confidence int    `json:"confidence,omitempty"`
	Text       string `json:"text,omitempty"`
}

// Limits of one event.
const (
	DefaultMaxText  = 4 << 10 // bytes of one transcript
	DefaultMaxLabel = 128     // bytes of one label
)

// toEngine checks e and converts it to the engine's event; ref is the
// handle of a speech segment's text.
func (e Event) toEngine(ref uint64, maxText int) (sessions.Event, error) {
	bad := func(f string, a ...any) error { return &Error{Code: CodeBadEvent, Detail: fmt.Sprintf(f, a...)} }
	switch e.Type {
	case "speech":
		if e.Label == "" {
			return nil, bad("a speech segment needs a label")
		}
		if len(e.Label) > DefaultMaxLabel {
			return nil, &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("label of %d bytes, at most %d", len(e.Label), DefaultMaxLabel)}
		}
		if len(e.Text) > maxText {
			return nil, &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("transcript of %d bytes, at most %d", len(e.Text), maxText)}
		}
		if e.Start <= 0 || e.End < e.Start {
			return nil, bad("a speech segment needs 0 < start ≤ end")
		}
		if e.Confidence < 0 || e.Confidence > int(sessions.Certain) {
			return nil, bad("confidence %d is not in 0-1000", e.Confidence)
		}
		return sessions.Speech{Label: e.Label, Start: sessions.Time(e.Start), End: sessions.Time(e.End),
			Confidence: sessions.Permille(e.Confidence), Text: e.Text, Ref: ref}, nil
	case "press":
		if e.At <= 0 || e.HeldMS < 0 || e.HeldMS > int64(time.Hour/time.Millisecond) {
			return nil, bad("a press needs at > 0 and 0 ≤ held_ms ≤ 1 h")
		}
		return sessions.Press{At: sessions.Time(e.At), Held: time.Duration(e.HeldMS) * time.Millisecond}, nil
	case "tick":
		if e.At <= 0 {
			return nil, bad("a tick needs at > 0")
		}
		return sessions.Tick{At: sessions.Time(e.At)}, nil
	case "end":
		if e.At <= 0 {
			return nil, bad("an end needs at > 0")
		}
		return sessions.End{At: sessions.Time(e.At)}, nil
	}
	return nil, bad("unknown event type %q (speech, press, tick, end)", e.Type)
}

// heard is when the event's sound began (a speech segment's start).
func (e Event) heard() int64 {
	if e.Type == "speech" {
		return e.Start
	}
	return e.At
}

// Result is one outcome of the engine as an answer shows it: what
// happened, never to whom by label or pseudonym, never when (Inv 2.4, 2.5).
type Result struct {
	Kind    string `json:"kind"`
	Seq     *int   `json:"seq,omitempty"`   // filed, restamped: the segment's order
	Level   *int   `json:"level,omitempty"` // filed, restamped: s(u)
	Held    *int   `json:"held,omitempty"`  // while a raise is pending: h(u)
	Intent  string `json:"intent,omitempty"`
	Result  string `json:"result,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Refusal string `json:"refusal,omitempty"`
}

func resultOf(o sessions.Outcome) Result {
	r := Result{Kind: o.Kind.String()}
	if u := o.Segment; u != nil {
		seq, l := u.Seq, int(u.Stamped)
		r.Seq, r.Level = &seq, &l
		if u.Held != sessions.Unset {
			h := int(u.Held)
			r.Held = &h
		}
	}
	if o.Intent != nil {
		r.Intent = o.Intent.String()
		r.Result = o.Result.String()
		if o.Reason != sessions.NoReason {
			r.Reason = o.Reason.String()
		}
	}
	if o.Kind == sessions.Refused {
		r.Refusal = o.Refusal.String()
	}
	return r
}
