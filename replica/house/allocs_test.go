//go:build !race

package house_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// TestBallotAdmitAllocations guards the binding path's allocations: an
// admitted ballot costs no allocation of its own beyond its share of the
// arenas' growth. Twice already a closure or an address taken in
// admission moved every entry's admission record to the heap (one
// allocation per entry, S11 derivation 2-4x slower); this test fails
// when that happens again. (Not under -race, which allocates.)
func TestBallotAdmitAllocations(t *testing.T) {
	const n = 400
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, n), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, n), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	h := house.New(b.Session, b.Objects)
	for _, tx := range []ht.Tx{b.Create, roster, open} {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatal(err)
		}
	}
	ballots := make([]ht.Tx, n)
	last := open.ID
	for i := range ballots {
		ballots[i] = b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last)
		last = ballots[i].ID
	}
	// Half admitted first, so that the arenas have grown past their
	// first small sizes.
	for _, tx := range ballots[:n/2] {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatal(err)
		}
	}
	next := n / 2
	got := testing.AllocsPerRun(n/2-1, func() {
		tx := ballots[next]
		next++
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.2f allocations per admitted ballot", got)
	if got >= 1 {
		t.Fatalf("%.2f allocations per admitted ballot, want less than one", got)
	}
}
