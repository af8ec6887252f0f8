package sessions

import "time"

// Event is an input to Engine.Step. The events are Speech, Request, Press,
// Tick and End; each carries the time at which the binding observed it,
// and events must be stepped in non-decreasing order of that time.
type Event interface {
	when() Time
}

// Speech files one span of a voice's speech [Start, End] (Def 6.1) and, if
// Text is not empty, parses it for an intent (Def 3.2) that applies when the
// span is filed, right after it (G6.2). Its time is Filed, or End if Filed
// is zero: a binding that diarises with a lag files spans after they end.
type Speech struct {
	// Label is the binding's label for the voice (a diarisation cluster, a
	// stream, a roster entry). It never appears in any output.
	Label      string
	Start, End Time
	// Filed is when the binding files the span; zero means End. It must not
	// be before End.
	Filed Time
	// Confidence is the binding's confidence that Label said it (Def 3.5).
	Confidence Permille
	// Text is the transcript, read only by the grammar; it is not kept.
	Text string
	// Ref is the caller's own handle for the span (to find its transcript
	// later); it is copied to the segment and its record and never read.
	Ref uint64
}

// Request carries an intent that did not come from parsed speech: a screen
// (FromUI), a standing preference (FromPreference) or an exchange with
// another device (FromExchange). A Request with FromSpeech stands for an
// intent the binding parsed itself.
type Request struct {
	At Time
	// Label names the voice the intent is about, or is empty when nobody
	// is (an intent of the room from a screen).
	Label      string
	Confidence Permille
	Intent     Intent
}

// Press is a press of the eye (Goldfish binding): the press down at At, held
// for Held.
type Press struct {
	At   Time
	Held time.Duration
}

// Tick tells the engine the time. It closes an objection window whose time
// is up and ends a session after the gap G; nothing else.
type Tick struct{ At Time }

// End ends the session at At (the binding's end: Goldfish is switched off).
type End struct{ At Time }

func (e Speech) when() Time {
	if e.Filed == 0 {
		return e.End
	}
	return e.Filed
}
func (e Request) when() Time { return e.At }
func (e Press) when() Time   { return e.At }
func (e Tick) when() Time    { return e.At }
func (e End) when() Time     { return e.At }
