package sessions_test

import (
	"bytes"
	"fmt"

	"github.com/witan-dev/witan/sessions"
)

// A voice lowers its own words, another raises its own; the room lowers
// everyone, and a provisional raise is undone by an objection.
func Example() {
	eng, err := sessions.New(sessions.Options{Entropy: bytes.NewReader(bytes.Repeat([]byte{7}, 64))})
	if err != nil {
		panic(err)
	}
	sec := func(s int64) sessions.Time { return sessions.Time(s * 1000) }
	events := []sessions.Event{
		sessions.Speech{Label: "alice", Start: sec(0), End: sec(3), Confidence: 950, Text: "Keep my words to the gist."},
		sessions.Speech{Label: "bob", Start: sec(4), End: sec(6), Confidence: 950, Text: "You can quote me."},
		sessions.Speech{Label: "carol", Start: sec(7), End: sec(9), Confidence: 950, Text: "Goldfish, word for word."},
		sessions.Speech{Label: "alice", Start: sec(10), End: sec(11), Confidence: 400, Text: "No."},
	}
	for _, ev := range events {
		out, err := eng.Step(ev)
		if err != nil {
			panic(err)
		}
		for _, o := range out {
			if o.Kind == sessions.Decided || o.Kind == sessions.WindowUndone {
				fmt.Println(o)
			}
		}
	}
	st := eng.State()
	for _, v := range st.Voices {
		fmt.Printf("%s applied %d\n", v.ID, v.Applied)
	}
	// Output:
	// 3.000s decided v1 lower self 2 applied
	// 6.000s decided v2 raise self 4 applied
	// 9.000s decided v3 raise room 4 addressed provisional
	// 11.000s window-undone
	// 11.000s decided v1 object room reverted
	// v1 applied 2
	// v2 applied 4
	// v3 applied 3
}

// The grammar tries its locales in the profile's order and gives at most
// one intent per utterance; a sentence that both lowers and raises is a
// lowering (Inv 3.3).
func ExampleGrammar_Parse() {
	p, _ := sessions.LoadProfile("goldfish-v01")
	g, _ := p.Grammar()
	for _, text := range []string{
		"Forget what I said in the last five minutes.",
		"Goldfish, word for word, but no names.",
		"Déjame fuera.",
		"The vendor is late.",
	} {
		in, ok := g.Parse(text)
		if !ok {
			fmt.Printf("%q: no intent\n", text)
			continue
		}
		fmt.Printf("%q: %s (%s/%s)\n", text, in, in.Locale, in.Rule)
	}
	// Output:
	// "Forget what I said in the last five minutes.": forget self 5 min (en/forget-what-i-said-span)
	// "Goldfish, word for word, but no names.": lower room 2 addressed (en/gist)
	// "Déjame fuera.": lower self 0 (es/leave-me-out)
	// "The vendor is late.": no intent
}

// When a session ends, its records leave with their final levels; the note
// dates each section from the retention staircase.
func ExampleWriteNote() {
	eng, _ := sessions.New(sessions.Options{Entropy: bytes.NewReader(bytes.Repeat([]byte{9}, 64))})
	start := sessions.Time(1_791_936_000_000) // 2026-10-14 00:00 UTC
	text := map[uint64]string{1: "We ship the importer in Q4.", 2: "The vendor is late.", 3: "Bob owns the release."}
	var closure *sessions.Closure
	for _, ev := range []sessions.Event{
		sessions.Speech{Label: "a", Start: start, End: start + 3000, Confidence: 900, Ref: 1},
		sessions.Speech{Label: "b", Start: start + 4000, End: start + 6000, Confidence: 900, Ref: 2, Text: "Off the record."},
		sessions.Speech{Label: "c", Start: start + 7000, End: start + 9000, Confidence: 900, Ref: 3},
		sessions.End{At: start + 10_000},
	} {
		out, _ := eng.Step(ev)
		for _, o := range out {
			if o.Kind == sessions.SessionEnded {
				closure = o.Closure
			}
		}
	}
	note, _ := sessions.WriteNote(eng.Profile(), closure, func(l sessions.Level, recs []sessions.Record) []string {
		var lines []string
		for _, r := range recs {
			lines = append(lines, text[r.Ref])
		}
		return lines
	})
	fmt.Print(note.Text)
	// Output:
	// # Goldfish note
	//
	// 2026-10-14 · goldfish-v01 · 3 voices
	//
	// ## Outcomes (kept until 2027-10-14)
	//
	// - We ship the importer in Q4.
	//
	// ## Gist (kept until 2026-11-13)
	//
	// - We ship the importer in Q4.
	//
	// ## Attributed (kept until 2026-10-17)
	//
	// - We ship the importer in Q4.
}
