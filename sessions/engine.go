package sessions

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// Errors returned by New and Step.
var (
	ErrNoEntropy    = errors.New("sessions: no entropy source for session IDs")
	ErrEntropy      = errors.New("sessions: cannot draw a session ID")
	ErrTimeReversed = errors.New("sessions: event before the previous event")
	ErrBadEvent     = errors.New("sessions: invalid event")
)

// Options configure an Engine.
type Options struct {
	// Profile is the parameter set; nil means goldfish-v01.
	Profile *Profile
	// Entropy supplies the 64 random bits of each session ID (Inv 2.5):
	// crypto/rand.Reader in production, a fixed stream in tests. Required.
	Entropy io.Reader
	// Grammar, if set, is used instead of compiling the profile's own; a
	// Grammar is immutable, so engines may share one.
	Grammar *Grammar
}

// Engine is the Resolution Protocol memory model for one device or stream:
// a deterministic state machine with no clock, no I/O and no goroutines.
// Events go in through Step; outcomes come out of Step and state out of
// State. An Engine is not safe for concurrent use.
type Engine struct {
	p       *Profile
	g       *Grammar
	stair   Retention
	entropy io.Reader

	now     Time
	prevEnd Time // end of the previous session, NoTime if none
	s       *session
	offAt   Time // last eye press that found the room off, NoTime if none
}

// New returns an engine with no session open.
func New(opts Options) (*Engine, error) {
	p := opts.Profile
	if p == nil {
		var err error
		if p, err = LoadProfile("goldfish-v01"); err != nil {
			return nil, err
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if opts.Entropy == nil {
		return nil, ErrNoEntropy
	}
	g := opts.Grammar
	if g == nil {
		var err error
		if g, err = p.Grammar(); err != nil {
			return nil, err
		}
	}
	return &Engine{p: p, g: g, stair: p.Staircase(), entropy: opts.Entropy,
		now: NoTime, prevEnd: NoTime, offAt: NoTime}, nil
}

// Profile returns the engine's profile. Do not modify it.
func (e *Engine) Profile() *Profile { return e.p }

// Grammar returns the engine's grammar.
func (e *Engine) Grammar() *Grammar { return e.g }

type voice struct {
	id    string
	slot  int           // order of first speech; -1 for a label over capacity (O)
	r     Level         // own request, Unset if none
	cap   Level         // κ, Top if none
	limit time.Duration // λ, Forever if none
}

type window struct {
	since, opened  Time
	delta, ceiling Level   // δ⁻, c⁻
	caps           []Level // κ⁻ by slot
}

// snapshot is one point of the level timeline T: the state from at on,
// lowered further by every before-state an undo attached (Inv 5.3).
type snapshot struct {
	at      Time
	delta   Level
	ceiling Level
	r, caps []Level
	befores []*window
}

type segment struct {
	Segment
	v *voice
}

// Span is a forgotten span (a, b, who) of Def 6.3; Voice is empty for
// everyone.
type Span struct {
	From, To Time
	Voice    string
}

type session struct {
	id          SessionID
	start, last Time
	delta       Level         // δ
	ceiling     Level         // c
	roomLimit   time.Duration // ρ
	win         *window
	voices      []*voice // V, by slot
	labels      map[string]*voice
	overCap     int
	forgotten   []Span
	timeline    []snapshot
	replies     [][]int // R[x][y], by slot
	lastTurn    []Time  // end of each voice's last turn, by slot
	segs        []*segment
	log         []Outcome
}

// Step applies one event and returns what happened, in order. An error
// means the event was refused as a whole and the state is unchanged.
func (e *Engine) Step(ev Event) ([]Outcome, error) {
	if ev == nil {
		return nil, fmt.Errorf("%w: nil", ErrBadEvent)
	}
	t := ev.when()
	if t == NoTime {
		return nil, fmt.Errorf("%w: no time", ErrBadEvent)
	}
	if e.now != NoTime && t < e.now {
		return nil, fmt.Errorf("%w: %s < %s", ErrTimeReversed, t, e.now)
	}
	heard := t
	switch ev := ev.(type) {
	case Speech:
		if ev.End < ev.Start || ev.Start == NoTime {
			return nil, fmt.Errorf("%w: speech ends at %s before it starts at %s", ErrBadEvent, ev.End, ev.Start)
		}
		if t < ev.End {
			return nil, fmt.Errorf("%w: speech filed at %s before it ends at %s", ErrBadEvent, t, ev.End)
		}
		if ev.Confidence < 0 || ev.Confidence > Certain {
			return nil, fmt.Errorf("%w: confidence %d", ErrBadEvent, ev.Confidence)
		}
		heard = ev.Start
	case Request:
		if err := checkIntent(ev.Intent); err != nil {
			return nil, err
		}
		if ev.Confidence < 0 || ev.Confidence > Certain {
			return nil, fmt.Errorf("%w: confidence %d", ErrBadEvent, ev.Confidence)
		}
	case Press:
		if ev.Held < 0 {
			return nil, fmt.Errorf("%w: negative hold", ErrBadEvent)
		}
	case Tick, End:
	default:
		return nil, fmt.Errorf("%w: %T", ErrBadEvent, ev)
	}
	// A session ID, if this event will open a session, is drawn before
	// anything changes, so a failing entropy source leaves the state as it
	// was.
	var id SessionID
	switch ev.(type) {
	case Speech, Request, Press:
		if e.s == nil || heard >= e.s.last.Add(e.p.SessionGap) {
			var err error
			if id, err = e.draw(); err != nil {
				return nil, err
			}
		}
	}
	var out []Outcome
	e.now = t
	out = e.advance(t, heard, out)
	switch ev := ev.(type) {
	case Speech:
		start := ev.Start
		if e.prevEnd != NoTime && start < e.prevEnd {
			start = e.prevEnd
		}
		out = e.open(start, id, out)
		out = e.speech(ev, out)
	case Request:
		out = e.open(t, id, out)
		var x *voice
		if ev.Label != "" {
			x = e.s.labels[ev.Label]
		}
		out = e.apply(ev.Intent, x, ev.Confidence, t, out)
	case Press:
		out = e.open(t, id, out)
		out = e.press(ev, out)
	case End:
		if e.s != nil {
			out = e.end(t, out)
		}
	}
	return out, nil
}

// draw reads a non-zero 64-bit session ID from the entropy source.
func (e *Engine) draw() (SessionID, error) {
	var b [8]byte
	for {
		if _, err := io.ReadFull(e.entropy, b[:]); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrEntropy, err)
		}
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return SessionID(id), nil
		}
	}
}

func checkIntent(in Intent) error {
	bad := func(why string) error { return fmt.Errorf("%w: intent %s: %s", ErrBadEvent, in, why) }
	if in.Kind < Lower || in.Kind > Claim {
		return bad("unknown kind")
	}
	if in.Scope != Self && in.Scope != Room {
		return bad("unknown scope")
	}
	if in.Source < FromSpeech || in.Source > FromExchange {
		return bad("unknown source")
	}
	switch in.Kind {
	case Lower, Raise:
		if !in.Level.Valid() {
			return bad("needs a level")
		}
	case Forget:
		if !in.All && in.Span <= 0 {
			return bad("needs a positive span or all")
		}
	case Shorten:
		if in.Span <= 0 {
			return bad("needs a positive limit")
		}
	}
	return nil
}

// advance moves time to t: it confirms a window whose time is up and ends
// the session after G of silence. heard is when the event's sound began.
func (e *Engine) advance(t, heard Time, out []Outcome) []Outcome {
	s := e.s
	if s == nil {
		return out
	}
	end := s.last.Add(e.p.SessionGap)
	gap := heard >= end
	if w := s.win; w != nil {
		closes := w.opened.Add(e.p.ObjectionWindow)
		if t > closes && (!gap || closes < end) {
			out = e.confirm(closes, out)
		}
	}
	if gap {
		out = e.end(end, out)
	}
	return out
}

// open starts a session at t, with the ID drawn for it, if none is open.
func (e *Engine) open(t Time, id SessionID, out []Outcome) []Outcome {
	if e.s != nil {
		return out
	}
	e.s = &session{
		id: id, start: t, last: t,
		delta: e.p.DefaultLevel, ceiling: Top, roomLimit: Forever,
		labels: map[string]*voice{},
	}
	e.s.snap(t)
	return e.emit(out, Outcome{Kind: SessionStarted, At: t})
}

// emit appends o to out and to the session's event log.
func (e *Engine) emit(out []Outcome, o Outcome) []Outcome {
	if e.s != nil {
		o.Session = e.s.id
		e.s.log = append(e.s.log, cloneOutcome(o))
	}
	return append(out, o)
}

func cloneOutcome(o Outcome) Outcome {
	if o.Segment != nil {
		u := *o.Segment
		o.Segment = &u
	}
	if o.Intent != nil {
		in := *o.Intent
		o.Intent = &in
	}
	return o
}

// applied is A(x) of Def 4.1; x == nil is A(*).
func (s *session) applied(x *voice) Level {
	if x == nil {
		return Meet(s.delta, s.ceiling)
	}
	if x.slot < 0 {
		return Off
	}
	return Meet(Meet(or(x.r, s.delta), s.ceiling), x.cap)
}

// before is Def 5.2: (r(x) or δ⁻) ∧ c⁻ ∧ κ⁻(x).
func (w *window) before(r Level, slot int) Level {
	l := Meet(or(r, w.delta), w.ceiling)
	if slot >= 0 && slot < len(w.caps) {
		l = Meet(l, w.caps[slot])
	}
	return l
}

// snap records the current levels in the timeline T at t.
func (s *session) snap(t Time) {
	sn := snapshot{at: t, delta: s.delta, ceiling: s.ceiling,
		r: make([]Level, len(s.voices)), caps: make([]Level, len(s.voices))}
	for i, v := range s.voices {
		sn.r[i], sn.caps[i] = v.r, v.cap
	}
	s.timeline = append(s.timeline, sn)
}

// levelAt is A_T(x, τ) for the snapshot sn.
func (sn *snapshot) levelAt(slot int) Level {
	r, c := Unset, Top
	if slot < len(sn.r) {
		r, c = sn.r[slot], sn.caps[slot]
	}
	l := Meet(Meet(or(r, sn.delta), sn.ceiling), c)
	for _, w := range sn.befores {
		l = Meet(l, w.before(r, slot))
	}
	return l
}

// stamp is s(u) of Def 6.1 before forget spans: the lowest level x had at
// any point of [t0, t1], and now.
func (s *session) stamp(x *voice, t0, t1 Time) Level {
	l := s.applied(x)
	// The snapshot in force at t0 is the last one at or before t0.
	i, _ := slices.BinarySearchFunc(s.timeline, t0, func(sn snapshot, t Time) int {
		if sn.at <= t {
			return -1
		}
		return 1
	})
	if i > 0 {
		l = Meet(l, s.timeline[i-1].levelAt(x.slot))
	}
	for ; i < len(s.timeline) && s.timeline[i].at <= t1; i++ {
		l = Meet(l, s.timeline[i].levelAt(x.slot))
	}
	return l
}

func (s *session) forgottenOver(x *voice, t0, t1 Time) bool {
	for _, f := range s.forgotten {
		if (f.Voice == "" || f.Voice == x.id) && t0 <= f.To && f.From <= t1 {
			return true
		}
	}
	return false
}

// voice returns the voice of label, assigning an identity at first hearing
// (Def 2.2) or adding the label to O when the session is full (Def 2.3).
func (e *Engine) voice(label string) *voice {
	s := e.s
	if v, ok := s.labels[label]; ok {
		return v
	}
	v := &voice{slot: -1, r: Unset, cap: Top, limit: Forever}
	if len(s.voices) < e.p.MaxParticipants {
		v.slot = len(s.voices)
		v.id = "v" + strconv.Itoa(v.slot+1)
		s.voices = append(s.voices, v)
		for i := range s.replies {
			s.replies[i] = append(s.replies[i], 0)
		}
		s.replies = append(s.replies, make([]int, len(s.voices)))
		s.lastTurn = append(s.lastTurn, NoTime)
	} else {
		s.overCap++
	}
	s.labels[label] = v
	return v
}

func (e *Engine) speech(ev Speech, out []Outcome) []Outcome {
	s := e.s
	x := e.voice(ev.Label)
	if x.slot >= 0 && e.p.Has(ExtSideConversations) {
		s.reply(x, ev.Start, ev.End, e.p.ReplyWindow)
	}
	if ev.End > s.last {
		s.last = ev.End
	}
	var u *segment
	switch {
	case x.slot < 0:
		out = e.emit(out, Outcome{Kind: Refused, At: ev.when(), Refusal: OverCap, Ref: ev.Ref})
	case ev.Start < s.start:
		out = e.emit(out, Outcome{Kind: Refused, At: ev.when(), Voice: x.id, Refusal: BeforeStart, Ref: ev.Ref})
	default:
		u = &segment{v: x, Segment: Segment{Seq: len(s.segs), Ref: ev.Ref, Voice: x.id,
			Start: ev.Start, End: ev.End, Held: Unset}}
		u.Stamped = s.stamp(x, ev.Start, ev.End)
		if s.forgottenOver(x, ev.Start, ev.End) {
			u.Stamped = Off
		} else if w := s.win; w != nil && ev.End >= w.since {
			u.Held = Meet(u.Stamped, w.before(x.r, x.slot))
		}
		s.segs = append(s.segs, u)
		seg := u.Segment
		out = e.emit(out, Outcome{Kind: Filed, At: ev.when(), Voice: x.id, Segment: &seg})
	}
	if ev.Text == "" {
		return out
	}
	in, ok := e.g.Parse(ev.Text)
	if !ok {
		return out
	}
	t := ev.when()
	out = e.apply(in, x, ev.Confidence, t, out)
	// G6.2: the line that carries an intent is filed first, then lowered
	// to the speaker's level after the intent.
	if u != nil {
		out = e.restamp(u, Meet(u.Stamped, s.applied(x)), u.Held, t, out)
	}
	return out
}

// restamp sets a segment's levels, which may only fall, and reports it.
func (e *Engine) restamp(u *segment, st, h Level, t Time, out []Outcome) []Outcome {
	if h != Unset {
		h = Meet(h, st)
	}
	if st == u.Stamped && h == u.Held {
		return out
	}
	u.Stamped, u.Held = st, h
	seg := u.Segment
	return e.emit(out, Outcome{Kind: Restamped, At: t, Voice: u.Voice, Segment: &seg})
}

// sure is Def 3.5.
func (e *Engine) sure(x *voice, q Permille) bool {
	return x != nil && x.slot >= 0 && q >= e.p.AttributionPermille
}

// apply runs one intent through Def 3.6 and Table 4.2.
func (e *Engine) apply(in Intent, x *voice, q Permille, t Time, out []Outcome) []Outcome {
	s := e.s
	sure := e.sure(x, q)
	who := ""
	if x != nil {
		who = x.id
	}
	decide := func(r Result, why Reason) []Outcome {
		i := in
		return e.emit(out, Outcome{Kind: Decided, At: t, Voice: who, Intent: &i, Result: r, Reason: why})
	}
	if in.Kind == Claim && !e.p.Has(ExtClaiming) {
		return decide(Ignored, Unsupported)
	}
	// A self intent from a screen, a preference or an exchange for a label
	// this session has never heard is about nobody's record (decision in
	// docs/deviations.md: no-slot).
	if in.Scope == Self && in.Source != FromSpeech && x == nil {
		return decide(Ignored, NoSlot)
	}
	// Def 3.6: uncertainty falls toward less.
	switch {
	case in.Scope == Self && (in.Kind == Lower || in.Kind == Forget || in.Kind == Shorten) && !sure:
		in.Scope = Room
	case in.Scope == Self && (in.Kind == Raise || in.Kind == Resume) && !sure:
		return decide(Ignored, UnsureSpeaker)
	case in.Scope == Room && (in.Kind == Raise || in.Kind == Resume) && in.Source == FromSpeech && !sure:
		return decide(Ignored, UnsureSpeaker)
	}
	if in.Kind == Object {
		if s.win == nil {
			return decide(Ignored, NothingToUndo)
		}
		out = e.undo(t, out)
		return decide(Reverted, NoReason)
	}
	if in.Scope == Self {
		if x == nil || x.slot < 0 {
			return decide(Ignored, NoSlot)
		}
		// "(r(x) or δ)" reads δ as it stands without a pending raise, so
		// that a provisional room raise never becomes part of a voice's own
		// request (docs/deviations.md).
		d := s.delta
		if s.win != nil {
			d = s.win.delta
		}
		switch in.Kind {
		case Lower:
			x.r = Meet(or(x.r, d), in.Level)
		case Raise:
			x.r = Join(or(x.r, d), Meet(in.Level, e.p.MaxVoiceLevel))
		case Resume:
			x.r = Unset
		case Forget:
			out = e.forget(in, x.id, t, out)
		case Shorten:
			x.limit = minDur(x.limit, in.Span)
		}
		s.snap(t)
		out = decide(Applied, NoReason)
		if in.Kind == Forget && in.All {
			s.scrub(x.id)
		}
		return out
	}
	switch in.Kind {
	case Lower:
		if s.win != nil {
			out = e.undo(t, out)
		}
		if g := e.group(x, sure); g != nil {
			for _, v := range g {
				v.cap = Meet(v.cap, in.Level)
			}
		} else {
			s.ceiling = Meet(s.ceiling, in.Level)
		}
		s.snap(t)
		return decide(Applied, NoReason)
	case Forget:
		out = e.forget(in, "", t, out)
		return decide(Applied, NoReason)
	case Shorten:
		s.roomLimit = minDur(s.roomLimit, in.Span)
		return decide(Applied, NoReason)
	case Resume:
		// A sure voice in a split session resumes its own group, if the
		// group has a cap; otherwise the resume is the room's.
		scope := e.group(x, sure)
		if !lowered(scope) {
			scope = nil
		}
		if scope == nil && !s.lowered() {
			return decide(Ignored, NotLowered)
		}
		out = e.openWindow(t, out)
		if scope != nil {
			for _, v := range scope {
				v.cap = Top
			}
		} else {
			s.ceiling = Top
			for _, v := range s.voices {
				v.cap = Top
			}
		}
		s.snap(t)
		return decide(Provisional, NoReason)
	case Raise:
		if e.p.RoomRaise == RaiseDisabled {
			return decide(Ignored, RoomRaiseDisabled)
		}
		if !in.Addressed {
			return decide(Ignored, NotAddressed)
		}
		target := Meet(in.Level, e.p.MaxDefaultLevel)
		ref := s.delta
		if s.win != nil {
			ref = s.win.delta
		}
		if target <= ref {
			return decide(Ignored, NotARaise)
		}
		out = e.openWindow(t, out)
		s.delta = target
		s.snap(t)
		return decide(Provisional, NoReason)
	}
	return decide(Ignored, Unsupported)
}

func lowered(vs []*voice) bool {
	return slices.ContainsFunc(vs, func(v *voice) bool { return v.cap < Top })
}

// lowered reports whether anything a room resume lifts is lowered: the
// ceiling or a cap, now or in the before-state of an open window (so that a
// second resume restarts the clock, Inv 5.6).
func (s *session) lowered() bool {
	if s.ceiling < Top || lowered(s.voices) {
		return true
	}
	if w := s.win; w != nil {
		return w.ceiling < Top || slices.ContainsFunc(w.caps, func(l Level) bool { return l < Top })
	}
	return false
}

// forget adds a span (Def 6.3) and zeroes every segment it reaches.
func (e *Engine) forget(in Intent, who string, t Time, out []Outcome) []Outcome {
	s := e.s
	from := s.start
	if !in.All {
		from = t.Add(-in.Span)
		if from < s.start || in.Span > maxSpan {
			from = s.start // spans never cross a session boundary
		}
	}
	s.forgotten = append(s.forgotten, Span{From: from, To: t, Voice: who})
	for _, u := range s.segs {
		if (who == "" || u.Voice == who) && u.Start <= t && from <= u.End {
			out = e.restamp(u, Off, Unset, t, out)
		}
	}
	return out
}

// scrub is Def 2.6: after forget(self, all) the log no longer shows that
// the voice spoke.
func (s *session) scrub(who string) {
	for i := range s.log {
		if s.log[i].Voice == who {
			s.log[i].Voice = ""
		}
		if u := s.log[i].Segment; u != nil && u.Voice == who {
			u.Voice = ""
		}
	}
}

func (e *Engine) openWindow(t Time, out []Outcome) []Outcome {
	s := e.s
	until := t.Add(e.p.ObjectionWindow)
	if s.win != nil {
		s.win.opened = t
		return e.emit(out, Outcome{Kind: WindowRestarted, At: t, Until: until})
	}
	w := &window{since: t, opened: t, delta: s.delta, ceiling: s.ceiling, caps: make([]Level, len(s.voices))}
	for i, v := range s.voices {
		w.caps[i] = v.cap
	}
	s.win = w
	return e.emit(out, Outcome{Kind: WindowOpened, At: t, Until: until})
}

// undo is Inv 5.3: restore the before-state, lower every segment that
// ended at or after since, and rewrite the timeline from since on.
func (e *Engine) undo(t Time, out []Outcome) []Outcome {
	s := e.s
	w := s.win
	s.win = nil
	s.delta, s.ceiling = w.delta, w.ceiling
	for i, c := range w.caps {
		s.voices[i].cap = c
	}
	for i := range s.timeline {
		if s.timeline[i].at >= w.since {
			s.timeline[i].befores = append(s.timeline[i].befores, w)
		}
	}
	out = e.emit(out, Outcome{Kind: WindowUndone, At: t})
	for _, u := range s.segs {
		if u.End >= w.since {
			out = e.restamp(u, Meet(u.Stamped, w.before(u.v.r, u.v.slot)), Unset, t, out)
		}
	}
	s.snap(t)
	return out
}

// confirm closes the window at t (opened + W): the raise stands.
func (e *Engine) confirm(t Time, out []Outcome) []Outcome {
	s := e.s
	s.win = nil
	out = e.emit(out, Outcome{Kind: WindowConfirmed, At: t})
	for _, u := range s.segs {
		if u.Held != Unset {
			out = e.restamp(u, u.Stamped, Unset, t, out)
		}
	}
	return out
}

// end is §8.1.
func (e *Engine) end(t Time, out []Outcome) []Outcome {
	s := e.s
	if s.win != nil {
		if closes := s.win.opened.Add(e.p.ObjectionWindow); closes < t {
			out = e.confirm(closes, out)
		} else {
			out = e.undo(t, out)
		}
	}
	c := &Closure{Session: s.id, Profile: e.p.Name, Start: s.start, End: t,
		Voices: len(s.voices), OverCap: s.overCap, RoomLimit: s.roomLimit}
	for _, u := range s.segs {
		c.Records = append(c.Records, Record{Session: s.id, Seq: u.Seq, Ref: u.Ref, Voice: u.Voice,
			Start: u.Start, End: u.End, Stamped: u.Stamped, Limit: minDur(s.roomLimit, u.v.limit)})
	}
	out = e.emit(out, Outcome{Kind: SessionEnded, At: t, Closure: c})
	// Identities, levels, limits, spans, the reply graph, the counters and
	// the log go with the session (D4); the next session draws a new ID.
	e.s = nil
	e.prevEnd = t
	e.offAt = NoTime
	return out
}

// press is the eye (Goldfish binding): a press while the room is on lowers
// the room to 0; a press while it is off does nothing, unless it comes
// within the double-press time of a press that found the room off, which
// resumes; a hold shows the battery.
func (e *Engine) press(ev Press, out []Outcome) []Outcome {
	s := e.s
	eye := Intent{Scope: Room, Level: Unset, Addressed: true, Source: FromUI}
	switch {
	case s.applied(nil) > Off:
		eye.Kind, eye.Level = Lower, Off
		e.offAt = NoTime
		out = e.apply(eye, nil, Certain, ev.At, out)
	case e.offAt != NoTime && ev.At.Sub(e.offAt) <= e.p.EyeDoublePress:
		eye.Kind = Resume
		e.offAt = NoTime
		out = e.apply(eye, nil, Certain, ev.At, out)
	default:
		e.offAt = ev.At
		out = e.emit(out, Outcome{Kind: StillOff, At: ev.At})
	}
	if ev.Held >= e.p.EyeHold {
		out = e.emit(out, Outcome{Kind: BatteryShown, At: ev.At})
	}
	return out
}
