package node

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// The witness round checks a peer whose heads stay the same at rounds
// 1, 2, 4, 7, 12, 21, 38, then every 18th (the skip doubling from 1 to
// 16, then held at maxWitnessSkip = 17); new heads are checked at once,
// and the doubling starts again.
func TestWitnessPace(t *testing.T) {
	x := &p2pChecked{}
	a := []dag.ID{dag.Sum([]byte("a"))}
	b := []dag.ID{dag.Sum([]byte("a")), dag.Sum([]byte("b"))}
	var checked []int
	for round := 1; round <= 80; round++ {
		if x.due("s", a) {
			checked = append(checked, round)
		}
	}
	want := []int{1, 2, 4, 7, 12, 21, 38, 56, 74}
	if !slices.Equal(checked, want) {
		t.Fatalf("checked at rounds %v, want %v", checked, want)
	}
	var got []bool
	for range 4 {
		got = append(got, x.due("s", b))
	}
	if want := []bool{true, true, false, true}; !slices.Equal(got, want) {
		t.Fatalf("new heads: checked %v, want %v (at once, at the next round, then after one skipped)", got, want)
	}
	if !x.due("other", a) {
		t.Fatal("another session of the same peer waits on this one's pace")
	}
}
