package node_test

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/simnet"
)

// TestNodesConvergeOverSimnet is the property docs/property-tests.md
// walks through: three real node.Nodes (in-memory Badger) on a simnet
// with lost, late and duplicated announcements and cut streams; each
// ballot of an MR is submitted to a random node, sometimes behind a
// partition; once healed, every node holds the same heads, derives the
// same state hash, and counts every ballot in the MR's tally.
func TestNodesConvergeOverSimnet(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		net := simnet.New(simnet.Config{
			Seed:     rapid.Uint64().Draw(rt, "seed"),
			Loss:     rapid.Float64Range(0, 0.3).Draw(rt, "loss"),
			Dup:      rapid.Float64Range(0, 0.2).Draw(rt, "dup"),
			MaxDelay: rapid.IntRange(0, 3).Draw(rt, "delay"),
		})
		names := []string{"a", "b", "c"}
		nodes := map[string]*node.Node{}
		for _, name := range names {
			n, err := node.Open(ctx, node.Options{InMemory: true})
			if err != nil {
				rt.Fatal(err)
			}
			defer n.Close()
			nodes[name] = n
			net.Add(name, n, sync.Options{})
		}
		voters := rapid.IntRange(1, 8).Draw(rt, "voters")
		b := ht.New(ht.Options{})
		roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, voters), ht.Members(0, 1), b.Create.ID)
		open, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
			Members: ht.Members(0, voters), Rule: ht.Majority(house.MinRootNotice)}, roster.ID)
		space := b.Session.String()
		// The session's head goes to one node; the others pull it.
		for _, tx := range []ht.Tx{b.Create, roster, open} {
			if rc, err := nodes["a"].Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Err() != nil {
				rt.Fatalf("%s: %v %v", tx.Env.Type, err, rc.Err())
			}
		}
		if _, err := net.RunUntilConverged(ctx, space, 200); err != nil {
			rt.Fatalf("the session's head: %v", err)
		}
		for i := 0; i < voters; i++ {
			if rapid.Bool().Draw(rt, fmt.Sprintf("partition %d", i)) {
				net.Partition([]string{"a"}, []string{"b", "c"})
			}
			at := rapid.SampledFrom(names).Draw(rt, fmt.Sprintf("node of ballot %d", i))
			tx := b.Ballot(ht.Member(i), mr, rapid.SampledFrom([]string{"approve", "reject", "abstain"}).Draw(rt, fmt.Sprintf("choice %d", i)), dag.ID{}, open.ID)
			if rc, err := nodes[at].Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Err() != nil {
				rt.Fatalf("ballot %d on %s: %v %v", i, at, err, rc.Err())
			}
			for r := rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("rounds %d", i)); r > 0; r-- {
				if err := net.Round(ctx); err != nil {
					rt.Fatal(err)
				}
			}
			net.Heal()
		}
		if _, err := net.RunUntilConverged(ctx, space, 500); err != nil {
			rt.Fatalf("after healing: %v (%+v)", err, net.Stats())
		}
		var want dag.ID
		for _, name := range names {
			_, h, err := nodes[name].Replica().State(ctx, b.Session)
			if err != nil {
				rt.Fatal(err)
			}
			if name == "a" {
				want = h
			} else if h != want {
				rt.Fatalf("node %s derives state %s, node a %s", name, h, want)
			}
			tl, err := nodes[name].Views().Tally(ctx, b.Session, mr)
			if err != nil {
				rt.Fatal(err)
			}
			if got := tl.Result.Tally.Ballots; got != uint64(voters) {
				rt.Fatalf("node %s counts %d ballots of %d", name, got, voters)
			}
		}
	})
}
