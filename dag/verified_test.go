package dag_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
)

// A VerifiedSet hands each id back once, holds at most its bound (starting
// afresh when full), and a nil set holds nothing.
func TestVerifiedSet(t *testing.T) {
	s := dag.NewVerifiedSet(2)
	a, b, c, d := dag.Sum([]byte("a")), dag.Sum([]byte("b")), dag.Sum([]byte("c")), dag.Sum([]byte("d"))
	s.Add(a, b)
	if !s.Take(a) || s.Take(a) {
		t.Fatal("an id is taken once")
	}
	if s.Take(c) {
		t.Fatal("an id never added was taken")
	}
	s.Add(c, d) // b and c fill it: d starts afresh
	if s.Len() != 1 {
		t.Fatalf("%d ids after starting afresh, want 1", s.Len())
	}
	if !s.Take(d) || s.Take(b) || s.Take(c) {
		t.Fatal("a full set starts afresh with the id that did not fit")
	}
	var none *dag.VerifiedSet
	none.Add(a)
	if none.Take(a) || none.Len() != 0 {
		t.Fatal("a nil set holds nothing")
	}
}
