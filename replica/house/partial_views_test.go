package house_test

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestPartialViewsMatchState: Branches, Branch and Group answer exactly
// what State holds of them (the HTTP reads use them so as not to derive
// the whole state), and a name State lacks is not found.
func TestPartialViewsMatchState(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hs := ht.GenHistory(t)
		h, _ := replay(t, hs.B, hs.All)
		st := h.State()
		js := func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		if got, want := js(h.Branches()), js(st.Branches); got != want {
			t.Fatalf("Branches %s\nState's %s", got, want)
		}
		for _, b := range st.Branches {
			if got, ok := h.Branch(b.Name); !ok || js(got) != js(b) {
				t.Fatalf("Branch(%q) = %s, %v; State's %s", b.Name, js(got), ok, js(b))
			}
		}
		for _, g := range st.Groups {
			if got, ok := h.Group(g.ID); !ok || js(got) != js(g) {
				t.Fatalf("Group(%q) = %s, %v; State's %s", g.ID, js(got), ok, js(g))
			}
		}
		if _, ok := h.Branch("no such branch"); ok {
			t.Fatal("Branch found a branch State lacks")
		}
		if _, ok := h.Group("no such group"); ok {
			t.Fatal("Group found a group State lacks")
		}
	})
}
