package sync_test

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// A peer never loses an entry, so what a node has seen it hold stays
// true: a later report with fewer heads (a pull's answer written before a
// pull the other way brought the peer more) adds to what is known, never
// hides it. The newest come first, 64 at most.
func TestSeenKeepsWhatThePeerHeld(t *testing.T) {
	e := ws.NewEngine(synctest.NewMem(synctest.Options{}), ws.Options{})
	id := func(i int) dag.ID { return dag.Sum([]byte{byte(i), byte(i >> 8)}) }
	a, b := id(1), id(2)
	if got := e.Announced("p", "s"); got != nil {
		t.Fatalf("nothing seen yet: %v", got)
	}
	e.Seen("p", "s", []dag.ID{a})
	e.Seen("p", "s", nil) // an answer of a peer that held nothing then
	if got := e.Announced("p", "s"); !slices.Equal(got, []dag.ID{a}) {
		t.Fatalf("after an empty report: %v, want [a]", got)
	}
	e.Seen("p", "s", []dag.ID{b, a})
	if got := e.Announced("p", "s"); !slices.Equal(got, []dag.ID{b, a}) {
		t.Fatalf("after [b a]: %v", got)
	}
	e.Seen("p", "s", []dag.ID{a})
	if got := e.Announced("p", "s"); !slices.Equal(got, []dag.ID{a, b}) {
		t.Fatalf("after [a] again: %v, want [a b]", got)
	}
	if got := e.Announced("q", "s"); got != nil {
		t.Fatalf("another peer: %v", got)
	}
	var many []dag.ID
	for i := 10; i < 80; i++ {
		many = append(many, id(i))
	}
	e.Seen("p", "s", many)
	if got := e.Announced("p", "s"); len(got) != 64 || !slices.Equal(got, many[:64]) {
		t.Fatalf("after 70 more: %d heads, want the first 64 of them", len(got))
	}
}

// serveOK serves the frame body to peer "req" over a stream of the ranges
// protocol (serveFrames) and fails t if Serve failed: e has then written
// its whole answer.
func serveOK(t *testing.T, e *ws.Engine, body []byte) {
	t.Helper()
	if err := serveFrames(e, "req", true, body); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// A responder that sent a requester a run of its log up to its end, or
// the entries of the heads it asked for, knows the requester holds those
// heads once it has taken them: a requester that then holds what the
// responder announces mostly stays silent (its re-announcements are
// suppressed), and a teacher's page would list it as behind.
func TestServedHeadsAreSeen(t *testing.T) {
	src, space := build(t, 30)
	hs := heads(t, src, space)
	length := uint64(count(t, src, space))

	// A run that stops short of the end tells nothing.
	e := ws.NewEngine(src, ws.Options{})
	serveOK(t, e, ws.LogRequest{Space: space, After: 0, Limit: length - 5}.Encode())
	if got := e.Announced("req", space); got != nil {
		t.Fatalf("after a run short of the end: %v", got)
	}
	// The last run: the requester holds the heads.
	serveOK(t, e, ws.LogRequest{Space: space, After: length - 5, Limit: 100}.Encode())
	if got := e.Announced("req", space); !slices.Equal(got, hs) {
		t.Fatalf("after the log's last run: %v, want %v", got, hs)
	}

	// A pull for given heads: those the responder holds.
	e = ws.NewEngine(src, ws.Options{})
	unknown := dag.Sum([]byte("not held"))
	req := &ws.Request{Space: space, Want: []dag.ID{hs[0], unknown}}
	serveOK(t, e, req.Encode())
	if got := e.Announced("req", space); !slices.Equal(got, hs[:1]) {
		t.Fatalf("after a pull for its head and one it lacks: %v, want %v", got, hs[:1])
	}
}
