package sessions

import (
	"bytes"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and the tables in docs/memory-model.md")

// sec reads "95.3" as 95 300 ms, exactly (no floats).
func sec(s string) Time {
	t, err := parseSec(s)
	if err != nil {
		panic(err)
	}
	return t
}

func parseSec(s string) (Time, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 || whole == "" {
		return 0, fmt.Errorf("bad seconds %q", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad seconds %q", s)
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt((frac + "00")[:3], 10, 64); err != nil {
			return 0, fmt.Errorf("bad seconds %q", s)
		}
	}
	t := Time(w*1000 + f)
	if neg {
		t = -t
	}
	return t, nil
}

// entropy is a fixed, endless stream for session IDs.
func newEngine(t testing.TB, p *Profile) *Engine {
	t.Helper()
	e, err := New(Options{Profile: p, Entropy: DeterministicEntropy(0)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func goldfish(t testing.TB) *Profile {
	t.Helper()
	p, err := LoadProfile("goldfish-v01")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func step(t testing.TB, e *Engine, ev Event) []Outcome {
	t.Helper()
	out, err := e.Step(ev)
	if err != nil {
		t.Fatalf("step %#v: %v", ev, err)
	}
	return out
}

func transcript(out []Outcome) string {
	var b bytes.Buffer
	for _, o := range out {
		b.WriteString(o.String() + "\n")
	}
	return b.String()
}

func find(out []Outcome, k OutcomeKind) *Outcome {
	for i := range out {
		if out[i].Kind == k {
			return &out[i]
		}
	}
	return nil
}
