package house_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// replay delivers txs to a fresh House in the given order, holding back
// entries whose parents have not arrived (the store's pending set) and
// refusing the children of refused entries (quarantine).
type fataler interface{ Fatal(args ...any) }

func replay(t fataler, b *ht.Builder, order []ht.Tx) (*house.House, []dag.ID) {
	h := house.New(b.Session, b.Objects)
	state := map[dag.ID]int{} // 1 admitted, 2 refused
	var waiting []ht.Tx
	try := func(tx ht.Tx) bool {
		if state[tx.ID] != 0 {
			return true
		}
		for _, p := range tx.Parents {
			switch state[p] {
			case 0:
				return false
			case 2:
				state[tx.ID] = 2
				return true
			}
		}
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			if dag.CodeOf(err) == "" {
				t.Fatal(err)
			}
			state[tx.ID] = 2
		} else {
			state[tx.ID] = 1
		}
		return true
	}
	for _, tx := range order {
		waiting = append(waiting, tx)
		for progress := true; progress; {
			progress = false
			rest := waiting[:0]
			for _, w := range waiting {
				if try(w) {
					progress = true
				} else {
					rest = append(rest, w)
				}
			}
			waiting = rest
		}
	}
	var refused []dag.ID
	for id, s := range state {
		if s == 2 {
			refused = append(refused, id)
		}
	}
	slices.SortFunc(refused, dag.ID.Compare)
	return h, refused
}

func stateHash(t fataler, h *house.House) (dag.ID, []byte) {
	st := h.State()
	b, err := st.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return dag.Sum(b), b
}

// TestConvergence: random histories with concurrent views, conflicts and
// invalid entries, delivered to several replicas in random orders with
// duplicates, give identical state hashes and identical refusal sets; and
// the incremental state equals the full derivation.
func TestConvergence(t *testing.T) {
	var live, folded int // determinations evaluated from the live poll, and folded again
	check := func(t *rapid.T, h *house.House) {
		l, f, err := h.RecheckDeterminations()
		if err != nil {
			t.Fatal(err)
		}
		live, folded = live+l, folded+f
	}
	defer func() {
		t.Logf("determinations evaluated: %d from the live poll, %d folded again", live, folded)
		if !t.Failed() && live+folded >= 100 && (live == 0 || folded == 0) {
			t.Errorf("determinations evaluated: %d from the live poll, %d folded again: the test should exercise both ways", live, folded)
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		hs := ht.GenHistory(t)
		var want dag.ID
		var wantJSON []byte
		var wantRefused []dag.ID
		for r := 0; r < 3; r++ {
			order := slices.Clone(hs.All)
			perm := rapid.Permutation(order).Draw(t, fmt.Sprintf("order%d", r))
			dups := rapid.SliceOfN(rapid.IntRange(0, len(perm)-1), 0, 5).Draw(t, fmt.Sprintf("dups%d", r))
			for _, d := range dups {
				perm = append(perm, perm[d])
			}
			h, refused := replay(t, hs.B, perm)
			check(t, h)
			got, js := stateHash(t, h)
			if r == 0 {
				want, wantJSON, wantRefused = got, js, refused
				continue
			}
			if got != want {
				t.Fatalf("replica %d state differs:\n%s\nwant\n%s", r, js, wantJSON)
			}
			if !slices.Equal(refused, wantRefused) {
				t.Fatalf("replica %d refused %v, want %v", r, refused, wantRefused)
			}
		}
		// The full derivation from the set, given in a random order (so in
		// witan's deterministic topological order).
		shuffled := rapid.Permutation(hs.All).Draw(t, "derive order")
		full, refused, pending, err := house.Derive(hs.B.Session, ht.Input(shuffled...), hs.B.Objects)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) > 0 {
			t.Fatalf("pending after full derivation: %v", pending)
		}
		check(t, full)
		got, js := stateHash(t, full)
		if got != want {
			t.Fatalf("full derivation differs from incremental:\n%s\nwant\n%s", js, wantJSON)
		}
		ids := make([]dag.ID, len(refused))
		for i, r := range refused {
			ids[i] = r.ID
		}
		if !slices.Equal(ids, wantRefused) {
			t.Fatalf("full derivation refused %v, incremental %v", ids, wantRefused)
		}
	})
}
