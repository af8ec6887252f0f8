package simnet_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/simnet"
	"github.com/witan-dev/witan/sync/synctest"
)

func ExampleNet() {
	ctx := context.Background()
	author := synctest.NewAuthor(1)
	space, root, _ := author.Session("example")

	n := simnet.New(simnet.Config{Seed: 1, Loss: 0.3, Dup: 0.1, MaxDelay: 2})
	var replicas []*synctest.Replica
	for _, name := range []string{"ana", "ben", "cai"} {
		r := synctest.NewMem(synctest.Options{})
		replicas = append(replicas, r)
		n.Add(name, r, sync.Options{})
	}
	replicas[0].Submit(ctx, root)
	author.Write(ctx, replicas[0], space, 20)

	n.Partition([]string{"ana"}, []string{"ben", "cai"})
	n.RunUntilConverged(ctx, space, 5) // cannot converge: ben and cai never hear of the space
	synctest.NewAuthor(2).Write(ctx, replicas[0], space, 5)
	n.Heal()
	rounds, err := n.RunUntilConverged(ctx, space, 50)
	fmt.Println(err, rounds > 0)
	ids, _ := replicas[2].Log(ctx, space, 0, 0)
	fmt.Println(len(ids))
	// Output:
	// <nil> true
	// 26
}

// TestRandomOpsConverge: random writes at random replicas under random
// partition schedules, with loss, duplication and delay, end with every
// replica holding the same heads and the same entries once healed.
func TestRandomOpsConverge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		nodes := rapid.IntRange(2, 5).Draw(t, "nodes")
		cfg := simnet.Config{
			Seed:     rapid.Uint64().Draw(t, "seed"),
			Loss:     rapid.Float64Range(0, 0.5).Draw(t, "loss"),
			Dup:      rapid.Float64Range(0, 0.3).Draw(t, "dup"),
			MaxDelay: rapid.IntRange(0, 3).Draw(t, "delay"),
		}
		n := simnet.New(cfg)
		names := make([]string, nodes)
		reps := make([]*synctest.Replica, nodes)
		authors := make([]*synctest.Author, nodes)
		for i := range reps {
			names[i] = fmt.Sprintf("r%d", i)
			reps[i] = synctest.NewMem(synctest.Options{})
			authors[i] = synctest.NewAuthor(byte(i + 1))
			n.Add(names[i], reps[i], sync.Options{})
		}
		space, root, _ := synctest.NewAuthor(99).Session("rapid")
		if _, err := reps[0].Submit(ctx, root); err != nil {
			t.Fatal(err)
		}
		total := 1
		steps := rapid.IntRange(1, 12).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // a replica that holds the space writes
				i := rapid.IntRange(0, nodes-1).Draw(t, "writer")
				if hs, _ := reps[i].Heads(ctx, space); len(hs) == 0 {
					continue
				}
				k := rapid.IntRange(1, 5).Draw(t, "entries")
				if _, err := authors[i].Write(ctx, reps[i], space, k); err != nil {
					t.Fatal(err)
				}
				total += k
			case 1: // a random partition
				perm := rapid.Permutation(names).Draw(t, "perm")
				cut := rapid.IntRange(1, nodes).Draw(t, "cut")
				n.Partition(perm[:cut], perm[cut:])
			case 2:
				n.Heal()
			case 3:
				for range rapid.IntRange(1, 3).Draw(t, "rounds") {
					if err := n.Round(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		n.Heal()
		if _, err := n.RunUntilConverged(ctx, space, 200); err != nil {
			t.Fatalf("%v (stats %+v)", err, n.Stats())
		}
		ref := entries(t, reps[0], space)
		if len(ref) != total {
			t.Fatalf("%d entries, %d written", len(ref), total)
		}
		for _, r := range reps[1:] {
			if !slices.Equal(ref, entries(t, r, space)) {
				t.Fatal("same heads, different entries")
			}
		}
	})
}

func entries(t *rapid.T, r *synctest.Replica, space string) []string {
	ids, err := r.Log(context.Background(), space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	slices.Sort(out)
	return out
}

// TestOnePullBringsEverything: over a perfect network, one pull leaves the
// puller holding every entry the other side holds, and sends nothing twice,
// whether or not the sides have synced before (Common known or not).
func TestOnePullBringsEverything(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		n := simnet.New(simnet.Config{Seed: rapid.Uint64().Draw(t, "seed")})
		a, b := synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{})
		na, nb := n.Add("a", a, sync.Options{}), n.Add("b", b, sync.Options{})
		space, root, _ := synctest.NewAuthor(99).Session("one pull")
		a.Submit(ctx, root)
		b.Submit(ctx, root)
		shared := rapid.IntRange(0, 30).Draw(t, "shared")
		if _, err := synctest.NewAuthor(1).Write(ctx, a, space, shared); err != nil {
			t.Fatal(err)
		}
		if err := n.Pull(ctx, nb, na, space); err != nil {
			t.Fatal(err)
		}
		if rapid.Bool().Draw(t, "b knows a's heads") {
			if err := n.Pull(ctx, na, nb, space); err != nil { // a records b's heads as Common
				t.Fatal(err)
			}
		}
		if _, err := synctest.NewAuthor(2).Write(ctx, a, space, rapid.IntRange(0, 40).Draw(t, "only a")); err != nil {
			t.Fatal(err)
		}
		if _, err := synctest.NewAuthor(3).Write(ctx, b, space, rapid.IntRange(0, 40).Draw(t, "only b")); err != nil {
			t.Fatal(err)
		}
		before := n.Stats()
		if err := n.Pull(ctx, nb, na, space); err != nil {
			t.Fatal(err)
		}
		after := n.Stats()
		if after.Failed != before.Failed || after.Duplicates != before.Duplicates {
			t.Fatalf("failed or duplicated: %+v → %+v", before, after)
		}
		have := map[string]bool{}
		for _, id := range entries(t, b, space) {
			have[id] = true
		}
		for _, id := range entries(t, a, space) {
			if !have[id] {
				t.Fatalf("b lacks %s after one pull", id)
			}
		}
	})
}
