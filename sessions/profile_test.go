package sessions

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Table 1.2 of the spec, against the embedded profile.
func TestGoldfishProfile(t *testing.T) {
	p := goldfish(t)
	checks := []struct {
		name      string
		got, want any
	}{
		{"δ₀", p.DefaultLevel, Level(3)},
		{"D̂", p.MaxDefaultLevel, Level(4)},
		{"V̂", p.MaxVoiceLevel, Level(4)},
		{"W", p.ObjectionWindow, 30 * time.Second},
		{"G", p.SessionGap, 600 * time.Second},
		{"θ", p.AttributionPermille, Permille(800)},
		{"N", p.MaxParticipants, 10},
		{"room_raise", p.RoomRaise, RaiseByInvocation},
		{"invocation", strings.Join(p.Invocation, ","), "goldfish"},
		{"locales", strings.Join(p.Locales, ","), "en,es"},
		{"extensions", strings.Join(p.Extensions, ","), "side_conversations"},
		{"reply_window", p.ReplyWindow, 6 * time.Second},
		{"replies_for_group", p.RepliesForGroup, 2},
		{"S", p.Retention, []Step{{3 * Day, 5}, {30 * Day, 2}, {365 * Day, 1}}},
		{"eye double press", p.EyeDoublePress, 600 * time.Millisecond},
		{"eye hold", p.EyeHold, 2 * time.Second},
		{"note budget", p.NoteBudget, 8192},
	}
	for _, c := range checks {
		if !equalAny(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := Profiles(); len(got) == 0 || got[0] != "goldfish-v01" {
		t.Errorf("Profiles() = %v", got)
	}
}

func equalAny(a, b any) bool {
	if sa, ok := a.([]Step); ok {
		sb := b.([]Step)
		if len(sa) != len(sb) {
			return false
		}
		for i := range sa {
			if sa[i] != sb[i] {
				return false
			}
		}
		return true
	}
	return a == b
}

const validProfile = `{
  "profile": "test", "default_level": 3, "max_default_level": 4, "max_voice_level": 4,
  "objection_window": "30s", "session_gap": "600s", "attribution_threshold_permille": 800,
  "max_participants": 10, "room_raise": "invocation", "invocation": ["goldfish"],
  "locales": ["en"], "extensions": [], "reply_window": "6s", "replies_for_group": 2,
  "retention": [{"age": "3d", "level": 5}, {"age": "1M", "level": 2}, {"age": "1Y", "level": 1}],
  "eye": {"double_press": "600ms", "hold": "2s"}, "note": {"budget_bytes": 8192, "sections": [1, 2, 3]}
}`

func TestParseProfileRefuses(t *testing.T) {
	if p, err := ParseProfile([]byte(validProfile)); err != nil {
		t.Fatalf("valid profile refused: %v", err)
	} else if p.Retention[1].Age != 30*Day || p.Retention[2].Age != 365*Day {
		t.Errorf("M and Y: %v", p.Retention)
	}
	bad := []struct{ name, from, to string }{
		{"unknown key", `"profile": "test",`, `"profile": "test", "colour": "red",`},
		{"unknown nested key", `"hold": "2s"`, `"hold": "2s", "blink": "1s"`},
		{"missing level", `"default_level": 3,`, ``},
		{"level out of range", `"max_voice_level": 4`, `"max_voice_level": 6`},
		{"default above max", `"default_level": 3`, `"default_level": 5`},
		{"ages not increasing", `{"age": "1M", "level": 2}`, `{"age": "2d", "level": 2}`},
		{"levels not decreasing", `{"age": "1M", "level": 2}`, `{"age": "1M", "level": 5}`},
		{"equal levels", `{"age": "1Y", "level": 1}`, `{"age": "1Y", "level": 2}`},
		{"empty retention", `"retention": [{"age": "3d", "level": 5}, {"age": "1M", "level": 2}, {"age": "1Y", "level": 1}]`, `"retention": []`},
		{"zero duration", `"30s"`, `"0s"`},
		{"float duration", `"30s"`, `"0.5m"`},
		{"unknown unit", `"30s"`, `"30 fortnights"`},
		{"window not under gap", `"30s"`, `"700s"`},
		{"threshold above 1000", `800`, `1200`},
		{"float threshold", `800`, `0.8`},
		{"no participants", `"max_participants": 10`, `"max_participants": 0`},
		{"room raise mode", `"room_raise": "invocation"`, `"room_raise": "always"`},
		{"no invocation", `["goldfish"]`, `[]`},
		{"invocation two words", `["goldfish"]`, `["gold fish"]`},
		{"unknown locale", `["en"]`, `["fr"]`},
		{"repeated locale", `["en"]`, `["en", "en"]`},
		{"unknown extension", `"extensions": []`, `"extensions": ["telepathy"]`},
		{"claiming not built", `"extensions": []`, `"extensions": ["claiming"]`},
		{"tiny note", `8192`, `10`},
		{"note section 0", `[1, 2, 3]`, `[0, 1]`},
		{"trailing data", `"sections": [1, 2, 3]}`, `"sections": [1, 2, 3]}} {}`},
		{"not an object", validProfile, `[]`},
	}
	for _, b := range bad {
		src := strings.Replace(validProfile, b.from, b.to, 1)
		if b.from == validProfile {
			src = b.to
		}
		if src == validProfile {
			t.Fatalf("%s: replacement did not apply", b.name)
		}
		if _, err := ParseProfile([]byte(src)); !errors.Is(err, ErrProfile) {
			t.Errorf("%s: err = %v, want ErrProfile", b.name, err)
		}
	}
}

func TestLoadProfileUnknown(t *testing.T) {
	for _, name := range []string{"", "nope", "../profile", "goldfish-v01.json"} {
		if _, err := LoadProfile(name); !errors.Is(err, ErrProfileUnknown) {
			t.Errorf("LoadProfile(%q): %v", name, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{"600ms": 600 * time.Millisecond, "6s": 6 * time.Second, "2m": 2 * time.Minute,
		"1h": time.Hour, "3d": 3 * Day, "1w": 7 * Day, "1M": 30 * Day, "1Y": 365 * Day}
	for s, want := range good {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "s", "-1s", "1", "1.5s", "1S", "9999999999Y", "999999999Y", " 1s"} {
		if _, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) accepted", s)
		}
	}
}

func TestNewValidatesProfile(t *testing.T) {
	p := *goldfish(t)
	p.Retention = []Step{{30 * Day, 2}, {3 * Day, 5}}
	if _, err := New(Options{Profile: &p, Entropy: DeterministicEntropy(0)}); !errors.Is(err, ErrProfile) {
		t.Errorf("New accepted an invalid profile: %v", err)
	}
	if _, err := New(Options{}); !errors.Is(err, ErrNoEntropy) {
		t.Errorf("New without entropy: %v", err)
	}
}
