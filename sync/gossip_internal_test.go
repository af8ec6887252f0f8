package sync

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// The last-announcement set holds at most its bound, forgetting the least
// recently heard sender first, and still tells a repeat from a change.
func TestSeenSetBounded(t *testing.T) {
	s := newSeenSet(3)
	k := func(i int) jobKey { return jobKey{peer.ID(rune('a' + i)), "s"} }
	d := func(b byte) [32]byte { return [32]byte{b} }
	for i := range 3 {
		if s.put(k(i), d(1)) {
			t.Fatalf("first announcement of %d counted as a repeat", i)
		}
	}
	if !s.put(k(0), d(1)) || s.put(k(0), d(2)) {
		t.Fatal("repeat and change of sender 0 not told apart")
	}
	s.put(k(3), d(1)) // forgets sender 1, the least recently heard
	if s.len() != 3 {
		t.Fatalf("%d remembered, want 3", s.len())
	}
	if s.put(k(1), d(1)) {
		t.Fatal("sender 1 should have been forgotten")
	}
	if !s.put(k(0), d(2)) {
		t.Fatal("sender 0, heard recently, should be remembered")
	}
}

// A peer gets GossipBurst messages at once, then GossipRate a second;
// the RPCs over it are dropped and lower its score, which recovers once
// it keeps to its rate.
func TestFloodGate(t *testing.T) {
	g := &floodGate{peers: map[peer.ID]*floodBucket{}}
	p := peer.ID("p")
	now := time.Unix(0, 0)
	if !g.admit(p, GossipBurst, now) {
		t.Fatal("a burst of GossipBurst refused")
	}
	for range 2 {
		if g.admit(p, 1, now) {
			t.Fatal("a message past the burst admitted")
		}
	}
	if g.penalty(p) != -2 {
		t.Fatalf("penalty %v after two drops, want -2", g.penalty(p))
	}
	now = now.Add(time.Second)
	if !g.admit(p, GossipRate, now) || g.admit(p, 1, now) {
		t.Fatal("one second should admit GossipRate messages, no more")
	}
	now = now.Add(10 * time.Second)
	if !g.admit(p, 1, now) || g.penalty(p) < -0.01 {
		t.Fatalf("penalty %v after ten quiet seconds", g.penalty(p))
	}
	g.forget(p)
	if len(g.peers) != 0 {
		t.Fatal("forget kept the peer")
	}
}
