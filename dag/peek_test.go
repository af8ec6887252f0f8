package dag_test

import (
	"bytes"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// PeekCanonical on sealed envelopes whose bodies hold the very members
// it looks for ("parents", "type") one level down: it must find the
// top-level ones, and give back the body and the type they were sealed
// with. Bytes not in canonical form get ok false.
func TestPeekCanonical(t *testing.T) {
	s, _ := dag.SignerFromSeed(seed(5))
	p1, p2 := dag.Sum([]byte("p1")), dag.Sum([]byte("p2"))
	obj := dag.Sum([]byte("object")).String()
	for _, c := range []struct {
		typ     dag.TxType
		parents []dag.ID
		body    string
	}{
		{dag.TxBallotCast, []dag.ID{p1}, `{"choice":"approve","mr":"` + p2.String() + `"}`},
		{dag.TxBranchAppend, []dag.ID{p1, p2}, `{"change":"` + obj + `","parents":["` + obj + `"],"type":"ballot.cast"}`},
		{dag.TxOpinionPublish, []dag.ID{p2}, `{"x":{"parents":[],"type":"key.rotate","v":"0.10"},"y":"\",\"parents\":[\",\"type\":\"ballot.cast\",\"v\":\"0.10\"}"}`},
		{dag.TxSessionCreate, []dag.ID{}, `{}`},
	} {
		session := dag.Sum([]byte("session"))
		if c.typ == dag.TxSessionCreate {
			session = dag.Sum([]byte(c.body)) // 30k: a session is named by its creating body
		}
		e := &dag.Envelope{Type: c.typ, Session: session, Parents: c.parents,
			Body: []byte(c.body), TS: "2026-12-01T21:00:00Z"}
		b, _, err := e.Seal(s)
		if err != nil {
			t.Fatal(c.typ, err)
		}
		typ, body, ok := dag.PeekCanonical(b)
		if !ok || typ != c.typ || string(body) != c.body {
			t.Errorf("%s: PeekCanonical = %q, %s, %v; want %q, %s, true", c.typ, typ, body, ok, c.typ, c.body)
		}
		if typ, ok := dag.PeekCanonicalType(b); !ok || typ != c.typ {
			t.Errorf("%s: PeekCanonicalType = %q, %v; want %q, true", c.typ, typ, ok, c.typ)
		}
		// Not canonical: white space, a member cut off, nothing.
		spaced := append([]byte("{ "), b[1:]...)
		v := []byte(`"` + dag.ProtocolVersion + `"}`)
		tail := len(b) - len(v)
		quoted := append(bytes.Replace(b[:tail:tail], []byte(`"type":"`+string(c.typ)), []byte(`"type":"x\"`+string(c.typ)), 1), v...)
		for _, bad := range [][]byte{spaced, b[:len(b)-1], append(b[:tail:tail], `"0.0"}`...), quoted, nil} {
			if typ, body, ok := dag.PeekCanonical(bad); ok {
				t.Errorf("%s: PeekCanonical(%q) = %q, %s, true; want false", c.typ, bad, typ, body)
			}
			if typ, ok := dag.PeekCanonicalType(bad); ok {
				t.Errorf("%s: PeekCanonicalType(%q) = %q, true; want false", c.typ, bad, typ)
			}
		}
	}
}
