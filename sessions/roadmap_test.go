package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The roadmap session of §8.4, re-scripted from its table. The lines are
// stand-ins; the levels, filings and dates are the model's.
type roadmapLine struct {
	at    string // "t0-t1" for speech, "t" for a press
	who   string // label, or "press" / "hold" / "tick"
	text  string
	label string // a short name for assertions
}

var roadmap = []roadmapLine{
	{"4.0-7.5", "Alice", "Thanks for coming, let's go through the roadmap.", "alice-open"},
	{"7.8-12.0", "Bob", "The Q3 release slipped by two weeks.", "bob-slip"},
	{"12.3-16.5", "Charlie", "We could cut scope on the importer.", "charlie-scope"},
	{"16.8", "press", "", "press-off"},
	{"17.2-24.1", "Dana", "Keep my words to the gist for this part. The budget is tight.", "dana-gist"},
	{"30.7", "press", "", "press-1"},
	{"31.0", "press", "", "press-2"},
	{"31.5-36.0", "Dana", "We need the budget numbers by Friday.", "dana-budget"},
	{"36.5-41.0", "Alice", "Decision: the importer ships in Q4.", "alice-decision"},
	{"51.4-57.4", "Eve", "You can quote me on this one.", "eve-quote"},
	{"62.6", "hold", "", "hold"},
	{"67.6-71.2", "Bob", "Between us, the vendor is late again.", "bob-aside"},
	{"71.9-77.1", "Charlie", "Okay, back on the record. I propose we drop the vendor.", "charlie-proposal"},
	{"77.8-82.4", "Eve", "I like that plan, and I am happy to be named.", "eve-plan"},
	{"82.7", "press", "", "press-undo"},
	{"88.3", "press", "", "press-3"},
	{"88.6", "press", "", "press-4"},
	{"88.7-95.3", "Alice", "Keep my words to just the decisions from here. We ship in Q4.", "alice-decisions"},
	{"96.0-101.0", "Bob", "Agreed, I will own the release plan.", "bob-owner"},
	{"101.5-106.0", "Charlie", "I will draft the importer cut.", "charlie-draft"},
	{"111.7-117.3", "Dana", "Please leave me out of this last bit. I am unsure about the budget.", "dana-out"},
	{"717.3", "tick", "", "gap"},
}

type roadmapRun struct {
	e       *Engine
	out     map[string][]Outcome // by line label
	seqOf   map[string]int       // segment of each speech line
	textOf  map[uint64]string
	all     []Outcome
	closure *Closure
	stateAt map[string]State
}

// epoch is the simulator's clock start, 2026-10-14 00:00 UTC.
var epoch = At(time.Date(2026, 10, 14, 0, 0, 0, 0, time.UTC))

// rel is t as seconds since epoch ("61.0" is epoch + 61 s).
func rel(s string) Time { return epoch + sec(s) }

func runRoadmap(t *testing.T) *roadmapRun {
	t.Helper()
	r := &roadmapRun{e: newEngine(t, goldfish(t)), out: map[string][]Outcome{}, seqOf: map[string]int{},
		textOf: map[uint64]string{}, stateAt: map[string]State{}}
	for i, l := range roadmap {
		var ev Event
		switch l.who {
		case "press":
			ev = Press{At: epoch + sec(l.at)}
		case "hold":
			ev = Press{At: epoch + sec(l.at), Held: 2 * time.Second}
		case "tick":
			ev = Tick{At: epoch + sec(l.at)}
		default:
			a, b, _ := strings.Cut(l.at, "-")
			ev = Speech{Label: l.who, Start: epoch + sec(a), End: epoch + sec(b), Confidence: 950, Text: l.text, Ref: uint64(i)}
			r.textOf[uint64(i)] = l.text
		}
		out := step(t, r.e, ev)
		r.out[l.label] = out
		r.all = append(r.all, out...)
		if f := find(out, Filed); f != nil {
			r.seqOf[l.label] = f.Segment.Seq
		}
		if c := find(out, SessionEnded); c != nil {
			r.closure = c.Closure
		}
		r.stateAt[l.label] = r.e.State()
	}
	return r
}

// stamp returns the final stamped level of a line's segment.
func (r *roadmapRun) stamp(t *testing.T, label string) Level {
	t.Helper()
	seq := r.seqOf[label]
	return r.closure.Records[seq].Stamped
}

func TestRoadmapScenario(t *testing.T) {
	r := runRoadmap(t)
	st := func(label string) State { return r.stateAt[label] }
	filed := func(label string) *Segment {
		t.Helper()
		f := find(r.out[label], Filed)
		if f == nil {
			t.Fatalf("%s: not filed", label)
		}
		return f.Segment
	}
	decided := func(label string) *Outcome {
		t.Helper()
		d := find(r.out[label], Decided)
		if d == nil {
			t.Fatalf("%s: no intent decided", label)
		}
		return d
	}

	// 4–16.5: Alice, Bob, Charlie speak; filed at 3.
	for _, l := range []string{"alice-open", "bob-slip", "charlie-scope"} {
		if s := filed(l); s.Stamped != 3 || s.Held != Unset {
			t.Errorf("%s filed at %d/%d, want 3", l, s.Stamped, s.Held)
		}
	}
	if ids := []string{filed("alice-open").Voice, filed("bob-slip").Voice, filed("charlie-scope").Voice}; strings.Join(ids, ",") != "v1,v2,v3" {
		t.Errorf("pseudonyms %v, want v1,v2,v3 by first speech", ids)
	}
	// 16.8: eye press; room off (c = 0).
	if d := decided("press-off"); d.Intent.Kind != Lower || d.Intent.Level != 0 || d.Result != Applied || st("press-off").Ceiling != 0 {
		t.Errorf("press at 16.8: %v, ceiling %d", d, st("press-off").Ceiling)
	}
	// 17.2–24.1: Dana keeps her words to the gist; the line is filed at 0.
	if s := filed("dana-gist"); s.Stamped != 0 {
		t.Errorf("Dana's line filed at %d, want 0", s.Stamped)
	}
	if v := st("dana-gist").Voices[3]; v.Request != 2 {
		t.Errorf("r(Dana) = %d, want 2", v.Request)
	}
	// 31.0: double press; resume, provisional until 61.0.
	if find(r.out["press-1"], StillOff) == nil {
		t.Errorf("the first press of the double press should find the room still off")
	}
	if d := decided("press-2"); d.Intent.Kind != Resume || d.Result != Provisional {
		t.Errorf("double press: %v", d)
	}
	if w := find(r.out["press-2"], WindowOpened); w == nil || w.Until != rel("61.0") {
		t.Errorf("window: %v, want until 61.0", w)
	}
	// 51.4–57.4: Eve may be quoted; the line stays at 3 (held at 0 while
	// the resume is provisional).
	if s := filed("eve-quote"); s.Stamped != 3 || s.Held != 0 {
		t.Errorf("Eve's line filed at %d/%d, want 3 held 0", s.Stamped, s.Held)
	}
	if v := st("eve-quote").Voices[4]; v.Request != 4 || v.Applied != 4 {
		t.Errorf("r(Eve) = %d, A(Eve) = %d, want 4, 4", v.Request, v.Applied)
	}
	if r.stamp(t, "eve-quote") != 3 {
		t.Errorf("Eve's line ends at %d, want 3", r.stamp(t, "eve-quote"))
	}
	// 61.0: the window closes, confirmed (reported with the next event,
	// dated 61.0). 62.6: hold; room off, battery shown.
	c := find(r.out["hold"], WindowConfirmed)
	if c == nil || c.At != rel("61.0") {
		t.Errorf("confirmation: %v, want dated 61.0", c)
	}
	if find(r.out["hold"], BatteryShown) == nil || st("hold").Ceiling != 0 {
		t.Errorf("hold: want battery and room off")
	}
	// 67.6–71.2: Bob's aside, filed at 0.
	if s := filed("bob-aside"); s.Stamped != 0 {
		t.Errorf("Bob's aside filed at %d", s.Stamped)
	}
	// 71.9–77.1: Charlie's resume, provisional until 107.1; the line at 0.
	if d := decided("charlie-proposal"); d.Intent.Kind != Resume || d.Result != Provisional {
		t.Errorf("Charlie's resume: %v", d)
	}
	if w := st("charlie-proposal").Window; w == nil || w.Until != rel("107.1") {
		t.Errorf("window after Charlie: %+v, want until 107.1", w)
	}
	if s := filed("charlie-proposal"); s.Stamped != 0 {
		t.Errorf("Charlie's line filed at %d, want 0", s.Stamped)
	}
	// 77.8–82.4: Eve filed at 4, held at 0.
	if s := filed("eve-plan"); s.Stamped != 4 || s.Held != 0 {
		t.Errorf("Eve's line filed at %d/%d, want 4 held 0", s.Stamped, s.Held)
	}
	// 82.7: a press inside the window; resume undone; Eve's line restamped
	// 0; room off.
	if find(r.out["press-undo"], WindowUndone) == nil {
		t.Errorf("press at 82.7 did not undo the resume")
	}
	var restamped bool
	for _, o := range r.out["press-undo"] {
		if o.Kind == Restamped && o.Segment.Seq == r.seqOf["eve-plan"] && o.Segment.Stamped == 0 {
			restamped = true
		}
	}
	if !restamped || st("press-undo").Ceiling != 0 || st("press-undo").Window != nil {
		t.Errorf("after 82.7: restamped=%v state %+v", restamped, st("press-undo"))
	}
	// 88.6: double press; resume until 118.6.
	if w := st("press-4").Window; w == nil || w.Until != rel("118.6") {
		t.Errorf("window after 88.6: %+v", w)
	}
	// 88.7–95.3: r(Alice) = 1, and the worked example of §4.6 at 95.3 s:
	// r = (1, ⊥, ⊥, 2, 4), δ = 3, c = ⊤, κ = ⊤, so A = (1, 3, 3, 2, 4).
	s95 := st("alice-decisions")
	wantR := []Level{1, Unset, Unset, 2, 4}
	wantA := []Level{1, 3, 3, 2, 4}
	for i, v := range s95.Voices {
		if v.Request != wantR[i] || v.Applied != wantA[i] || v.Cap != Top {
			t.Errorf("at 95.3 %s: r=%d A=%d κ=%d, want r=%d A=%d κ=⊤", v.ID, v.Request, v.Applied, v.Cap, wantR[i], wantA[i])
		}
	}
	if s95.Default != 3 || s95.Ceiling != Top || len(s95.Voices) != 5 {
		t.Errorf("at 95.3: δ=%d c=%d voices=%d", s95.Default, s95.Ceiling, len(s95.Voices))
	}
	// 111.7–117.3: r(Dana) = 0.
	if v := st("dana-out").Voices[3]; v.Request != 0 {
		t.Errorf("r(Dana) = %d, want 0", v.Request)
	}
	// 118.6: the window closes; 717.3: 600 s of silence end the session.
	g := r.out["gap"]
	if c := find(g, WindowConfirmed); c == nil || c.At != rel("118.6") {
		t.Errorf("confirmation: %v, want 118.6", c)
	}
	if e := find(g, SessionEnded); e == nil || e.At != rel("717.3") {
		t.Errorf("end: %v, want 717.3", e)
	}

	// Final stamps.
	want := map[string]Level{"alice-open": 3, "bob-slip": 3, "charlie-scope": 3, "dana-gist": 0,
		"dana-budget": 2, "alice-decision": 3, "eve-quote": 3, "bob-aside": 0, "charlie-proposal": 0,
		"eve-plan": 0, "alice-decisions": 1, "bob-owner": 3, "charlie-draft": 3, "dana-out": 0}
	for l, w := range want {
		if got := r.stamp(t, l); got != w {
			t.Errorf("%s stamped %d, want %d", l, got, w)
		}
	}
}

func TestRoadmapNote(t *testing.T) {
	r := runRoadmap(t)
	p := goldfish(t)
	sum := func(l Level, recs []Record) []string {
		var lines []string
		for _, rec := range recs {
			if l >= Attributed {
				lines = append(lines, rec.Voice+": "+r.textOf[rec.Ref])
			} else {
				lines = append(lines, r.textOf[rec.Ref])
			}
		}
		return lines
	}
	n, err := WriteNote(p, r.closure, sum)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "roadmap-note.md")
	if *update {
		if err := os.WriteFile(golden, []byte(n.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantText, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if n.Text != string(wantText) {
		t.Errorf("note differs from %s (run with -update):\n%s", golden, n.Text)
	}
	dates := map[Level]string{Outcomes: "2027-10-14", Gist: "2026-11-13", Attributed: "2026-10-17"}
	for _, sec := range n.Sections {
		if got := sec.KeptUntil.UTC().Format(time.DateOnly); got != dates[sec.Level] {
			t.Errorf("%s kept until %s, want %s", sec.Title, got, dates[sec.Level])
		}
	}
	if len(n.Sections) != 3 || len(n.Dropped) != 0 {
		t.Fatalf("sections %d dropped %v", len(n.Sections), n.Dropped)
	}
	// Bob's aside is absent; Charlie's proposal is lost.
	for _, gone := range []string{"vendor is late", "drop the vendor", "happy to be named", "unsure about the budget"} {
		if strings.Contains(n.Text, gone) {
			t.Errorf("the note keeps %q", gone)
		}
	}
	// Dana never appears in Attributed, but her budget line is in the gist.
	attributed := strings.Join(n.Sections[2].Lines, "\n")
	if strings.Contains(attributed, "v4") || strings.Contains(attributed, "budget") {
		t.Errorf("Dana in Attributed:\n%s", attributed)
	}
	if !strings.Contains(strings.Join(n.Sections[1].Lines, "\n"), "budget numbers") {
		t.Errorf("Dana's budget line missing from the gist")
	}
	// Alice's "from here" line is kept only as an outcome.
	if !strings.Contains(strings.Join(n.Sections[0].Lines, "\n"), "We ship in Q4") ||
		strings.Contains(strings.Join(n.Sections[1].Lines, "\n"), "We ship in Q4") {
		t.Errorf("Alice's decisions-only line misplaced")
	}
	// The front matter counts voices and names none.
	if !strings.Contains(n.Text, "5 voices") {
		t.Errorf("front matter lacks the voice count")
	}
	for _, label := range []string{"Alice", "Bob", "Charlie", "Dana", "Eve"} {
		if strings.Contains(n.Text, label) {
			t.Errorf("the note contains the label %q", label)
		}
	}
}

func TestRoadmapTranscript(t *testing.T) {
	r := runRoadmap(t)
	// Times relative to the epoch, for a readable transcript.
	for i := range r.all {
		o := &r.all[i]
		o.At -= epoch
		if o.Until != 0 {
			o.Until -= epoch
		}
		if o.Segment != nil {
			u := *o.Segment
			u.Start, u.End = u.Start-epoch, u.End-epoch
			o.Segment = &u
		}
	}
	got := transcript(r.all)
	golden := filepath.Join("testdata", "roadmap.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("transcript differs from %s (run with -update):\n%s", golden, got)
	}
}
