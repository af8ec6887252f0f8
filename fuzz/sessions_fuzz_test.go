package fuzz

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/witan-dev/witan/sessions"
)

type counter struct{ n byte }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		c.n++
		p[i] = c.n
	}
	return len(p), nil
}

// FuzzSessionsGrammar: any text parses to at most one intent, never
// panics, gives the same answer twice, and an intent it gives is well
// formed. Through an engine, one utterance decides at most one intent.
func FuzzSessionsGrammar(f *testing.F) {
	p, err := sessions.LoadProfile("goldfish-v01")
	if err != nil {
		f.Fatal(err)
	}
	g, err := p.Grammar()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "No.", "Goldfish, word for word, but no names.", "Forget what I said in the last 999999 years",
		"Keep this for a week.", "Olvida lo que dije en los últimos cinco minutos", "\xff\xfe", "İSTANBUL don’t quote me", "goldfish goldfish no"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		in, ok := g.Parse(text)
		in2, ok2 := g.Parse(text)
		if ok != ok2 || in != in2 {
			t.Fatalf("two parses of %q differ: %v/%v, %v/%v", text, in, ok, in2, ok2)
		}
		if !ok {
			if in != (sessions.Intent{}) {
				t.Fatalf("no match but an intent: %+v", in)
			}
			return
		}
		if in.Rule == "" || (in.Locale != "en" && in.Locale != "es") || in.Source != sessions.FromSpeech {
			t.Fatalf("ill-formed intent %+v", in)
		}
		if in.Level != sessions.Unset && !in.Level.Valid() {
			t.Fatalf("level %d", in.Level)
		}
		if in.Span < 0 || in.Span > 100*365*sessions.Day {
			t.Fatalf("span %v", in.Span)
		}
		if in.Addressed != g.Addressed(text) {
			t.Fatalf("addressed %v disagrees with Addressed", in.Addressed)
		}
		e, err := sessions.New(sessions.Options{Profile: p, Entropy: &counter{}, Grammar: g})
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Step(sessions.Speech{Label: "someone", Start: 0, End: 1000, Confidence: 900, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		decided := 0
		for _, o := range out {
			if o.Kind == sessions.Decided {
				decided++
			}
		}
		if decided != 1 {
			t.Fatalf("%q decided %d intents", text, decided)
		}
	})
}

// FuzzSessionsProfile: any bytes either decode to a profile that validates
// and builds a grammar and an engine, or are refused with ErrProfile.
func FuzzSessionsProfile(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"profile":"x","default_level":3,"max_default_level":4,"max_voice_level":4,"objection_window":"30s","session_gap":"600s","attribution_threshold_permille":800,"max_participants":10,"room_raise":"invocation","invocation":["goldfish"],"locales":["en","es"],"extensions":["side_conversations"],"reply_window":"6s","replies_for_group":2,"retention":[{"age":"3d","level":5},{"age":"30d","level":2},{"age":"365d","level":1}],"eye":{"double_press":"600ms","hold":"2s"},"note":{"budget_bytes":8192,"sections":[1,2,3]}}`))
	f.Add([]byte(`{"profile":"x","default_level":9}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := sessions.ParseProfile(b)
		if err != nil {
			if p != nil {
				t.Fatal("a profile with an error")
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("decoded profile does not validate: %v", err)
		}
		if _, err := sessions.New(sessions.Options{Profile: p, Entropy: &counter{}}); err != nil {
			t.Fatalf("valid profile, no engine: %v", err)
		}
	})
}

// FuzzSessionsEngine: any event script (decoded from bytes) steps without
// panic, and no segment's stamp ever rises.
func FuzzSessionsEngine(f *testing.F) {
	f.Add([]byte{0, 10, 1, 20, 2, 30, 3, 40, 4, 50})
	f.Add([]byte{5, 1, 5, 2, 6, 3, 0, 200, 7, 255, 1, 1})
	p, err := sessions.LoadProfile("goldfish-v01")
	if err != nil {
		f.Fatal(err)
	}
	g, err := p.Grammar()
	if err != nil {
		f.Fatal(err)
	}
	texts := []string{"", "No.", "Off the record.", "Back on the record.", "Goldfish, word for word.",
		"You can quote me.", "Leave me out.", "Scratch that.", "Erase me.", "Keep this for a week."}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := sessions.New(sessions.Options{Profile: p, Entropy: &counter{}, Grammar: g})
		if err != nil {
			t.Fatal(err)
		}
		now := sessions.Time(100_000)
		stamps := map[int]sessions.Level{}
		var session sessions.SessionID
		for i := 0; i+1 < len(b); i += 2 {
			op, arg := b[i], b[i+1]
			now += sessions.Time(arg) * 250
			if op%11 == 10 {
				now += sessions.Time(binary.BigEndian.Uint16([]byte{arg, op})) * 100
			}
			var ev sessions.Event
			switch op % 8 {
			case 0, 1, 2, 3:
				ev = sessions.Speech{Label: string(rune('a' + op%5)), Start: now - sessions.Time(arg)*10, End: now,
					Confidence: sessions.Permille(int(arg) * 4 % 1001), Text: texts[int(arg)%len(texts)]}
			case 4:
				ev = sessions.Press{At: now, Held: time.Duration(arg) * 10 * time.Millisecond}
			case 5:
				ev = sessions.Request{At: now, Intent: sessions.Intent{Kind: sessions.Kind(arg%7 + 1),
					Scope: sessions.Scope(arg%2 + 1), Level: sessions.Level(arg % 6), Span: (time.Duration(arg) + 1) * time.Second,
					Addressed: arg%3 == 0, Source: sessions.Source(arg%4 + 1)}}
			case 6:
				ev = sessions.Tick{At: now}
			default:
				ev = sessions.End{At: now}
			}
			if _, err := e.Step(ev); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			st := e.State()
			if st.Session != session {
				session, stamps = st.Session, map[int]sessions.Level{}
			}
			for _, u := range st.Segments {
				if old, ok := stamps[u.Seq]; ok && u.Stamped > old {
					t.Fatalf("segment %d rose from %d to %d", u.Seq, old, u.Stamped)
				}
				stamps[u.Seq] = u.Stamped
			}
		}
	})
}
