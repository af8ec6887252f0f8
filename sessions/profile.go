package sessions

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed profiles/*.json
var profileFS embed.FS

// Errors returned when a profile is decoded or validated. The error wraps
// ErrProfile, so errors.Is(err, ErrProfile) holds for all of them.
var (
	ErrProfile        = errors.New("sessions: invalid profile")
	ErrProfileUnknown = errors.New("sessions: unknown profile")
)

// The extensions a profile may switch on.
const (
	ExtSideConversations = "side_conversations" // §4.5: group caps from the reply graph
	ExtClaiming          = "claiming"           // claim intents; not built, refused if on
)

// The values of Profile.RoomRaise.
const (
	RaiseByInvocation = "invocation" // a room raise must say an invocation word
	RaiseDisabled     = "disabled"   // room raises are ignored (room-raise-disabled)
)

// Step is one step of a retention schedule (Def 7.1): content younger than
// Age may be read at Level at most.
type Step struct {
	Age   time.Duration
	Level Level
}

// Profile is the parameter set of §1.2. Profiles are data: they are decoded
// from JSON with unknown keys refused, and validated before use. Obtain one
// with LoadProfile or ParseProfile; a Profile built by hand must pass
// Validate before New accepts it.
type Profile struct {
	Name                string
	DefaultLevel        Level         // δ₀
	MaxDefaultLevel     Level         // D̂
	MaxVoiceLevel       Level         // V̂
	ObjectionWindow     time.Duration // W
	SessionGap          time.Duration // G
	AttributionPermille Permille      // θ, in thousandths
	MaxParticipants     int           // N
	RoomRaise           string        // RaiseByInvocation or RoomRaiseDisabled
	Invocation          []string      // invocation words, lower case
	Locales             []string      // grammar locales, in the order they are tried
	Extensions          []string
	ReplyWindow         time.Duration // §4.5
	RepliesForGroup     int           // §4.5
	Retention           []Step        // S
	EyeDoublePress      time.Duration // the eye binding: double press
	EyeHold             time.Duration // the eye binding: hold for the battery
	NoteBudget          int           // bytes of the note (the 8 KB tag)
	NoteSections        []Level       // the levels that get a section in the note
}

// Has reports whether the profile switches extension ext on.
func (p *Profile) Has(ext string) bool { return slices.Contains(p.Extensions, ext) }

// LongestAge is u_k, the age after which nothing at all is readable.
func (p *Profile) LongestAge() time.Duration { return p.Retention[len(p.Retention)-1].Age }

// Profiles lists the names of the embedded profiles, sorted.
func Profiles() []string {
	entries, err := profileFS.ReadDir("profiles")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(names)
	return names
}

// LoadProfile returns the embedded profile with the given name
// ("goldfish-v01"), decoded and validated.
func LoadProfile(name string) (*Profile, error) {
	if strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("%w: %q", ErrProfileUnknown, name)
	}
	b, err := profileFS.ReadFile("profiles/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("%w: %q", ErrProfileUnknown, name)
	}
	p, err := ParseProfile(b)
	if err != nil {
		return nil, err
	}
	if p.Name != name {
		return nil, fmt.Errorf("%w: file %q names profile %q", ErrProfile, name, p.Name)
	}
	return p, nil
}

type profileJSON struct {
	Profile                      string     `json:"profile"`
	DefaultLevel                 *int       `json:"default_level"`
	MaxDefaultLevel              *int       `json:"max_default_level"`
	MaxVoiceLevel                *int       `json:"max_voice_level"`
	ObjectionWindow              string     `json:"objection_window"`
	SessionGap                   string     `json:"session_gap"`
	AttributionThresholdPermille *int       `json:"attribution_threshold_permille"`
	MaxParticipants              int        `json:"max_participants"`
	RoomRaise                    string     `json:"room_raise"`
	Invocation                   []string   `json:"invocation"`
	Locales                      []string   `json:"locales"`
	Extensions                   []string   `json:"extensions"`
	ReplyWindow                  string     `json:"reply_window"`
	RepliesForGroup              int        `json:"replies_for_group"`
	Retention                    []stepJSON `json:"retention"`
	Eye                          eyeJSON    `json:"eye"`
	Note                         noteJSON   `json:"note"`
}

type stepJSON struct {
	Age   string `json:"age"`
	Level *int   `json:"level"`
}

type eyeJSON struct {
	DoublePress string `json:"double_press"`
	Hold        string `json:"hold"`
}

type noteJSON struct {
	BudgetBytes int   `json:"budget_bytes"`
	Sections    []int `json:"sections"`
}

// ParseProfile decodes a profile from JSON and validates it. Unknown keys,
// missing keys, trailing data and out-of-range values are refused.
func ParseProfile(b []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var j profileJSON
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProfile, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the profile object", ErrProfile)
	}
	need := func(v *int, key string) (Level, error) {
		if v == nil {
			return 0, fmt.Errorf("%w: missing %q", ErrProfile, key)
		}
		if *v < int(Off) || *v > int(Top) {
			return 0, fmt.Errorf("%w: %s = %d is not a level", ErrProfile, key, *v)
		}
		return Level(*v), nil
	}
	var (
		p   Profile
		err error
	)
	p.Name = j.Profile
	if p.DefaultLevel, err = need(j.DefaultLevel, "default_level"); err != nil {
		return nil, err
	}
	if p.MaxDefaultLevel, err = need(j.MaxDefaultLevel, "max_default_level"); err != nil {
		return nil, err
	}
	if p.MaxVoiceLevel, err = need(j.MaxVoiceLevel, "max_voice_level"); err != nil {
		return nil, err
	}
	durs := []struct {
		dst *time.Duration
		key string
		v   string
	}{
		{&p.ObjectionWindow, "objection_window", j.ObjectionWindow},
		{&p.SessionGap, "session_gap", j.SessionGap},
		{&p.ReplyWindow, "reply_window", j.ReplyWindow},
		{&p.EyeDoublePress, "eye.double_press", j.Eye.DoublePress},
		{&p.EyeHold, "eye.hold", j.Eye.Hold},
	}
	for _, d := range durs {
		if *d.dst, err = ParseDuration(d.v); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrProfile, d.key, err)
		}
	}
	if j.AttributionThresholdPermille == nil {
		return nil, fmt.Errorf("%w: missing %q", ErrProfile, "attribution_threshold_permille")
	}
	if v := *j.AttributionThresholdPermille; v < 0 || v > int(Certain) {
		return nil, fmt.Errorf("%w: attribution_threshold_permille = %d is not in 0..1000", ErrProfile, v)
	}
	p.AttributionPermille = Permille(*j.AttributionThresholdPermille)
	p.MaxParticipants = j.MaxParticipants
	p.RoomRaise = j.RoomRaise
	p.Invocation = j.Invocation
	p.Locales = j.Locales
	p.Extensions = j.Extensions
	p.RepliesForGroup = j.RepliesForGroup
	for i, s := range j.Retention {
		age, err := ParseDuration(s.Age)
		if err != nil {
			return nil, fmt.Errorf("%w: retention[%d].age: %v", ErrProfile, i, err)
		}
		l, err := need(s.Level, fmt.Sprintf("retention[%d].level", i))
		if err != nil {
			return nil, err
		}
		p.Retention = append(p.Retention, Step{Age: age, Level: l})
	}
	p.NoteBudget = j.Note.BudgetBytes
	for _, l := range j.Note.Sections {
		p.NoteSections = append(p.NoteSections, Level(l))
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks the profile's invariants: levels in range and ordered
// (δ₀ ≤ D̂), caps in range, durations positive with W < G, a retention
// schedule with strictly increasing ages and strictly decreasing levels
// (Def 7.1), known locales and extensions, and a sane note.
func (p *Profile) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrProfile, fmt.Sprintf(format, a...))
	}
	if p.Name == "" {
		return bad("missing profile name")
	}
	for _, l := range []struct {
		key string
		v   Level
	}{{"default_level", p.DefaultLevel}, {"max_default_level", p.MaxDefaultLevel}, {"max_voice_level", p.MaxVoiceLevel}} {
		if !l.v.Valid() {
			return bad("%s = %d is not a level", l.key, l.v)
		}
	}
	if p.DefaultLevel > p.MaxDefaultLevel {
		return bad("default_level %d is above max_default_level %d", p.DefaultLevel, p.MaxDefaultLevel)
	}
	if p.ObjectionWindow <= 0 || p.SessionGap <= 0 || p.ReplyWindow <= 0 || p.EyeDoublePress <= 0 || p.EyeHold <= 0 {
		return bad("durations must be positive")
	}
	if p.ObjectionWindow >= p.SessionGap {
		return bad("objection_window %v must be shorter than session_gap %v", p.ObjectionWindow, p.SessionGap)
	}
	if p.AttributionPermille < 0 || p.AttributionPermille > Certain {
		return bad("attribution threshold %d is not in 0..1000", p.AttributionPermille)
	}
	if p.MaxParticipants < 1 || p.MaxParticipants > 1000 {
		return bad("max_participants = %d is not in 1..1000", p.MaxParticipants)
	}
	if p.RoomRaise != RaiseByInvocation && p.RoomRaise != RaiseDisabled {
		return bad("room_raise %q is neither %q nor %q", p.RoomRaise, RaiseByInvocation, RaiseDisabled)
	}
	if p.RoomRaise == RaiseByInvocation && len(p.Invocation) == 0 {
		return bad("room_raise %q needs at least one invocation word", p.RoomRaise)
	}
	for _, w := range p.Invocation {
		if w == "" || w != strings.ToLower(w) || strings.ContainsFunc(w, func(r rune) bool { return !isWordRune(r) }) {
			return bad("invocation word %q must be one lower-case word", w)
		}
	}
	if len(p.Locales) == 0 {
		return bad("no locales")
	}
	for i, l := range p.Locales {
		if _, ok := locales[l]; !ok {
			return bad("unknown locale %q", l)
		}
		if slices.Index(p.Locales, l) != i {
			return bad("locale %q listed twice", l)
		}
	}
	for i, e := range p.Extensions {
		switch e {
		case ExtSideConversations:
		case ExtClaiming:
			return bad("extension %q is not built", e)
		default:
			return bad("unknown extension %q", e)
		}
		if slices.Index(p.Extensions, e) != i {
			return bad("extension %q listed twice", e)
		}
	}
	if p.RepliesForGroup < 1 {
		return bad("replies_for_group = %d must be at least 1", p.RepliesForGroup)
	}
	if len(p.Retention) == 0 {
		return bad("empty retention schedule")
	}
	for i, s := range p.Retention {
		if s.Age <= 0 {
			return bad("retention[%d].age must be positive", i)
		}
		if !s.Level.Valid() {
			return bad("retention[%d].level = %d is not a level", i, s.Level)
		}
		if i > 0 && s.Age <= p.Retention[i-1].Age {
			return bad("retention ages must increase: step %d (%v) is not after step %d (%v)", i, s.Age, i-1, p.Retention[i-1].Age)
		}
		if i > 0 && s.Level >= p.Retention[i-1].Level {
			return bad("retention levels must decrease: step %d (%d) is not below step %d (%d)", i, s.Level, i-1, p.Retention[i-1].Level)
		}
	}
	if p.NoteBudget < 256 || p.NoteBudget > 1<<20 {
		return bad("note.budget_bytes = %d is not in 256..1048576", p.NoteBudget)
	}
	if len(p.NoteSections) == 0 {
		return bad("note.sections is empty")
	}
	for i, l := range p.NoteSections {
		if l < Outcomes || l > Top {
			return bad("note.sections[%d] = %d is not a level from 1 to 5", i, l)
		}
		if i > 0 && l <= p.NoteSections[i-1] {
			return bad("note.sections must increase")
		}
	}
	return nil
}

// ParseDuration reads a profile duration: a positive integer and a unit, one
// of ms, s, m (minutes), h, d (86 400 s), w (7 d), M (30 d) and Y (365 d),
// as in §1 ("in profiles, Y = 365 d and M = 30 d").
func ParseDuration(s string) (time.Duration, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return 0, fmt.Errorf("duration %q: want 1 to 9 digits and a unit", s)
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	var unit time.Duration
	switch s[i:] {
	case "ms":
		unit = time.Millisecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = Day
	case "w":
		unit = 7 * Day
	case "M":
		unit = 30 * Day
	case "Y":
		unit = 365 * Day
	default:
		return 0, fmt.Errorf("duration %q: unknown unit %q", s, s[i:])
	}
	if n == 0 {
		return 0, fmt.Errorf("duration %q: must be positive", s)
	}
	if n > int64(Forever/unit)-1 {
		return 0, fmt.Errorf("duration %q: too long", s)
	}
	return time.Duration(n) * unit, nil
}

// Day is 86 400 s (§1).
const Day = 24 * time.Hour
