package sessions

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A vector file holds cases, each an event script with expected outcomes
// and levels. The vectors are ours (provisional: true on every case); the
// event script is a small language, one event a line:
//
//	say <label> <t0> <t1> [q=<permille>] [at=<filed>] [ref=<n>] [| text]
//	press <t> [held=<seconds>]
//	ask <t> [label=<label>] <kind> <scope> [level=<n>] [span=<dur>] [all] [addr] [src=<source>] [q=<permille>]
//	tick <t>
//	end <t>
//
// Times are seconds with up to three decimals; durations are profile
// durations ("5m", "7d").
type vectorFile struct {
	Description string       `json:"description"`
	Cases       []vectorCase `json:"cases"`
}

type vectorCase struct {
	Name        string         `json:"name"`
	Provisional bool           `json:"provisional"`
	Covers      []string       `json:"covers"`
	Note        string         `json:"note,omitempty"`
	Profile     map[string]any `json:"profile,omitempty"`
	Events      []string       `json:"events"`
	Expect      vectorExpect   `json:"expect"`
}

type vectorExpect struct {
	Results  []string          `json:"results,omitempty"`
	Applied  map[string]Level  `json:"applied,omitempty"`
	Requests map[string]*Level `json:"requests,omitempty"`
	Stamps   []string          `json:"stamps,omitempty"`
	State    *struct {
		Default   *Level  `json:"default,omitempty"`
		Ceiling   *Level  `json:"ceiling,omitempty"`
		Window    *bool   `json:"window,omitempty"`
		RoomLimit *string `json:"room_limit,omitempty"`
		OverCap   *int    `json:"over_cap,omitempty"`
		Split     *bool   `json:"split,omitempty"`
		Open      *bool   `json:"open,omitempty"`
	} `json:"state,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
	Caps     map[string]Level  `json:"caps,omitempty"`
	Voices   []string          `json:"voices,omitempty"`
	Readable []struct {
		At     string  `json:"at"`
		Levels []Level `json:"levels"`
	} `json:"readable,omitempty"`
	Usable *struct {
		At       string `json:"at"`
		Level    Level  `json:"level"`
		Segments []int  `json:"segments"`
	} `json:"usable,omitempty"`
	Has       []string `json:"has,omitempty"`
	Lacks     []string `json:"lacks,omitempty"`
	Sessions  *int     `json:"sessions,omitempty"`
	LogVoices []string `json:"log_voices,omitempty"`
	Forgotten []string `json:"forgotten,omitempty"`
	Closure   *struct {
		Records int      `json:"records"`
		Voices  int      `json:"voices"`
		Limits  []string `json:"limits,omitempty"`
	} `json:"closure,omitempty"`
}

func TestVectors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "vectors", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	covered := map[string]int{}
	names := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var vf vectorFile
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&vf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range vf.Cases {
			total++
			if c.Name == "" || names[c.Name] {
				t.Errorf("%s: empty or repeated case name %q", f, c.Name)
			}
			names[c.Name] = true
			if !c.Provisional {
				t.Errorf("%s: %q: our own vectors must say provisional: true", f, c.Name)
			}
			if len(c.Covers) == 0 {
				t.Errorf("%s: %q covers no invariant", f, c.Name)
			}
			for _, i := range c.Covers {
				covered[i]++
			}
			t.Run(filepath.Base(f)+"/"+c.Name, func(t *testing.T) { runVector(t, c) })
		}
	}
	if total < 60 {
		t.Errorf("%d vectors, want at least 60", total)
	}
	for i := 1; i <= 12; i++ {
		if covered["I"+strconv.Itoa(i)] == 0 {
			t.Errorf("no vector covers I%d", i)
		}
	}
}

func vectorProfile(t *testing.T, over map[string]any) *Profile {
	t.Helper()
	if len(over) == 0 {
		return goldfish(t)
	}
	b, err := profileFS.ReadFile("profiles/goldfish-v01.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	maps.Copy(m, over)
	b, _ = json.Marshal(m)
	p, err := ParseProfile(b)
	if err != nil {
		t.Fatalf("profile override: %v", err)
	}
	return p
}

func parseEvent(line string) (Event, error) {
	text := ""
	if i := strings.Index(line, "|"); i >= 0 {
		line, text = line[:i], strings.TrimSpace(line[i+1:])
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return nil, fmt.Errorf("short event %q", line)
	}
	var at Time
	if f[0] != "say" {
		var err error
		if at, err = parseSec(f[1]); err != nil {
			return nil, err
		}
	}
	opts := map[string]string{}
	var words []string
	start := 2
	if f[0] == "say" {
		start = 4
	}
	for _, w := range f[min(start, len(f)):] {
		if k, v, ok := strings.Cut(w, "="); ok {
			opts[k] = v
		} else {
			words = append(words, w)
		}
	}
	q := Permille(1000)
	if v, ok := opts["q"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, err
		}
		q = Permille(n)
	}
	switch f[0] {
	case "say":
		if len(f) < 4 {
			return nil, fmt.Errorf("say needs label t0 t1: %q", line)
		}
		t0, err1 := parseSec(f[2])
		t1, err2 := parseSec(f[3])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad times in %q", line)
		}
		ref, _ := strconv.ParseUint(opts["ref"], 10, 64)
		var filed Time
		if v, ok := opts["at"]; ok {
			var err error
			if filed, err = parseSec(v); err != nil {
				return nil, err
			}
		}
		return Speech{Label: f[1], Start: t0, End: t1, Filed: filed, Confidence: q, Text: text, Ref: ref}, nil
	case "press":
		var held time.Duration
		if v, ok := opts["held"]; ok {
			h, err := parseSec(v)
			if err != nil {
				return nil, err
			}
			held = time.Duration(h) * time.Millisecond
		}
		return Press{At: at, Held: held}, nil
	case "tick":
		return Tick{At: at}, nil
	case "end":
		return End{At: at}, nil
	case "ask":
		in := Intent{Level: Unset, Source: FromUI}
		if len(words) < 2 {
			return nil, fmt.Errorf("ask needs kind and scope: %q", line)
		}
		for _, k := range Kinds() {
			if k.String() == words[0] {
				in.Kind = k
			}
		}
		switch words[1] {
		case "self":
			in.Scope = Self
		case "room":
			in.Scope = Room
		}
		for _, w := range words[2:] {
			switch w {
			case "all":
				in.All = true
			case "addr":
				in.Addressed = true
			default:
				return nil, fmt.Errorf("unknown word %q in %q", w, line)
			}
		}
		if v, ok := opts["level"]; ok {
			n, _ := strconv.Atoi(v)
			in.Level = Level(n)
		}
		if v, ok := opts["span"]; ok {
			d, err := ParseDuration(v)
			if err != nil {
				return nil, err
			}
			in.Span = d
		}
		if v, ok := opts["src"]; ok {
			for s := FromSpeech; s <= FromExchange; s++ {
				if s.String() == v {
					in.Source = s
				}
			}
		}
		return Request{At: at, Label: opts["label"], Confidence: q, Intent: in}, nil
	}
	return nil, fmt.Errorf("unknown event %q", f[0])
}

func runVector(t *testing.T, c vectorCase) {
	e := newEngine(t, vectorProfile(t, c.Profile))
	var all []Outcome
	var last *Closure
	labels := map[string]bool{}
	for _, line := range c.Events {
		ev, err := parseEvent(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if s, ok := ev.(Speech); ok {
			labels[s.Label] = true
		}
		if r, ok := ev.(Request); ok && r.Label != "" {
			labels[r.Label] = true
		}
		out, err := e.Step(ev)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		all = append(all, out...)
		if o := find(out, SessionEnded); o != nil {
			last = o.Closure
		}
	}
	tr := transcript(all)
	defer func() {
		if t.Failed() {
			t.Logf("transcript:\n%s", tr)
		}
	}()
	// No label ever leaves the engine (I10).
	assertNoLabels(t, labels, all, e)

	x := c.Expect
	st := e.State()
	if x.Results != nil {
		var got []string
		for _, o := range all {
			if o.Kind == Decided {
				s := o.Result.String()
				if o.Reason != NoReason {
					s += " " + o.Reason.String()
				}
				got = append(got, s)
			}
		}
		if !slices.Equal(got, x.Results) {
			t.Errorf("results %q, want %q", got, x.Results)
		}
	}
	for id, want := range x.Applied {
		got := st.Anyone
		if id != "*" {
			got = st.Applied(id)
		}
		if got != want {
			t.Errorf("A(%s) = %d, want %d", id, got, want)
		}
	}
	for id, want := range x.Requests {
		w := Unset
		if want != nil {
			w = *want
		}
		var got Level = -2
		for _, v := range st.Voices {
			if v.ID == id {
				got = v.Request
			}
		}
		if got != w {
			t.Errorf("r(%s) = %d, want %d", id, got, w)
		}
	}
	for id, want := range x.Caps {
		var got Level = -2
		for _, v := range st.Voices {
			if v.ID == id {
				got = v.Cap
			}
		}
		if got != want {
			t.Errorf("κ(%s) = %d, want %d", id, got, want)
		}
	}
	for id, want := range x.Limits {
		var got time.Duration = -1
		for _, v := range st.Voices {
			if v.ID == id {
				got = v.Limit
			}
		}
		if FormatAge(got) != want {
			t.Errorf("λ(%s) = %s, want %s", id, FormatAge(got), want)
		}
	}
	if x.Stamps != nil {
		var got []string
		if st.Open {
			for _, u := range st.Segments {
				s := strconv.Itoa(int(u.Stamped))
				if u.Held != Unset {
					s += "/" + strconv.Itoa(int(u.Held))
				}
				got = append(got, s)
			}
		} else if last != nil {
			for _, r := range last.Records {
				got = append(got, strconv.Itoa(int(r.Stamped)))
			}
		}
		if !slices.Equal(got, x.Stamps) {
			t.Errorf("stamps %q, want %q", got, x.Stamps)
		}
	}
	if s := x.State; s != nil {
		if s.Open != nil && st.Open != *s.Open {
			t.Errorf("open = %v", st.Open)
		}
		if s.Default != nil && st.Default != *s.Default {
			t.Errorf("δ = %d, want %d", st.Default, *s.Default)
		}
		if s.Ceiling != nil && st.Ceiling != *s.Ceiling {
			t.Errorf("c = %d, want %d", st.Ceiling, *s.Ceiling)
		}
		if s.Window != nil && (st.Window != nil) != *s.Window {
			t.Errorf("window open = %v, want %v", st.Window != nil, *s.Window)
		}
		if s.RoomLimit != nil && FormatAge(st.RoomLimit) != *s.RoomLimit {
			t.Errorf("ρ = %s, want %s", FormatAge(st.RoomLimit), *s.RoomLimit)
		}
		if s.OverCap != nil && st.OverCap != *s.OverCap {
			t.Errorf("|O| = %d, want %d", st.OverCap, *s.OverCap)
		}
		if s.Split != nil && st.Split != *s.Split {
			t.Errorf("split = %v, want %v (groups %v)", st.Split, *s.Split, st.Groups)
		}
	}
	if x.Voices != nil {
		var got []string
		for _, v := range st.Voices {
			got = append(got, v.ID)
		}
		if !slices.Equal(got, x.Voices) {
			t.Errorf("voices %v, want %v", got, x.Voices)
		}
	}
	for _, r := range x.Readable {
		now := sec(r.At)
		var got []Level
		if st.Open {
			for _, u := range st.Segments {
				got = append(got, e.Readable(u.Seq, now))
			}
		} else if last != nil {
			for _, rec := range last.Records {
				got = append(got, rec.Readable(e.p.Staircase(), now))
			}
		}
		if !slices.Equal(got, r.Levels) {
			t.Errorf("readable at %s: %v, want %v", r.At, got, r.Levels)
		}
	}
	if u := x.Usable; u != nil {
		var got []int
		for _, s := range e.Usable(u.Level, sec(u.At)) {
			got = append(got, s.Seq)
		}
		if !slices.Equal(got, u.Segments) {
			t.Errorf("usable at level %d: %v, want %v", u.Level, got, u.Segments)
		}
	}
	for _, h := range x.Has {
		if !strings.Contains(tr, h) {
			t.Errorf("transcript lacks %q", h)
		}
	}
	for _, h := range x.Lacks {
		if strings.Contains(tr, h) {
			t.Errorf("transcript has %q", h)
		}
	}
	if x.Sessions != nil {
		n := strings.Count(tr, " session-started ")
		if n != *x.Sessions {
			t.Errorf("%d sessions, want %d", n, *x.Sessions)
		}
	}
	if x.LogVoices != nil {
		seen := map[string]bool{}
		for _, o := range e.Log() {
			if o.Voice != "" {
				seen[o.Voice] = true
			}
			if o.Segment != nil && o.Segment.Voice != "" {
				seen[o.Segment.Voice] = true
			}
		}
		got := slices.Sorted(maps.Keys(seen))
		if !slices.Equal(got, x.LogVoices) {
			t.Errorf("log voices %v, want %v", got, x.LogVoices)
		}
	}
	if x.Forgotten != nil {
		var got []string
		for _, f := range st.Forgotten {
			who := f.Voice
			if who == "" {
				who = "everyone"
			}
			got = append(got, fmt.Sprintf("%s-%s %s", f.From.Seconds(), f.To.Seconds(), who))
		}
		if !slices.Equal(got, x.Forgotten) {
			t.Errorf("forgotten %q, want %q", got, x.Forgotten)
		}
	}
	if c := x.Closure; c != nil {
		if last == nil {
			t.Fatalf("no session ended")
		}
		if len(last.Records) != c.Records || last.Voices != c.Voices {
			t.Errorf("closure: %d records, %d voices; want %d, %d", len(last.Records), last.Voices, c.Records, c.Voices)
		}
		if c.Limits != nil {
			var got []string
			for _, r := range last.Records {
				got = append(got, FormatAge(r.Limit))
			}
			if !slices.Equal(got, c.Limits) {
				t.Errorf("closure limits %v, want %v", got, c.Limits)
			}
		}
	}
}

// assertNoLabels searches every output of the engine for the labels it was
// given: outcomes, their transcript and JSON, the state and the log.
func assertNoLabels(t *testing.T, labels map[string]bool, out []Outcome, e *Engine) {
	t.Helper()
	var blobs []string
	for _, o := range out {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, string(b), o.String())
	}
	b, _ := json.Marshal(e.State())
	blobs = append(blobs, string(b), fmt.Sprintf("%+v", e.State()))
	b, _ = json.Marshal(e.Log())
	blobs = append(blobs, string(b))
	for l := range labels {
		for _, s := range blobs {
			if strings.Contains(s, l) {
				t.Errorf("label %q leaked: %.200s", l, s)
			}
		}
	}
}
