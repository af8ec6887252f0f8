package meeting

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sessions"
	"github.com/witan-dev/witan/sessions/meetstore"
)

// Code is a machine-readable error code; on HTTP it is the problem's
// "code". The meeting API is witan's own, so its codes are in witan's
// namespace.
type Code string

// The codes the meeting API answers with.
const (
	CodeUnknownProfile Code = "witan:unknown_profile"
	CodeUnknownLocale  Code = "witan:unknown_locale"
	CodeBadEvent       Code = "witan:bad_event"
	CodeOutOfOrder     Code = "witan:out_of_order"
	CodeBeforeStart    Code = "witan:before_start"
	CodeTooLarge       Code = "witan:request_too_large"
	CodeEnded          Code = "witan:meeting_ended"
	CodeStillOpen      Code = "witan:meeting_open"
	CodeNotFound       Code = "witan:not_found"
	CodeForgotten      Code = "witan:forgotten"
	CodeTooMany        Code = "witan:too_many_meetings"
	CodeBadRequest     Code = "witan:bad_request"
	CodeNotPublished   Code = "witan:not_published"
	CodeInternal       Code = "witan:internal"
)

// Error is a refusal with its code. The meeting's state is unchanged by a
// refused call, except where Detail says the meeting ended.
type Error struct {
	Code   Code
	Detail string
}

func (e *Error) Error() string { return "meeting: " + string(e.Code) + ": " + e.Detail }

// CodeOf returns err's code, CodeInternal if it has none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ID names a meeting: 64 random bits, 16 hex digits. It is the API's handle
// and is unrelated to the engine's session ID (Inv 2.5).
type ID [8]byte

func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID reads the 16 hex digits String writes.
func ParseID(s string) (ID, error) {
	var id ID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 8 {
		return id, &Error{Code: CodeNotFound, Detail: fmt.Sprintf("meeting %q: want 16 hex digits", s)}
	}
	copy(id[:], b)
	return id, nil
}

// Options configure a Service. Store is required; the zero value of every
// other field works.
type Options struct {
	// Store keeps what meetings leave (§7.8). Required.
	Store *meetstore.Store
	// Clock is the node's clock: the default time of reads and of a
	// meeting's start. Nil means the system clock.
	Clock meetstore.Clock
	// Entropy draws meeting IDs and the engine's session IDs; nil means
	// crypto/rand.
	Entropy io.Reader
	// MaxOpen bounds the meetings open at once (default 16); MaxEvents the
	// events of one meeting (default 20000); MaxText the bytes of one
	// transcript (default DefaultMaxText); MaxTexts the bytes of all the
	// transcripts of one meeting (default 1 MiB). So the open meetings
	// hold at most MaxOpen × MaxTexts of text in RAM.
	MaxOpen, MaxEvents, MaxText, MaxTexts int
	// MaxOpenPerClient bounds the meetings one client (dag.SourceOf the
	// start's ctx: "http:<address>" over HTTP) may have open at once
	// (default 4), so one client cannot take every slot of MaxOpen.
	MaxOpenPerClient int
	// IdleAfter ends a meeting that has had no event for this long
	// (default 30 minutes, read on Options.Clock): it is ended at its last
	// event and filed, as End would, when a meeting is next started.
	IdleAfter time.Duration
	// Publisher, if set, lets PublishOutcomes put a note's Outcomes section
	// in a memory space.
	Publisher Publisher
}

// Publisher puts text in a memory space as a CAT7 block and says where.
type Publisher interface {
	PublishBlock(ctx context.Context, space, text string) (ref string, err error)
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now().UTC() }

// Service runs meetings: engines for the open ones, the store for what the
// closed ones left. It is node-local: nothing of it is in the DAG, so
// nothing of it is ever synced. Safe for concurrent use.
type Service struct {
	o    Options
	mu   sync.Mutex
	open map[ID]*live
}

// live is an open meeting. Everything of it is in RAM only: the engine,
// the transcripts, the event log. It reaches the disk, sealed, when the
// meeting ends.
type live struct {
	id      ID
	p       *sessions.Profile
	locale  string
	start   sessions.Time
	eng     *sessions.Engine
	events  int
	texts   map[uint64]string
	textLen int
	nextRef uint64
	log     []sessions.Outcome
	// client is who started it (dag.SourceOf); touched is its last start
	// or event, on Options.Clock.
	client  string
	touched time.Time
}

// New returns a service over a store.
func New(o Options) (*Service, error) {
	if o.Store == nil {
		return nil, errors.New("meeting: no store")
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Entropy == nil {
		o.Entropy = rand.Reader
	}
	if o.MaxOpen <= 0 {
		o.MaxOpen = 16
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 20000
	}
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	if o.MaxTexts <= 0 {
		o.MaxTexts = 1 << 20
	}
	if o.MaxOpenPerClient <= 0 {
		o.MaxOpenPerClient = 4
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	return &Service{o: o, open: map[ID]*live{}}, nil
}

// DefaultIdleAfter is Options.IdleAfter's default.
const DefaultIdleAfter = 30 * time.Minute

// expireIdle ends and files the meetings idle for IdleAfter, at their last
// event. A meeting whose filing fails is dropped all the same: it would
// hold its slot for ever. Called with s.mu held.
func (s *Service) expireIdle(ctx context.Context) {
	now := s.o.Clock.Now()
	for id, m := range s.open {
		if now.Sub(m.touched) < s.o.IdleAfter {
			continue
		}
		if st := m.eng.State(); st.Open {
			if out, err := m.eng.Step(sessions.End{At: st.Last}); err == nil {
				s.absorb(ctx, m, out) //nolint:errcheck // dropped below whatever happens
			}
		}
		delete(s.open, id)
	}
}

// StartOptions start a meeting.
type StartOptions struct {
	// Profile names an embedded profile; empty means goldfish-v01.
	Profile string `json:"profile,omitempty"`
	// Locale, if set, is tried first (it must be one of the profile's):
	// "es" for Spanish.
	Locale string `json:"locale,omitempty"`
	// Start is the meeting's start in Unix milliseconds; 0 means now.
	// Nothing said before it is filed.
	Start int64 `json:"start,omitempty"`
}

// Start opens a meeting.
func (s *Service) Start(ctx context.Context, so StartOptions) (ID, error) {
	var id ID
	name := so.Profile
	if name == "" {
		name = "goldfish-v01"
	}
	p, err := sessions.LoadProfile(name)
	if err != nil {
		return id, &Error{Code: CodeUnknownProfile, Detail: fmt.Sprintf("profile %q (known: %s)", name, strings.Join(sessions.Profiles(), ", "))}
	}
	if so.Locale != "" {
		i := slices.Index(p.Locales, so.Locale)
		if i < 0 {
			return id, &Error{Code: CodeUnknownLocale, Detail: fmt.Sprintf("locale %q (profile %s has %s)", so.Locale, name, strings.Join(p.Locales, ", "))}
		}
		p.Locales = append([]string{so.Locale}, slices.Delete(slices.Clone(p.Locales), i, i+1)...)
	}
	start := sessions.Time(so.Start)
	if so.Start == 0 {
		start = sessions.At(s.o.Clock.Now())
	}
	if start <= 0 {
		return id, &Error{Code: CodeBadRequest, Detail: "start must be positive Unix milliseconds"}
	}
	eng, err := sessions.New(sessions.Options{Profile: p, Entropy: s.o.Entropy})
	if err != nil {
		return id, fmt.Errorf("meeting: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireIdle(ctx)
	client := dag.SourceOf(ctx)
	mine := 0
	for _, m := range s.open {
		if m.client == client {
			mine++
		}
	}
	if mine >= s.o.MaxOpenPerClient {
		return id, &Error{Code: CodeTooMany, Detail: fmt.Sprintf("%d meetings of this client are open (end one, or it ends after %s without events)", mine, s.o.IdleAfter)}
	}
	if len(s.open) >= s.o.MaxOpen {
		return id, &Error{Code: CodeTooMany, Detail: fmt.Sprintf("%d meetings are open", len(s.open))}
	}
	if _, err := io.ReadFull(s.o.Entropy, id[:]); err != nil {
		return id, fmt.Errorf("meeting: id: %w", err)
	}
	s.open[id] = &live{id: id, p: p, locale: p.Locales[0], start: start, eng: eng, texts: map[uint64]string{},
		client: client, touched: s.o.Clock.Now()}
	return id, nil
}

func (s *Service) get(id ID) (*live, error) {
	m, ok := s.open[id]
	if !ok {
		if s.closedExists(id) {
			return nil, &Error{Code: CodeEnded, Detail: "the meeting has ended"}
		}
		return nil, &Error{Code: CodeNotFound, Detail: "no meeting " + id.String()}
	}
	return m, nil
}

// Step feeds one event to an open meeting and returns what happened. A
// refused event leaves the meeting as it was. An event heard after the
// session gap G ends the meeting (dated last + G, Def 2.1) and is itself
// refused with CodeEnded.
func (s *Service) Step(ctx context.Context, id ID, ev Event) ([]Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.get(id)
	if err != nil {
		return nil, err
	}
	if m.events >= s.o.MaxEvents {
		return nil, &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("the meeting has had %d events", m.events)}
	}
	e, err := ev.toEngine(m.nextRef, s.o.MaxText)
	if err != nil {
		return nil, err
	}
	if m.textLen+len(ev.Text) > s.o.MaxTexts {
		return nil, &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("the meeting's transcripts are over %d bytes", s.o.MaxTexts)}
	}
	if ev.Type != "end" && sessions.Time(ev.heard()) < m.start {
		return nil, &Error{Code: CodeBeforeStart, Detail: "the event is before the meeting's start"}
	}
	st := m.eng.State()
	if st.Open && ev.Type != "end" && ev.Type != "tick" && sessions.Time(ev.heard()) >= st.Last.Add(m.p.SessionGap) {
		// The session is over: close it at its gap, file what it left,
		// and refuse the event, which belongs to no meeting.
		out, err := m.eng.Step(sessions.Tick{At: sessions.Time(max(ev.heard(), int64(st.Last)))})
		if err != nil {
			return nil, stepError(err)
		}
		if err := s.absorb(ctx, m, out); err != nil {
			return nil, err
		}
		return nil, &Error{Code: CodeEnded, Detail: fmt.Sprintf("the meeting ended after %s of silence; the event was not filed", sessions.FormatAge(m.p.SessionGap))}
	}
	out, err := m.eng.Step(e)
	if err != nil {
		return nil, stepError(err)
	}
	m.events++
	m.touched = s.o.Clock.Now()
	if sp, ok := e.(sessions.Speech); ok && sp.Text != "" {
		m.texts[sp.Ref] = sp.Text
		m.textLen += len(sp.Text)
	}
	if ev.Type == "speech" {
		m.nextRef++
	}
	if err := s.absorb(ctx, m, out); err != nil {
		return nil, err
	}
	res := make([]Result, 0, len(out))
	for _, o := range out {
		res = append(res, resultOf(o))
	}
	return res, nil
}

func stepError(err error) error {
	switch {
	case errors.Is(err, sessions.ErrTimeReversed):
		return &Error{Code: CodeOutOfOrder, Detail: "the event is before the meeting's previous event"}
	case errors.Is(err, sessions.ErrBadEvent):
		return &Error{Code: CodeBadEvent, Detail: strings.TrimPrefix(err.Error(), "sessions: ")}
	}
	return fmt.Errorf("meeting: %w", err)
}

// absorb keeps the outcomes in the meeting's event log and files what the
// session left if it ended. Called with s.mu held.
func (s *Service) absorb(ctx context.Context, m *live, out []sessions.Outcome) error {
	for _, o := range out {
		m.log = append(m.log, o)
		// Def 2.6: erase me removes the voice's ID from the log.
		if o.Kind == sessions.Decided && o.Result == sessions.Applied && o.Intent != nil &&
			o.Intent.Kind == sessions.Forget && o.Intent.Scope == sessions.Self && o.Intent.All && o.Voice != "" {
			scrub(m.log, o.Voice)
		}
		if o.Kind == sessions.SessionEnded {
			delete(s.open, m.id)
			return s.file(ctx, m, o.Closure)
		}
	}
	return nil
}

func scrub(log []sessions.Outcome, who string) {
	for i := range log {
		if log[i].Voice == who {
			log[i].Voice = ""
		}
		if u := log[i].Segment; u != nil && u.Voice == who {
			v := *u
			v.Voice = ""
			log[i].Segment = &v
		}
	}
}

// End ends an open meeting at at (Unix ms; 0 means its last event) and
// files what it leaves.
func (s *Service) End(ctx context.Context, id ID, at int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.get(id)
	if err != nil {
		return err
	}
	st := m.eng.State()
	if !st.Open {
		// Nothing was ever said: there is nothing to keep.
		delete(s.open, id)
		return nil
	}
	if at == 0 {
		at = int64(st.Last)
	}
	out, err := m.eng.Step(sessions.End{At: sessions.Time(at)})
	if err != nil {
		return stepError(err)
	}
	return s.absorb(ctx, m, out)
}

// VoiceView is one voice of an open meeting, by pseudonym only.
type VoiceView struct {
	ID    string `json:"id"`
	Level int    `json:"level"` // A(x)
}

// WindowView is the open objection window.
type WindowView struct {
	RemainingMS int64 `json:"remaining_ms"`
}

// StateView is a meeting as an answer shows it. It carries no label and
// no statement time.
type StateView struct {
	ID        string      `json:"id"`
	Profile   string      `json:"profile"`
	Locale    string      `json:"locale,omitempty"`
	Open      bool        `json:"open"`
	RoomLevel int         `json:"room_level"` // A(*)
	Default   int         `json:"default"`    // δ
	Ceiling   int         `json:"ceiling"`    // c
	Window    *WindowView `json:"window"`
	Voices    []VoiceView `json:"voices"`
	OverCap   int         `json:"over_cap"`
	Split     bool        `json:"split"`
	Groups    [][]string  `json:"groups,omitempty"`
	Segments  int         `json:"segments"`
	Events    int         `json:"events"`
}

// State returns an open meeting's state.
func (s *Service) State(ctx context.Context, id ID) (StateView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.get(id)
	if err != nil {
		return StateView{}, err
	}
	st := m.eng.State()
	v := StateView{ID: id.String(), Profile: m.p.Name, Locale: m.locale, Open: true,
		RoomLevel: int(st.Anyone), Default: int(st.Default), Ceiling: int(st.Ceiling),
		Voices: []VoiceView{}, OverCap: st.OverCap, Split: st.Split, Groups: st.Groups,
		Segments: len(st.Segments), Events: m.events}
	if w := st.Window; w != nil {
		v.Window = &WindowView{RemainingMS: int64(w.Until.Sub(st.Last) / time.Millisecond)}
		if now := lastEvent(m.log); now != sessions.NoTime {
			v.Window.RemainingMS = max(0, int64(w.Until.Sub(now)/time.Millisecond))
		}
	}
	for _, x := range st.Voices {
		v.Voices = append(v.Voices, VoiceView{ID: x.ID, Level: int(x.Applied)})
	}
	return v, nil
}

func lastEvent(log []sessions.Outcome) sessions.Time {
	t := sessions.NoTime
	for _, o := range log {
		t = max(t, o.At)
	}
	return t
}

// item keys in the store: meeting ID, a kind, and for records the seq.
const (
	itemMeta   = 'm'
	itemNote   = 'n' // then the section's level
	itemLog    = 'l'
	itemRecord = 'r' // then the seq, 4 bytes
)

func item(id ID, kind byte, n uint32) []byte {
	b := append(id[:0:0], id[:]...)
	b = append(b, kind)
	if kind == itemRecord || kind == itemNote || kind == itemLog {
		b = binary.BigEndian.AppendUint32(b, n)
	}
	return b
}

// meta is what a closed meeting keeps about itself, sealed at level 1.
type meta struct {
	Profile string `json:"profile"`
	Locale  string `json:"locale"`
	Start   int64  `json:"start"` // the session's start, for the note's date
	Voices  int    `json:"voices"`
	Dropped []int  `json:"dropped,omitempty"`
	Trunc   int    `json:"truncated,omitempty"`
	Levels  []int  `json:"levels"` // the note's sections
	Limit   *int64 `json:"limit_ms,omitempty"`
}

// recordCopy is one copy of a record, sealed at its level r.
type recordCopy struct {
	Seq     int    `json:"seq"`
	Stamped int    `json:"stamped"`
	End     int64  `json:"end"`
	Limit   *int64 `json:"limit_ms,omitempty"`
	Voice   string `json:"voice,omitempty"` // only at 3: who said it
	Text    string `json:"text"`
}

// noteCopy is one section of the note, sealed at its level.
type noteCopy struct {
	Level     int      `json:"level"`
	Title     string   `json:"title"`
	KeptUntil int64    `json:"kept_until"`
	Lines     []string `json:"lines"`
}

func limitPtr(d time.Duration) *int64 {
	if d == sessions.Forever {
		return nil
	}
	ms := int64(d / time.Millisecond)
	return &ms
}

func limitOf(p *int64) time.Duration {
	if p == nil {
		return sessions.Forever
	}
	return time.Duration(*p) * time.Millisecond
}

// summarise is the stand-in summariser: one line per record, the
// transcript itself, prefixed by the pseudonym from level 3 on. The
// model's summariser is not built (§8.4).
func summarise(texts map[uint64]string) sessions.Summariser {
	return func(l sessions.Level, recs []sessions.Record) []string {
		var lines []string
		for _, r := range recs {
			t := texts[r.Ref]
			if t == "" {
				continue
			}
			if l >= sessions.Attributed {
				t = r.Voice + ": " + t
			}
			lines = append(lines, t)
		}
		return lines
	}
}

// file is §8.1–§8.3 and §7.8–§7.9 for a session that ended: the note is
// written, and the records, the note's sections, the event log and the
// meeting's own metadata go to the store as sealed copies. Called with
// s.mu held; the meeting is no longer open.
func (s *Service) file(ctx context.Context, m *live, c *sessions.Closure) error {
	defer clear(m.texts)
	st := m.p.Staircase()
	note, err := sessions.WriteNote(m.p, c, summarise(m.texts))
	if err != nil {
		return fmt.Errorf("meeting: %w", err)
	}
	mk, ok := meetstore.ClassFor(c.RoomLimit)
	if !ok {
		return nil // "keep this for an hour": the store keeps nothing
	}
	mt := meta{Profile: m.p.Name, Locale: m.locale, Start: int64(c.Start), Voices: c.Voices,
		Trunc: note.Truncated, Limit: limitPtr(c.RoomLimit)}
	for _, l := range note.Dropped {
		mt.Dropped = append(mt.Dropped, int(l))
	}
	for _, sec := range note.Sections {
		mt.Levels = append(mt.Levels, int(sec.Level))
	}
	put := func(it []byte, at sessions.Time, k meetstore.Class, copies map[int][]byte) error {
		_, err := s.o.Store.Put(ctx, it, at.UTC(), k, copies)
		return err
	}
	b, _ := json.Marshal(mt)
	if err := put(item(m.id, itemMeta, 0), c.Start, mk, map[int][]byte{1: b}); err != nil {
		return fmt.Errorf("meeting: file: %w", err)
	}
	for _, r := range c.Records {
		k, ok := meetstore.ClassFor(r.Limit)
		top := min(int(r.Stamped), 3)
		if !ok || top < 1 {
			continue
		}
		copies := map[int][]byte{}
		for l := 1; l <= top; l++ {
			rc := recordCopy{Seq: r.Seq, Stamped: int(r.Stamped), End: int64(r.End), Limit: limitPtr(r.Limit),
				Text: m.texts[r.Ref]}
			if l == 3 {
				rc.Voice = r.Voice
			}
			copies[l], _ = json.Marshal(rc)
		}
		if err := put(item(m.id, itemRecord, uint32(r.Seq)), r.End, k, copies); err != nil {
			return fmt.Errorf("meeting: file record %d: %w", r.Seq, err)
		}
	}
	for _, sec := range note.Sections {
		l := int(sec.Level)
		if l < 1 || l > 3 {
			continue
		}
		life := sec.KeptUntil.Sub(c.Start)
		k := meetstore.ClassKeep
		if life < st.UnreadableAfter(sec.Level, sessions.Forever) {
			var ok bool
			if k, ok = meetstore.ClassFor(life); !ok {
				continue
			}
		}
		nc, _ := json.Marshal(noteCopy{Level: l, Title: sec.Title, KeptUntil: int64(sec.KeptUntil), Lines: sec.Lines})
		if err := put(item(m.id, itemNote, uint32(l)), c.Start, k, map[int][]byte{l: nc}); err != nil {
			return fmt.Errorf("meeting: file note: %w", err)
		}
	}
	// §7.9: the event log, with any erased voice already scrubbed, kept at
	// level 1 so that it does not outlive the schedule's last step (or the
	// room's limit).
	// It is kept in chunks of at most meetstore.MaxPlain bytes.
	var chunks [][]byte
	var lb []byte
	for _, o := range m.log {
		line := o.String() + "\n"
		if len(lb)+len(line) > meetstore.MaxPlain {
			chunks, lb = append(chunks, lb), nil
		}
		lb = append(lb, line...)
	}
	if len(lb) > 0 {
		chunks = append(chunks, lb)
	}
	for i, ch := range chunks {
		if err := put(item(m.id, itemLog, uint32(i)), c.End, mk, map[int][]byte{1: ch}); err != nil {
			return fmt.Errorf("meeting: file log: %w", err)
		}
	}
	m.log = nil
	return nil
}
