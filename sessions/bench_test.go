package sessions

import (
	"fmt"
	"testing"
	"time"
)

// syntheticSession is a 10-voice, 8-hour meeting: turns of 2–6 s with
// short pauses, one utterance in ten carrying an intent (both locales),
// the eye pressed now and then (sometimes a double press), a tick every
// second, and the end. It is deterministic.
func syntheticSession(voices int, length time.Duration) []Event {
	var evs []Event
	lines := []string{
		"I think the importer can ship in the fourth quarter if we cut scope.",
		"Agreed, and the vendor should confirm by Friday.",
		"Let's look at the numbers again before we decide.",
		"Keep my words to the gist.", "No names.", "Back on the record.", "You can quote me.",
		"Goldfish, word for word.", "No.", "Scratch that.", "Keep this for a week.", "Déjame fuera.",
	}
	var x uint32 = 2463534242
	rnd := func(n int) int { // xorshift, so the script is the same everywhere
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	end := Time(length / time.Millisecond)
	now, nextTick := Time(1000), Time(1000)
	tickTo := func(t Time) {
		for ; nextTick <= t; nextTick += 1000 {
			evs = append(evs, Tick{At: nextTick})
		}
	}
	for now < end {
		turn := Time(2000 + rnd(4000))
		tickTo(now + turn)
		text := lines[rnd(3)]
		if rnd(10) == 0 {
			text = lines[3+rnd(len(lines)-3)]
		}
		evs = append(evs, Speech{Label: fmt.Sprintf("voice-%02d", rnd(voices)), Start: now, End: now + turn,
			Confidence: Permille(700 + rnd(301)), Text: text})
		now += turn + Time(200+rnd(1500))
		if rnd(200) == 0 {
			tickTo(now)
			evs = append(evs, Press{At: now})
			if rnd(2) == 0 {
				tickTo(now + 300)
				evs = append(evs, Press{At: now + 300})
			}
			now += 400
		}
	}
	tickTo(now)
	return append(evs, End{At: now})
}

// BenchmarkEngine8h steps a 10-voice, 8-hour session through a fresh
// engine; events/s counts every event (speech, presses, ticks, the end).
func BenchmarkEngine8h(b *testing.B) {
	p := goldfish(b)
	g, err := p.Grammar()
	if err != nil {
		b.Fatal(err)
	}
	evs := syntheticSession(10, 8*time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e, err := New(Options{Profile: p, Entropy: DeterministicEntropy(0), Grammar: g})
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range evs {
			if _, err := e.Step(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(len(evs)), "events/session")
}

// The synthetic session is what it says: 10 voices, 8 hours, one session.
func TestSyntheticSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and steps 8 hours of events")
	}
	evs := syntheticSession(10, 8*time.Hour)
	e := newEngine(t, goldfish(t))
	sessions, voices := 0, 0
	for _, ev := range evs {
		out := step(t, e, ev)
		if o := find(out, SessionEnded); o != nil {
			sessions++
			voices = o.Closure.Voices
		}
	}
	if sessions != 1 || voices != 10 || evs[len(evs)-1].when() < Time(8*time.Hour/time.Millisecond) {
		t.Fatalf("%d sessions, %d voices, ends at %s", sessions, voices, evs[len(evs)-1].when())
	}
}
