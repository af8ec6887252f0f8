package sync_test

import (
	"context"
	gosync "sync"
	"testing"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// Pulls of one space from one peer run one at a time: four callers
// pulling at once from a fresh node receive every entry once in all (the
// first pull brings them; the others find nothing missing), not four
// times over.
func TestSyncWithSamePeerSpaceOneAtATime(t *testing.T) {
	ctx := context.Background()
	src, space := build(t, 300)
	want := count(t, src, space)
	cfg := ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true}
	a, err := ws.NewNode(ctx, src, ws.Config{ListenAddrs: cfg.ListenAddrs, Manual: true, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dst := synctest.NewMem(synctest.Options{})
	b, err := ws.NewNode(ctx, dst, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Connect(ctx, a.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	const callers = 4
	stats := make([]ws.Stats, callers)
	errs := make([]error, callers)
	var wg gosync.WaitGroup
	for i := range callers {
		wg.Go(func() { stats[i], errs[i] = b.SyncWith(ctx, a.ID(), space) })
	}
	wg.Wait()
	received, accepted := 0, 0
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("pull %d: %v", i, errs[i])
		}
		received += stats[i].Received
		accepted += stats[i].Accepted
	}
	if received != want || accepted != want {
		t.Fatalf("received %d, accepted %d in all; want each %d (the space once)", received, accepted, want)
	}
	if got := count(t, dst, space); got != want {
		t.Fatalf("dst holds %d entries, want %d", got, want)
	}
}
