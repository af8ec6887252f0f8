package sync_test

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// A peer already subscribed to a space when this node joins it hears this
// node's announcements at once: its subscription, which arrived while the
// space was not joined here, is in gossipsub's topic table when the node
// joins (a class: the teacher's node subscribes first, the students'
// nodes join the session later and must reach the teacher with their
// first write, not at the next periodic pull).
func TestLateJoinerReachesEarlySubscriber(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	ctx := context.Background()
	root := synctest.NewAuthor(210)
	space, data, _ := root.Session("late join")
	early := synctest.NewMem(synctest.Options{})
	if _, err := early.Submit(ctx, data); err != nil {
		t.Fatal(err)
	}
	// The periodic pull and re-announcement are an hour away: only gossip
	// can carry the late joiner's write in time.
	cfg := ws.Config{
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Spaces:      []string{space},
		Debounce:    20 * time.Millisecond,
		Interval:    time.Hour,
	}
	en, err := ws.NewNode(ctx, early, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })

	late := synctest.NewMem(synctest.Options{})
	cfg.Spaces = nil
	cfg.Peers = []string{en.Addrs()[0]}
	ln, err := ws.NewNode(ctx, late, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// The early node's subscriptions reach the late one on connecting,
	// before it joins the space.
	waitFor(t, 10*time.Second, "the early node among the late one's offers", func() bool {
		for _, o := range ln.Available() {
			if o.Space == space && !o.Joined {
				return true
			}
		}
		return false
	})
	if got := ln.Host().Network().Connectedness(en.Host().ID()); got != network.Connected {
		t.Fatalf("late node to early one: %v", got)
	}
	if err := ln.Join(space); err != nil {
		t.Fatal(err)
	}
	// Joining pulls the space from the connected early node.
	waitFor(t, 10*time.Second, "the root at the late node", func() bool { return count(t, late, space) == 1 })
	if _, err := synctest.NewAuthor(211).Write(ctx, late, space, 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// The bound is far above gossip's milliseconds and far below the
	// hour-long pull, so that a loaded machine does not fail it.
	deadline := time.Now().Add(30 * time.Second)
	for count(t, early, space) != 2 {
		if time.Now().After(deadline) {
			// The counters tell a lost announcement (late Sent, early
			// Received 0) from a pull that failed (early Triggered).
			t.Fatalf("the late joiner's write not at the early node within 30s: late %+v; early %+v", ln.Stats(), en.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the late joiner's write reached the early node in %s", time.Since(start).Round(time.Millisecond))
}
