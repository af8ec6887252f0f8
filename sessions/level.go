package sessions

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Level is a level of the Resolution Protocol (§1.1): how much of what was
// said may be kept. Each level keeps everything below it.
//
//	0 off         only that a gap occurred, and its length
//	1 outcomes    decisions and commitments (a commitment names its owner)
//	2 gist        a summary of the reasoning, unattributed
//	3 attributed  who said what, paraphrased
//	4 verbatim    the exact words
//	5 audio       the recording itself
//
// Unset (⊥) means "not set"; it is never a level a record is stamped at.
type Level int8

// The levels of §1.1, and ⊥.
const (
	Unset      Level = -1
	Off        Level = 0
	Outcomes   Level = 1
	Gist       Level = 2
	Attributed Level = 3
	Verbatim   Level = 4
	Audio      Level = 5
	Top              = Audio // ⊤
)

var levelNames = [...]string{"off", "outcomes", "gist", "attributed", "verbatim", "audio"}

// Valid reports whether l is one of the six levels (⊥ is not).
func (l Level) Valid() bool { return l >= Off && l <= Top }

// String returns the SPEC id of the level ("gist"), "unset" for ⊥, and
// "level(N)" for anything else.
func (l Level) String() string {
	switch {
	case l == Unset:
		return "unset"
	case l.Valid():
		return levelNames[l]
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

// Meet is x ∧ y, the lower of two levels. ⊥ is the identity: it is treated as
// "no constraint".
func Meet(x, y Level) Level {
	switch {
	case x == Unset:
		return y
	case y == Unset:
		return x
	case x < y:
		return x
	}
	return y
}

// Join is x ∨ y, the higher of two levels; ⊥ is the identity.
func Join(x, y Level) Level {
	if x > y {
		return x
	}
	return y
}

// or returns l, or d when l is ⊥: the spec's "(r(x) or δ)".
func or(l, d Level) Level {
	if l == Unset {
		return d
	}
	return l
}

// Time is an instant, in integer milliseconds since an epoch the caller fixes
// (Unix milliseconds in UTC if dates are wanted: the note prints dates from
// it). The engine never reads a clock; every instant it knows came in on an
// event.
type Time int64

// NoTime stands for "the caller cannot vouch for the time". Reading a record
// at NoTime fails closed: it reads as level 0 (decision D1).
const NoTime Time = math.MinInt64

// At returns the Time of a wall-clock instant, truncated to the millisecond.
func At(t time.Time) Time { return Time(t.UnixMilli()) }

// Add returns t + d, truncating d to the millisecond.
func (t Time) Add(d time.Duration) Time { return t + Time(d/time.Millisecond) }

// Sub returns the duration t − u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t-u) * time.Millisecond }

// UTC returns t as a wall-clock instant in UTC, reading t as Unix
// milliseconds.
func (t Time) UTC() time.Time { return time.UnixMilli(int64(t)).UTC() }

// String renders t in readable units with millisecond precision: seconds
// below a minute ("7.500s"), then minutes ("2m05.300s"), hours
// ("1h02m05.300s") and days ("3d00h00m00.000s"), each smaller unit padded
// to two digits so that a transcript's columns line up. NoTime is
// "no-time".
func (t Time) String() string {
	if t == NoTime {
		return "no-time"
	}
	sign := ""
	v := uint64(t)
	if t < 0 {
		sign, v = "-", uint64(-t)
	}
	ms, s := v%1000, v/1000
	sec, m := s%60, s/60
	min, h := m%60, m/60
	hour, d := h%24, h/24
	switch {
	case d > 0:
		return fmt.Sprintf("%s%dd%02dh%02dm%02d.%03ds", sign, d, hour, min, sec, ms)
	case h > 0:
		return fmt.Sprintf("%s%dh%02dm%02d.%03ds", sign, h, min, sec, ms)
	case m > 0:
		return fmt.Sprintf("%s%dm%02d.%03ds", sign, m, sec, ms)
	}
	return fmt.Sprintf("%s%d.%03ds", sign, s, ms)
}

// Seconds renders t as seconds with millisecond precision, however large
// ("605.000s"): the form of the engine's transcripts (Outcome.String),
// which the vectors hold.
func (t Time) Seconds() string {
	if t == NoTime {
		return "no-time"
	}
	sign := ""
	v := uint64(t)
	if t < 0 {
		sign, v = "-", uint64(-t)
	}
	return fmt.Sprintf("%s%d.%03ds", sign, v/1000, v%1000)
}

// Forever is the limit ⊥ ("no limit"). Limits compose by minimum, and
// Forever is the identity of that minimum.
const Forever time.Duration = math.MaxInt64

// Permille is a confidence in thousandths: 1000 is certain, 800 is the
// goldfish-v01 attribution threshold θ = 0.8. The package uses no floats.
type Permille int16

// Certain is the confidence of intents that need no attribution (the eye,
// a preference set on a screen).
const Certain Permille = 1000

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
