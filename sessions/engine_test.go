package sessions

import (
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The package is pure: it imports neither Badger nor libp2p, nor anything
// that does I/O on its own.
func TestPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"badger", "libp2p", "net/http", "os/exec", "database/sql", "math/rand", "crypto/rand"} {
			if strings.Contains(dep, banned) {
				t.Errorf("sessions depends on %s", dep)
			}
		}
	}
}

func TestStepRefuses(t *testing.T) {
	e := newEngine(t, goldfish(t))
	step(t, e, Speech{Label: "alice", Start: 1000, End: 2000, Confidence: 900})
	before := e.State()
	bad := []struct {
		name string
		ev   Event
		want error
	}{
		{"nil", nil, ErrBadEvent},
		{"back in time", Tick{At: 1999}, ErrTimeReversed},
		{"ends before it starts", Speech{Label: "alice", Start: 3000, End: 2500}, ErrBadEvent},
		{"filed before it ends", Speech{Label: "alice", Start: 3000, End: 4000, Filed: 3500}, ErrBadEvent},
		{"confidence above 1000", Speech{Label: "alice", Start: 3000, End: 4000, Confidence: 1001}, ErrBadEvent},
		{"no time", Tick{At: NoTime}, ErrBadEvent},
		{"lower without a level", Request{At: 3000, Intent: Intent{Kind: Lower, Scope: Room, Level: Unset, Source: FromUI}}, ErrBadEvent},
		{"forget without a span", Request{At: 3000, Intent: Intent{Kind: Forget, Scope: Room, Source: FromUI}}, ErrBadEvent},
		{"unknown kind", Request{At: 3000, Intent: Intent{Kind: 99, Scope: Room, Source: FromUI}}, ErrBadEvent},
		{"no source", Request{At: 3000, Intent: Intent{Kind: Object, Scope: Room}}, ErrBadEvent},
		{"negative hold", Press{At: 3000, Held: -time.Second}, ErrBadEvent},
	}
	for _, b := range bad {
		if _, err := e.Step(b.ev); !errors.Is(err, b.want) {
			t.Errorf("%s: err = %v, want %v", b.name, err, b.want)
		}
	}
	if after := e.State(); len(after.Segments) != len(before.Segments) || after.Ceiling != before.Ceiling {
		t.Errorf("refused events changed the state")
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestEntropyFailure(t *testing.T) {
	e, err := New(Options{Entropy: failing{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Step(Speech{Label: "alice", Start: 0, End: 1000}); !errors.Is(err, ErrEntropy) {
		t.Errorf("err = %v, want ErrEntropy", err)
	}
	if e.State().Open {
		t.Errorf("a session opened without an ID")
	}
	// Entropy that runs out after the first session: a speech after the
	// gap is refused as a whole, and the first session is still open.
	e, err = New(Options{Entropy: io.LimitReader(DeterministicEntropy(0), 8)})
	if err != nil {
		t.Fatal(err)
	}
	step(t, e, Speech{Label: "alice", Start: 0, End: 1000})
	before := e.State()
	if _, err := e.Step(Speech{Label: "bruno", Start: 700_000, End: 701_000}); !errors.Is(err, ErrEntropy) {
		t.Fatalf("err = %v, want ErrEntropy", err)
	}
	if after := e.State(); !after.Open || after.Session != before.Session || len(after.Voices) != 1 {
		t.Errorf("a refused step changed the state: %+v", after)
	}
	if _, err := e.Step(Tick{At: 700_000}); err != nil {
		t.Errorf("the engine is stuck after a refused step: %v", err)
	}
}

func TestSessionIDs(t *testing.T) {
	e := newEngine(t, goldfish(t))
	var ids []SessionID
	for i := range 3 {
		base := Time(i) * 1_000_000
		out := step(t, e, Speech{Label: "alice", Start: base, End: base + 1000})
		if s := find(out, SessionStarted); s != nil {
			ids = append(ids, s.Session)
		}
		step(t, e, End{At: base + 2000})
	}
	if len(ids) != 3 || ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == 0 {
		t.Fatalf("session IDs %v", ids)
	}
	for _, id := range ids {
		back, err := ParseSessionID(id.String())
		if err != nil || back != id || len(id.String()) != 16 {
			t.Errorf("round trip %v: %v %v", id, back, err)
		}
	}
	for _, s := range []string{"", "0000000000000000", "xyz", "0102030405060708ff"} {
		if _, err := ParseSessionID(s); err == nil {
			t.Errorf("ParseSessionID(%q) accepted", s)
		}
	}
}

func TestNoteBudget(t *testing.T) {
	p := goldfish(t)
	p.NoteBudget = 600
	c := &Closure{Session: 1, Profile: p.Name, Start: epoch, End: epoch + 60_000, Voices: 2, RoomLimit: Forever}
	for i := range 6 {
		c.Records = append(c.Records, Record{Session: 1, Seq: i, Voice: "v1", Start: epoch, End: epoch + 1000, Stamped: 3, Limit: Forever})
	}
	long := strings.Repeat("word ", 15)
	sum := func(l Level, recs []Record) []string {
		var lines []string
		for range recs {
			lines = append(lines, long)
		}
		return lines
	}
	n, err := WriteNote(p, c, sum)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Text) > p.NoteBudget {
		t.Fatalf("note is %d bytes, over %d", len(n.Text), p.NoteBudget)
	}
	if len(n.Dropped) == 0 || n.Dropped[0] != Attributed {
		t.Fatalf("dropped %v, want Attributed first", n.Dropped)
	}
	if !strings.Contains(n.Text, "Attributed section was left out") {
		t.Errorf("the note does not say what it dropped:\n%s", n.Text)
	}
	// A tiny budget: only part of Outcomes fits, and the note says so.
	p.NoteBudget = 300
	n, err = WriteNote(p, c, sum)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Text) > 300 || n.Truncated == 0 || len(n.Sections) != 1 || !strings.Contains(n.Text, "left out to fit") {
		t.Errorf("truncated note:\n%s", n.Text)
	}
}

// D2: the note's dates honour spoken limits.
func TestNoteDatesHonourLimits(t *testing.T) {
	p := goldfish(t)
	c := &Closure{Session: 1, Profile: p.Name, Start: epoch, End: epoch + 60_000, Voices: 1, RoomLimit: 7 * Day,
		Records: []Record{{Session: 1, Voice: "v1", Start: epoch, End: epoch + 1000, Stamped: 3, Limit: 7 * Day}}}
	n, err := WriteNote(p, c, func(Level, []Record) []string { return []string{"a line"} })
	if err != nil {
		t.Fatal(err)
	}
	want := map[Level]string{Outcomes: "2026-10-21", Gist: "2026-10-21", Attributed: "2026-10-17"}
	for _, s := range n.Sections {
		if got := s.KeptUntil.UTC().Format(time.DateOnly); got != want[s.Level] {
			t.Errorf("%s kept until %s, want %s", s.Title, got, want[s.Level])
		}
	}
	if _, err := WriteNote(p, nil, nil); !errors.Is(err, ErrNote) {
		t.Errorf("WriteNote(nil): %v", err)
	}
}
