package sync_test

import (
	"testing"
	"time"

	ws "github.com/witan-dev/witan/sync"
)

// Under content ids (Config.ContentIDs) the same heads announced by every node
// are one gossip message: once a node has seen it, the re-announcements
// of unchanged heads, its own and its peers', are dropped as seen, until
// gossipsub forgets the id (its seen-messages sweep runs a minute after
// it starts, so not within this test). Under sender ids each node's
// re-announcement is a message of its own, delivered to every other.
func TestContentIDsAnnounceSameHeadsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	for _, senderIDs := range []bool{false, true} {
		start := time.Now()
		c := newClusterWith(t, 4, func(cfg *ws.Config) { cfg.ContentIDs = !senderIDs })
		waitFor(t, 20*time.Second, "root everywhere", func() bool { return c.converged(t) })
		received := func() (sum uint64) {
			for _, n := range c.nodes {
				sum += n.Stats().Received
			}
			return sum
		}
		// The announcements of the root settle first: a node whose root
		// came by a pull does not announce it, nor re-announce it in the
		// next period (Derived), so the first copy a node sees may be a
		// peer's re-announcement, a period or two (300 ms each) after the
		// topic's mesh forms (gossipsub's heartbeat, 1 s). Waited for, not
		// slept on: once every node has sent or received it, every node
		// has seen the message, and under content ids no copy of it is new
		// to any node; a fixed pause that a loaded machine outlasted left
		// a first delivery inside the window below.
		waitFor(t, 30*time.Second, "every node to have sent or received an announcement", func() bool {
			for _, n := range c.nodes {
				if st := n.Stats(); st.Sent+st.Received == 0 {
					return false
				}
			}
			return true
		})
		time.Sleep(time.Second) // the copies on their way arrive
		before := received()
		// Each node re-announces every 300 ms ± 25 %: about ten times
		// each in 3 s.
		time.Sleep(3 * time.Second)
		got := received() - before
		t.Logf("sender ids %v: %d announcements delivered in 3 s of re-announcing the same heads", senderIDs, got)
		switch {
		case senderIDs && got < 4:
			t.Errorf("sender ids: %d re-announcements delivered, want each node's to arrive", got)
		case !senderIDs && got > 0:
			if time.Since(start) < 50*time.Second {
				t.Errorf("content ids: %d re-announcements of seen heads delivered", got)
			} else {
				t.Logf("(the run took %v: gossipsub's sweep may have forgotten the id)", time.Since(start))
			}
		}
	}
}
