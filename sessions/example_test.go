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
