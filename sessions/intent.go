package sessions

import (
	"fmt"
	"strings"
	"time"
)

// Kind is the kind of an intent (Def 3.1).
type Kind uint8

// The intent kinds of Def 3.1, in the spec's order. Claim belongs to the
// `claiming` extension, which no built profile switches on.
const (
	Lower Kind = iota + 1
	Raise
	Forget
	Shorten
	Resume
	Object
	Claim
)

var kindNames = [...]string{"", "lower", "raise", "forget", "shorten", "resume", "object", "claim"}

// Kinds lists every intent kind in the spec's order.
func Kinds() []Kind { return []Kind{Lower, Raise, Forget, Shorten, Resume, Object, Claim} }

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// protective reports whether the kind can only keep less (the kinds that
// Inv 3.3 puts first).
func (k Kind) protective() bool { return k == Object || k == Forget || k == Lower || k == Shorten }

// Scope says whose record an intent is about.
type Scope uint8

// The scopes of Def 3.1.
const (
	Self Scope = iota + 1
	Room
)

func (s Scope) String() string {
	switch s {
	case Self:
		return "self"
	case Room:
		return "room"
	}
	return fmt.Sprintf("scope(%d)", s)
}

// Source says where an intent came from (Def 3.1).
type Source uint8

// The sources of Def 3.1.
const (
	FromSpeech Source = iota + 1
	FromUI
	FromPreference
	FromExchange
)

func (s Source) String() string {
	switch s {
	case FromSpeech:
		return "speech"
	case FromUI:
		return "ui"
	case FromPreference:
		return "preference"
	case FromExchange:
		return "exchange"
	}
	return fmt.Sprintf("source(%d)", s)
}

// Intent is i = ⟨k, scope, ℓ, s, addr, src⟩ of Def 3.1.
type Intent struct {
	Kind  Kind
	Scope Scope
	// Level is ℓ, or Unset for kinds that carry none.
	Level Level
	// Span is s: the span a forget reaches back, or the limit a shorten
	// sets. Zero for kinds that carry none.
	Span time.Duration
	// All marks forget(self, all): everything the voice said this session.
	All bool
	// Addressed is addr: an invocation word was said in the utterance.
	Addressed bool
	Source    Source
	// Rule and Locale name the grammar rule that produced the intent, if
	// any.
	Rule   string
	Locale string
}

// String renders the intent compactly: "lower room 0", "forget self 5 min",
// "raise room 4 addressed".
func (i Intent) String() string {
	var b strings.Builder
	b.WriteString(i.Kind.String())
	if i.Scope != 0 {
		b.WriteString(" " + i.Scope.String())
	}
	if i.Level != Unset {
		fmt.Fprintf(&b, " %d", i.Level)
	}
	if i.All {
		b.WriteString(" all")
	} else if i.Span != 0 {
		b.WriteString(" " + FormatAge(i.Span))
	}
	if i.Addressed {
		b.WriteString(" addressed")
	}
	return b.String()
}

// Result is how an intent ended (§3): applied, provisional, reverted or
// ignored.
type Result uint8

// The results of §3.
const (
	Applied Result = iota + 1
	Provisional
	Reverted
	Ignored
)

func (r Result) String() string {
	switch r {
	case Applied:
		return "applied"
	case Provisional:
		return "provisional"
	case Reverted:
		return "reverted"
	case Ignored:
		return "ignored"
	}
	return fmt.Sprintf("result(%d)", r)
}

// Reason says why an intent was ignored (§3).
type Reason uint8

// The ignore reasons of §3, in the spec's order.
const (
	NoReason Reason = iota
	Unsupported
	UnsureSpeaker
	NoSlot
	NothingToUndo
	NotLowered
	RoomRaiseDisabled
	NotAddressed
	NotARaise
)

var reasonNames = [...]string{"", "unsupported", "unsure-speaker", "no-slot", "nothing-to-undo", "not-lowered", "room-raise-disabled", "not-addressed", "not-a-raise"}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}
