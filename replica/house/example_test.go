package house_test

import (
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/rules"
)

// Admit entries one at a time, or Derive the same state from the set: the
// state hash is the same whatever the order.
func Example() {
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 3), ht.Members(0, 1), b.Create.ID)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 3), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
	yes := b.Ballot(ht.Member(1), mr, "approve", dag.ID{}, open.ID)
	no := b.Ballot(ht.Member(2), mr, "reject", dag.ID{}, open.ID)
	forged := b.Ballot(ht.Member(7), mr, "approve", dag.ID{}, open.ID) // not in the electorate

	h := house.New(b.Session, b.Objects)
	for _, tx := range []ht.Tx{b.Create, roster, open, no, yes, forged} {
		if err := h.Admit(tx.ID, tx.Env); err != nil {
			fmt.Println("refused:", dag.CodeOf(err))
		}
	}
	t, _ := h.Tally(mr, rules.Context{})
	fmt.Println("approve", t.Tally.Approve, "reject", t.Tally.Reject, "of", t.Tally.Electorate, "->", t.IfClosed)

	full, refused, _, _ := house.Derive(b.Session, ht.Input(forged, yes, no, open, roster, b.Create), b.Objects)
	a, _ := h.State().Hash()
	f, _ := full.State().Hash()
	fmt.Println("refused by Derive:", len(refused), "same state:", a == f)
	// Output:
	// refused: ballot_invalid
	// approve 1 reject 1 of 3 -> pending
	// refused by Derive: 1 same state: true
}
