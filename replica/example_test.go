package replica_test

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

// A session from genesis to a merged amendment: submit signed envelopes,
// read the tally and the MR, and watch finality move from provisional to
// final_advisory when the node checkpoints its log.
func Example() {
	ctx := context.Background()
	node, _ := dag.SignerFromSeed(make([]byte, 32))
	now := time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC)
	r, err := replica.Open(ctx, replica.Options{InMemory: true, NodeKey: node, Clock: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	b := ht.New(ht.Options{Label: "example"})
	last := b.Create.ID
	submit := func(tx ht.Tx) {
		rc, err := r.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil || rc.Status != "accepted" {
			panic(fmt.Sprint(err, rc.Errors))
		}
		last = tx.ID
	}
	submit(b.Create)
	submit(b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), last))
	submit(b.GroupCreate(ht.Member(0), "drafters", ht.Members(0, 2), ht.Members(0, 1), last))
	submit(b.BranchCreate(ht.Member(0), "draft", "drafters", house.RootBranch, b.Genesis, false, ht.AlwaysAllow(), ht.TwoThirds(), last))
	amend, change := b.Append(ht.Member(1), "draft", b.Genesis, []statute.Op{ht.Replace(b.Seed, "/us/t1/s1", "The period is 45 days.")}, last)
	submit(amend)
	open, mr := b.Open(ht.Member(1), ht.MR{Source: "draft", SourceHead: change, TargetHead: b.Genesis, Members: ht.Members(0, 5), Rule: ht.Majority(house.MinRootNotice)}, last)
	submit(open)
	var ballots []dag.ID
	for i := 0; i < 3; i++ {
		tx := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, last)
		submit(tx)
		ballots = append(ballots, tx.ID)
	}
	tally, _ := view.New(r).Tally(ctx, b.Session, mr)
	fmt.Println("tally:", tally.Result.Tally.Approve, "of", tally.Result.Tally.Electorate, tally.Result.IfClosed, tally.Finality)
	submit(b.Determine(ht.Member(4), mr, ballots, "approved", last))
	m, _ := view.New(r).MR(ctx, b.Session, mr)
	fmt.Println("mr:", m.Status, m.Finality)
	now = now.Add(72 * time.Hour)
	if _, err := r.Checkpoint(ctx, b.Session); err != nil {
		panic(err)
	}
	m, _ = view.New(r).MR(ctx, b.Session, mr)
	fmt.Println("mr:", m.Status, m.Finality)
	// Output:
	// tally: 3 of 5 approved provisional
	// mr: merged provisional
	// mr: merged final_advisory
}
