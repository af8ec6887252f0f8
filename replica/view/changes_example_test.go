package view_test

import (
	"context"
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
)

// Two amendments opened on the same root head both pass. The second
// executes on the head the first moved the root to: its review is still
// the patch the electorate voted on, its merge change records the head it
// really executed on, and the law on a date has both, in order.
func ExampleReader_Review() {
	ctx := context.Background()
	node, _ := dag.SignerFromSeed(make([]byte, 32))
	now := time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: node, Clock: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	b := ht.New(ht.Options{Label: "example"})
	session := b.Session
	var last dag.ID
	submit := func(tx ht.Tx) {
		if rc, err := r.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			panic(fmt.Sprint(err, rc.Errors))
		}
		last = tx.ID
	}
	submit(b.Create)
	submit(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), last))
	submit(b.GroupCreate(ht.Member(0), "drafters", ht.Members(0, 2), ht.Members(0, 1), last))
	var mrs []dag.ID
	for i, branch := range []string{"draft-a", "draft-b"} {
		submit(b.BranchCreate(ht.Member(0), branch, "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
		nid := fmt.Sprintf("/us/t1/s%d", i+1)
		amend, change := b.Append(ht.Member(1), branch, b.Genesis, []statute.Op{ht.Replace(b.Seed, nid, "The period is 45 days.")}, last)
		submit(amend)
		open, mr := b.Open(ht.Member(1), ht.MR{Source: branch, SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, last)
		submit(open)
		mrs = append(mrs, mr)
	}
	for _, mr := range mrs {
		var ballots []dag.ID
		for i := 0; i < 3; i++ {
			tx := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last)
			submit(tx)
			ballots = append(ballots, tx.ID)
		}
		submit(b.Determine(ht.Member(4), mr, ballots, "approved", last))
	}
	first, _ := view.New(r).MR(ctx, session, mrs[0])
	second, _ := view.New(r).MR(ctx, session, mrs[1])

	rv, _ := view.New(r).Review(ctx, session, mrs[1])
	fmt.Println("second MR modifies:", rv.Diff().Modified, "merge-base is the genesis:", rv.Base == b.Genesis)
	c, _ := view.New(r).Change(ctx, session, *second.Merge)
	fmt.Println("its merge change follows the first merge:", c.Parents[0] == *first.Merge)

	now = now.Add(72 * time.Hour)
	if _, err := r.Checkpoint(ctx, session); err != nil {
		panic(err)
	}
	law, _ := view.New(r).LawAt(ctx, session, statute.MustDate("2026-09-24"), "")
	s1, _ := law.Tree.Get("/us/t1/s1")
	s2, _ := law.Tree.Get("/us/t1/s2")
	fmt.Println("in force on 2026-09-24:", law.Merges, "merges;", s1.Text, s2.Text, law.Finality)
	// Output:
	// second MR modifies: [/us/t1/s2] merge-base is the genesis: true
	// its merge change follows the first merge: true
	// in force on 2026-09-24: 2 merges; The period is 45 days. The period is 45 days. final_advisory
}
