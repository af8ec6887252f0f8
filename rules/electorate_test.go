package rules_test

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/rules"
)

// TestElectorateIndex: Index and Has agree with a scan of Members for
// members and outsiders, whatever the electorate's size and order.
func TestElectorateIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		keys := members(n)
		in := rapid.Permutation(keys).Draw(t, "order")
		el, err := rules.NewElectorate(in)
		if err != nil {
			t.Fatal(err)
		}
		ms := el.Members()
		if el.Len() != n || len(ms) != n {
			t.Fatalf("Len %d, %d members; want %d", el.Len(), len(ms), n)
		}
		for _, k := range append(keys, members(n + 5)[n:]...) { // five outsiders
			i, ok := el.Index(k)
			want := slices.Index(ms, k)
			if ok != (want >= 0) || (ok && i != want) || el.Has(k) != ok {
				t.Fatalf("Index(%s) = %d, %v; Members has it at %d", k, i, ok, want)
			}
		}
		if _, ok := el.Index(dag.Key{}); ok {
			t.Fatal("the zero key is a member")
		}
	})
}

// TestElectorateZeroValue: a zero Electorate has no members.
func TestElectorateZeroValue(t *testing.T) {
	var el rules.Electorate
	if _, ok := el.Index(member(0)); ok || el.Has(member(0)) || el.Len() != 0 {
		t.Fatal("a zero Electorate has a member")
	}
}
