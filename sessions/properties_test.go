package sessions

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// phrases mixes every kind of intent, in both locales, with plain speech.
var phrases = []string{
	"", "", "", "I think we should ship.", "Agreed.", "Let's move on.",
	"No.", "Wait", "Erase me.", "Scratch that.", "Forget what I said in the last two minutes.",
	"Delete the last minute.", "Leave me out.", "Off the record.", "Keep my words to just the decisions.",
	"Just the decisions.", "Keep my words to the gist.", "No names.", "Don't quote me.", "No quotes.",
	"Keep my words for a day.", "Keep this for a week.", "You can quote me.", "Back on the record.",
	"Goldfish, word for word.", "Word for word.", "Goldfish, word for word, but no names.",
	"Déjame fuera.", "Volvemos a grabar.", "Goldfish, palabra por palabra.", "Borra eso.",
}

type script struct {
	labels []string
	events []Event
}

// genScript draws a random session script: speech by a few voices (some
// unsure), presses (some double), requests from other sources, ticks, gaps
// and ends, in non-decreasing time.
func genScript(t *rapid.T, maxEvents int) script {
	nLabels := rapid.IntRange(1, 6).Draw(t, "labels")
	var labels []string
	for i := range nLabels {
		labels = append(labels, fmt.Sprintf("lbl%c%s", 'a'+i, rapid.StringMatching(`[qxz]{6}`).Draw(t, "label")))
	}
	n := rapid.IntRange(1, maxEvents).Draw(t, "events")
	now := Time(100_000) // Speech.Filed 0 means End, so keep clear of 0
	var evs []Event
	for range n {
		now += Time(rapid.IntRange(0, 8000).Draw(t, "dt"))
		if rapid.IntRange(0, 40).Draw(t, "gap") == 0 {
			now += Time(rapid.IntRange(590_000, 700_000).Draw(t, "silence"))
		}
		switch k := rapid.IntRange(0, 19).Draw(t, "kind"); {
		case k < 12:
			dur := Time(rapid.IntRange(0, 12000).Draw(t, "len"))
			q := Permille(rapid.SampledFrom([]int{1000, 950, 800, 799, 500, 0}).Draw(t, "q"))
			sp := Speech{Label: rapid.SampledFrom(labels).Draw(t, "who"), Start: now - dur, End: now,
				Confidence: q, Text: rapid.SampledFrom(phrases).Draw(t, "text")}
			if rapid.IntRange(0, 9).Draw(t, "late") == 0 {
				sp.Start, sp.End = now-dur-3000, now-3000
				sp.Filed = now
			}
			evs = append(evs, sp)
		case k < 15:
			evs = append(evs, Press{At: now, Held: time.Duration(rapid.SampledFrom([]int{0, 0, 2000}).Draw(t, "held")) * time.Millisecond})
			if rapid.Bool().Draw(t, "double") {
				now += Time(rapid.IntRange(100, 700).Draw(t, "dd"))
				evs = append(evs, Press{At: now})
			}
		case k < 17:
			in := Intent{Kind: rapid.SampledFrom(Kinds()).Draw(t, "ikind"),
				Scope:  rapid.SampledFrom([]Scope{Self, Room}).Draw(t, "scope"),
				Level:  Level(rapid.IntRange(0, 5).Draw(t, "level")),
				Span:   time.Duration(rapid.IntRange(1, 600).Draw(t, "span")) * time.Second,
				All:    rapid.IntRange(0, 9).Draw(t, "all") == 0,
				Source: rapid.SampledFrom([]Source{FromUI, FromPreference, FromExchange, FromSpeech}).Draw(t, "src"),
			}
			in.Addressed = rapid.Bool().Draw(t, "addr")
			label := ""
			if rapid.Bool().Draw(t, "labelled") {
				label = rapid.SampledFrom(labels).Draw(t, "rlabel")
			}
			evs = append(evs, Request{At: now, Label: label, Confidence: Permille(rapid.SampledFrom([]int{1000, 500}).Draw(t, "rq")), Intent: in})
		case k < 19:
			evs = append(evs, Tick{At: now})
		default:
			evs = append(evs, End{At: now})
		}
	}
	return script{labels: labels, events: evs}
}

func genProfile(t *rapid.T) *Profile {
	p, err := LoadProfile("goldfish-v01")
	if err != nil {
		t.Fatal(err)
	}
	p.MaxParticipants = rapid.IntRange(1, 10).Draw(t, "N")
	if rapid.Bool().Draw(t, "noSide") {
		p.Extensions = nil
	}
	return p
}

func runScript(t *rapid.T, p *Profile, sc script) (*Engine, [][]Outcome, []State) {
	e, err := New(Options{Profile: p, Entropy: DeterministicEntropy(0)})
	if err != nil {
		t.Fatal(err)
	}
	var outs [][]Outcome
	var states []State
	for _, ev := range sc.events {
		out, err := e.Step(ev)
		if err != nil {
			t.Fatalf("step %#v: %v", ev, err)
		}
		outs = append(outs, out)
		states = append(states, e.State())
	}
	return e, outs, states
}

// Replaying the same events gives the same outcomes and state.
func TestPropReplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProfile(t)
		sc := genScript(t, 60)
		e1, o1, s1 := runScript(t, p, sc)
		e2, o2, s2 := runScript(t, p, sc)
		if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(s1, s2) || !reflect.DeepEqual(e1.Log(), e2.Log()) {
			t.Fatalf("two replays differ")
		}
	})
}

// sameSessionSteps calls f for every step that stays within one session.
func sameSessionSteps(outs [][]Outcome, states []State, f func(i int, before, after State, out []Outcome)) {
	for i := 1; i < len(states); i++ {
		before, after := states[i-1], states[i]
		if before.Open && after.Open && before.Session == after.Session {
			f(i, before, after, outs[i])
		}
	}
}

func provisionalIn(out []Outcome) bool {
	for _, o := range out {
		if o.Kind == Decided && o.Result == Provisional {
			return true
		}
	}
	return false
}

// Thm 4.3: every transition except self raise, room raise and room resume
// only lowers. δ and the ceiling rise only by a provisional room raise or
// resume; limits and stamped levels never rise.
func TestPropOnlyMinima(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, outs, states := runScript(t, genProfile(t), genScript(t, 60))
		sameSessionSteps(outs, states, func(i int, before, after State, out []Outcome) {
			provisional := provisionalIn(out)
			if after.Ceiling > before.Ceiling && !provisional {
				t.Fatalf("step %d: the ceiling rose without a provisional resume", i)
			}
			if after.Default > before.Default && !provisional {
				t.Fatalf("step %d: δ rose without a provisional raise", i)
			}
			if after.RoomLimit > before.RoomLimit {
				t.Fatalf("step %d: ρ rose", i)
			}
			for j, v := range before.Voices {
				w := after.Voices[j]
				if minDur(w.Limit, after.RoomLimit) > minDur(v.Limit, before.RoomLimit) {
					t.Fatalf("step %d: λ*(%s) rose", i, v.ID)
				}
				if w.Cap > v.Cap && !provisional {
					t.Fatalf("step %d: κ(%s) rose without a provisional resume", i, v.ID)
				}
			}
			for j, u := range before.Segments {
				if after.Segments[j].Stamped > u.Stamped {
					t.Fatalf("step %d: segment %d rose from %d to %d", i, j, u.Stamped, after.Segments[j].Stamped)
				}
			}
		})
	})
}

// SPEC §6.4: nobody raises anyone else. A voice's applied level rises only
// by its own raise or resume, or provisionally by the room, under a veto.
func TestPropNobodyRaisesAnyoneElse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, outs, states := runScript(t, genProfile(t), genScript(t, 60))
		sameSessionSteps(outs, states, func(i int, before, after State, out []Outcome) {
			self := map[string]bool{}
			for _, o := range out {
				if o.Kind == Decided && o.Result == Applied && o.Intent.Scope == Self && (o.Intent.Kind == Raise || o.Intent.Kind == Resume) {
					self[o.Voice] = true
				}
			}
			provisional := provisionalIn(out)
			for _, v := range before.Voices {
				if a := after.Applied(v.ID); a > v.Applied && !provisional && !self[v.ID] {
					t.Fatalf("step %d raised %s from %d to %d without its own raise or a provisional room raise:\n%s",
						i, v.ID, v.Applied, a, transcript(out))
				}
			}
		})
	})
}

// Def 3.6: the same utterance from an unsure speaker never leaves anything
// higher than from a sure one.
func TestPropUncertaintyFallsTowardLess(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProfile(t)
		sc := genScript(t, 30)
		last := sc.events[len(sc.events)-1]
		at := last.when()
		sp := Speech{Label: rapid.SampledFrom(sc.labels).Draw(t, "who"), Start: at, End: at + 1000,
			Text: rapid.SampledFrom(phrases).Draw(t, "text")}
		sure, unsure := sp, sp
		sure.Confidence = Permille(rapid.IntRange(int(p.AttributionPermille), 1000).Draw(t, "qs"))
		unsure.Confidence = Permille(rapid.IntRange(0, int(p.AttributionPermille)-1).Draw(t, "qu"))
		es, _, _ := runScript(t, p, script{labels: sc.labels, events: append(append([]Event{}, sc.events...), sure)})
		eu, _, _ := runScript(t, p, script{labels: sc.labels, events: append(append([]Event{}, sc.events...), unsure)})
		a, b := eu.State(), es.State()
		if a.Session != b.Session || len(a.Voices) != len(b.Voices) || len(a.Segments) != len(b.Segments) {
			t.Fatalf("the two runs diverged in shape")
		}
		if a.Default > b.Default || a.Ceiling > b.Ceiling || a.RoomLimit > b.RoomLimit || a.Anyone > b.Anyone {
			t.Fatalf("unsure left the room higher: %+v vs %+v", a, b)
		}
		for i := range a.Voices {
			if a.Voices[i].Applied > b.Voices[i].Applied || minDur(a.Voices[i].Limit, a.RoomLimit) > minDur(b.Voices[i].Limit, b.RoomLimit) {
				t.Fatalf("unsure left %s higher: %+v vs %+v", a.Voices[i].ID, a.Voices[i], b.Voices[i])
			}
		}
		for i := range a.Segments {
			if a.Segments[i].Stamped > b.Segments[i].Stamped || eu.Readable(i, at+2000) > es.Readable(i, at+2000) {
				t.Fatalf("unsure left segment %d higher", i)
			}
		}
	})
}

// Def 6.1 checked against a naive model: a segment's stamp is at most the
// lowest level its voice had, as seen after every step, from t0 to t1 and
// at filing; with no undo and no forget in the session it is exactly that.
func TestPropFilingTakesTheLowest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProfile(t)
		sc := genScript(t, 60)
		e, err := New(Options{Profile: p, Entropy: DeterministicEntropy(0)})
		if err != nil {
			t.Fatal(err)
		}
		type seen struct {
			at    Time
			state State
		}
		var history []seen // steps of the current session
		exact := true
		for _, ev := range sc.events {
			prev := e.State()
			out, err := e.Step(ev)
			if err != nil {
				t.Fatal(err)
			}
			st := e.State()
			if find(out, SessionStarted) != nil || find(out, SessionEnded) != nil {
				history, exact = nil, true
			}
			if find(out, WindowUndone) != nil || len(st.Forgotten) > 0 {
				exact = false
			}
			if f := find(out, Filed); f != nil && find(out, SessionStarted) == nil && find(out, SessionEnded) == nil {
				u := f.Segment
				level := func(s State) Level {
					if a := s.Applied(u.Voice); a != Unset {
						return a
					}
					return s.Anyone
				}
				naive := level(prev)
				inForce := Level(Unset)
				for _, h := range history {
					if h.at <= u.Start {
						inForce = level(h.state)
					} else if h.at <= u.End {
						naive = Meet(naive, level(h.state))
					}
				}
				naive = Meet(naive, inForce)
				if u.Stamped > naive {
					t.Fatalf("u%d [%s,%s] stamped %d above the lowest level %d", u.Seq, u.Start, u.End, u.Stamped, naive)
				}
				if exact && u.Stamped != naive && inForce != Unset {
					t.Fatalf("u%d [%s,%s] stamped %d, the lowest level was %d\n%s", u.Seq, u.Start, u.End, u.Stamped, naive, transcript(out))
				}
			}
			history = append(history, seen{at: ev.when(), state: st})
		}
	})
}

// Def 6.3: every segment overlapping a forgotten span of its voice or of
// everyone is at 0, including speech filed after the forget; no span
// reaches before its session; and no restamp crosses a session.
func TestPropForgetting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProfile(t)
		sc := genScript(t, 60)
		_, outs, states := runScript(t, p, sc)
		filedIn := map[[2]uint64]bool{}
		for _, out := range outs {
			for _, o := range out {
				switch o.Kind {
				case Filed:
					filedIn[[2]uint64{uint64(o.Session), uint64(o.Segment.Seq)}] = true
				case Restamped:
					if !filedIn[[2]uint64{uint64(o.Session), uint64(o.Segment.Seq)}] {
						t.Fatalf("a restamp reached a segment of another session: %v", o)
					}
				}
			}
		}
		for _, st := range states {
			if !st.Open {
				continue
			}
			for _, f := range st.Forgotten {
				if f.From < st.Start {
					t.Fatalf("span %v reaches before the session start %s", f, st.Start)
				}
				for _, u := range st.Segments {
					if (f.Voice == "" || f.Voice == u.Voice) && u.Start <= f.To && f.From <= u.End && u.Stamped != 0 {
						t.Fatalf("u%d overlaps forgotten %v but is at %d", u.Seq, f, u.Stamped)
					}
				}
			}
		}
	})
}

// The readable level never rises with age, for any valid schedule.
func TestPropReadableNeverRises(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "steps")
		var steps []Step
		age := time.Duration(0)
		lvl := Level(rapid.IntRange(n-1, 5).Draw(t, "top"))
		for i := range n {
			age += time.Duration(rapid.IntRange(1, 1_000_000).Draw(t, "du")) * time.Second
			steps = append(steps, Step{Age: age, Level: lvl})
			if i < n-1 {
				lvl -= Level(rapid.IntRange(1, int(lvl)-(n-2-i)).Draw(t, "dl"))
			}
		}
		r := Retention{steps: steps}
		s := Level(rapid.IntRange(0, 5).Draw(t, "s"))
		h := Level(rapid.IntRange(-1, 5).Draw(t, "h"))
		limit := Forever
		if rapid.Bool().Draw(t, "limited") {
			limit = time.Duration(rapid.IntRange(1, 40_000_000).Draw(t, "limit")) * time.Second
		}
		a1 := time.Duration(rapid.Int64Range(-1000, 40_000_000_000).Draw(t, "a1")) * time.Millisecond
		a2 := a1 + time.Duration(rapid.Int64Range(0, 40_000_000_000).Draw(t, "da"))*time.Millisecond
		x1, x2 := r.Readable(s, h, limit, a1), r.Readable(s, h, limit, a2)
		if x2 > x1 {
			t.Fatalf("X(%v) = %d > X(%v) = %d", a2, x2, a1, x1)
		}
		if x1 > s || (h != Unset && x1 > h) {
			t.Fatalf("X = %d above s = %d or h = %d", x1, s, h)
		}
		if a2 >= r.Longest() && x2 != 0 {
			t.Fatalf("readable %d after the last step", x2)
		}
		for l := Level(0); l <= 5; l++ {
			if u := r.UnreadableAfter(l, limit); a1 >= u && x1 >= l && l > 0 {
				t.Fatalf("level %d readable at %v, past unreadable_after %v", l, a1, u)
			}
		}
	})
}

// Labels never appear in any output: outcomes, transcripts, state, log,
// records and the note.
func TestPropNoLabelsInOutput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProfile(t)
		sc := genScript(t, 60)
		sc.events = append(sc.events, End{At: sc.events[len(sc.events)-1].when()})
		e, outs, states := runScript(t, p, sc)
		var blobs []string
		for i, out := range outs {
			for _, o := range out {
				b, _ := json.Marshal(o)
				blobs = append(blobs, string(b), o.String(), fmt.Sprintf("%+v", o))
				if o.Closure != nil {
					n, err := WriteNote(p, o.Closure, func(l Level, recs []Record) []string {
						var lines []string
						for _, r := range recs {
							lines = append(lines, r.Voice+" said something")
						}
						return lines
					})
					if err != nil {
						t.Fatal(err)
					}
					blobs = append(blobs, n.Text)
				}
			}
			b, _ := json.Marshal(states[i])
			blobs = append(blobs, string(b))
		}
		b, _ := json.Marshal(e.Log())
		blobs = append(blobs, string(b))
		all := strings.Join(blobs, "\n")
		for _, l := range sc.labels {
			if strings.Contains(all, l) {
				t.Fatalf("label %q appears in the output", l)
			}
		}
	})
}
