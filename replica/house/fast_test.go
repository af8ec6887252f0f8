package house

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

func genID(t *rapid.T, label string) dag.ID {
	return dag.Sum([]byte{rapid.Byte().Draw(t, label)})
}

// canonicalOrMutated returns v's canonical JSON, sometimes with one byte
// changed, so that both paths see near-misses.
func canonicalOrMutated(t *rapid.T, v any) []byte {
	b, err := dag.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if rapid.Bool().Draw(t, "mutate") {
		i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
		b[i] = rapid.SampledFrom([]byte(`{}[]",:0aAFg"\ ne`)).Draw(t, "byte")
	}
	return b
}

// TestFastBallotAgrees: whenever the fast ballot reader accepts a body,
// the strict decoder accepts it with the same value.
func TestFastBallotAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := map[string]any{"mr": genID(t, "mr"), "choice": rapid.SampledFrom([]string{"approve", "reject", "abstain", "maybe"}).Draw(t, "choice")}
		if rapid.Bool().Draw(t, "sup") {
			m["supersedes"] = genID(t, "s")
		} else if rapid.Bool().Draw(t, "null") {
			m["supersedes"] = nil
		}
		if rapid.Bool().Draw(t, "em") {
			m["emergency"] = rapid.SampledFrom([]string{"yes", "no", "x"}).Draw(t, "e")
		}
		if rapid.Bool().Draw(t, "w") {
			m["weight"] = rapid.IntRange(0, 9).Draw(t, "weight")
		}
		b := canonicalOrMutated(t, m)
		fast, ok := fastBallot(b)
		strict, err := rules.DecodeBallotBody(b)
		if ok && (err != nil || fast != strict) {
			t.Fatalf("%s: fast %+v, strict %+v %v", b, fast, strict, err)
		}
		if !ok && err == nil && dag.IsCanonical(b) && !strictOnly(m) {
			t.Fatalf("%s: the fast path should take this canonical body", b)
		}
	})
}

func strictOnly(m map[string]any) bool { _, w := m["weight"]; return w }

// TestFastDeterminationAgrees: the same for determinations, both ways:
// whatever the fast reader accepts the strict decoder accepts alike, and
// every canonical body the strict decoder accepts the fast reader takes
// (else the fast path could be dead and this test still pass).
func TestFastDeterminationAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) dag.ID { return genID(t, "b") }), 0, 4).Draw(t, "ballots")
		m := map[string]any{"mr": genID(t, "mr"), "ballots": ids, "outcome": rapid.SampledFrom([]string{"approved", "rejected", "expired", "pending", "won"}).Draw(t, "o")}
		b := canonicalOrMutated(t, m)
		fast, ok := fastDetermination(b)
		strict, err := DecodeDetermination(b)
		if ok && (err != nil || !reflect.DeepEqual(fast, strict)) {
			t.Fatalf("%s: fast %+v, strict %+v %v", b, fast, strict, err)
		}
		if !ok && err == nil && dag.IsCanonical(b) {
			t.Fatalf("%s: the fast path should take this canonical body", b)
		}
	})
}

// The fast path fires on the bodies a replica sees every day, written out
// by hand; and refuses near-misses, which the strict decoder then judges.
func TestFastDeterminationFires(t *testing.T) {
	a, b := dag.Sum([]byte("a")).String(), dag.Sum([]byte("b")).String()
	mr := dag.Sum([]byte("mr")).String()
	for _, c := range []struct {
		body string
		fast bool
	}{
		{`{"ballots":[],"mr":"` + mr + `","outcome":"expired"}`, true},
		{`{"ballots":["` + a + `"],"mr":"` + mr + `","outcome":"approved"}`, true},
		{`{"ballots":["` + a + `","` + b + `"],"mr":"` + mr + `","outcome":"rejected"}`, true},
		{`{"ballots":["` + a + `"],"mr":"` + mr + `","outcome":"pending"}`, true},
		// Not canonical (a space), a repeated ballot, an unknown outcome,
		// a member too many: all for the strict decoder.
		{`{"ballots":[ ],"mr":"` + mr + `","outcome":"expired"}`, false},
		{`{"ballots":["` + a + `","` + a + `"],"mr":"` + mr + `","outcome":"approved"}`, false},
		{`{"ballots":[],"mr":"` + mr + `","outcome":"won"}`, false},
		{`{"ballots":[],"mr":"` + mr + `","outcome":"expired","x":1}`, false},
	} {
		_, ok := fastDetermination([]byte(c.body))
		if ok != c.fast {
			t.Errorf("%s: fast path took it: %v, want %v", c.body, ok, c.fast)
		}
	}
}

// TestCursorID: the word-at-a-time id decoder agrees with dag.ParseID for
// every byte value at every digit position, and for random ids.
func TestCursorID(t *testing.T) {
	valid := dag.Sum([]byte("an id")).String()
	check := func(s string) {
		t.Helper()
		c := cursor{[]byte(s + `"`)}
		got, ok := c.id()
		want, err := dag.ParseID(s)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("%q: fast %v %v, dag.ParseID %v %v", s, got, ok, want, err)
		}
		if ok && len(c.s) != 0 {
			t.Fatalf("%q: %d bytes left", s, len(c.s))
		}
	}
	for pos := len("sha256:"); pos < len(valid); pos++ {
		for b := 0; b < 256; b++ {
			check(valid[:pos] + string([]byte{byte(b)}) + valid[pos+1:])
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		check(dag.Sum(rapid.SliceOf(rapid.Byte()).Draw(t, "data")).String())
	})
}
