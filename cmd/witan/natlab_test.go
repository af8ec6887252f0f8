package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// TestNATLabSeed writes a session of WITAN_NATLAB_N ballots (and their
// create, groups and MRs) into the witan up data directory
// WITAN_NATLAB_SEED, and its id to the file "space" there, for
// scripts/natlab.sh. It runs only when asked.
func TestNATLabSeed(t *testing.T) {
	dir := os.Getenv("WITAN_NATLAB_SEED")
	if dir == "" {
		t.Skip("WITAN_NATLAB_SEED names the data directory to seed (scripts/natlab.sh)")
	}
	n, err := strconv.Atoi(os.Getenv("WITAN_NATLAB_N"))
	if err != nil || n < 1 {
		t.Fatalf("WITAN_NATLAB_N=%q: want a count of ballots", os.Getenv("WITAN_NATLAB_N"))
	}
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := node.LoadOrCreateKey(filepath.Join(dir, "node.key"))
	if err != nil {
		t.Fatal(err)
	}
	nd, err := node.Open(ctx, node.Options{Dir: filepath.Join(dir, "badger"), NodeKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer nd.Close()
	b := ht.New(ht.Options{Simulation: true, Label: "natlab"})
	space := b.Session.String()
	ballots := b.BallotLoad(n, 200, func(tx ht.Tx) {
		if _, err := nd.Submit(ctx, tx.Bytes, tx.Attach); err != nil {
			t.Fatal(err)
		}
	})
	for i := 0; i < len(ballots); i += 2000 {
		var items []sync.Item
		for _, tx := range ballots[i:min(i+2000, len(ballots))] {
			items = append(items, sync.Item{Data: tx.Bytes})
		}
		res, err := nd.Ingest(ctx, space, items)
		if err != nil || res.Count(sync.Accepted) != len(items) {
			t.Fatalf("ballots %d…: %v, %d of %d accepted", i, err, res.Count(sync.Accepted), len(items))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "space"), []byte(space+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %s with %d ballots in %s", space, n, dir)
}
