package sync_test

import (
	"context"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestIdleNodesInSyncDoNotPull: four nodes holding the same space of 70
// heads (more than an announcement names) pull nothing on each other's
// re-announcements, and skip some of their own because a peer announced
// the same heads in the period (Trickle). Counts only: on a loaded
// machine fewer announcements may be skipped, never a pull made.
func TestIdleNodesInSyncDoNotPull(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	ctx := context.Background()
	c := newClusterWith(t, 4, func(cfg *ws.Config) { cfg.Interval = 500 * time.Millisecond })
	root := heads(t, c.replicas[0], c.space)
	author := synctest.NewAuthor(7)
	for i := range 70 {
		data, _ := author.Entry(c.space, []dag.ID{root[0]}, i)
		if _, err := c.replicas[0].Submit(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "70 heads everywhere", func() bool {
		return c.converged(t) && len(heads(t, c.replicas[3], c.space)) == 70
	})
	time.Sleep(2 * time.Second) // what the writes set off ends
	sum := func() (st ws.AnnounceStats) {
		for _, n := range c.nodes {
			g := n.Stats()
			st.Triggered += g.Triggered
			st.DigestPulls += g.DigestPulls
			st.Redundant += g.Redundant
			st.InSync += g.InSync
			st.Sent += g.Sent
		}
		return st
	}
	before := sum()
	time.Sleep(4 * time.Second) // about 8 periods of each node
	after := sum()
	t.Logf("in 4 s: sent %d, skipped as redundant %d, received in sync %d, pulls %d",
		after.Sent-before.Sent, after.Redundant-before.Redundant, after.InSync-before.InSync, after.Triggered-before.Triggered)
	if d := after.Triggered - before.Triggered; d != 0 {
		t.Errorf("nodes in sync set off %d pulls (%d for a digest)", d, after.DigestPulls-before.DigestPulls)
	}
	if after.InSync == before.InSync {
		t.Error("no re-announcement was received")
	}
	if after.Redundant == before.Redundant {
		t.Error("no re-announcement was skipped")
	}
}

// TestManySendersOneDigestPull: three nodes hold an entry that a fourth
// lacks and that none of their announcements names (eight newer entries
// follow it, which the fourth holds). Each of the three announces the
// same heads; the fourth pulls once, for the digest, and converges.
func TestManySendersOneDigestPull(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	ctx := context.Background()
	// A long debounce: each node announces its writes below at once.
	c := newClusterWith(t, 4, func(cfg *ws.Config) { cfg.Debounce = 500 * time.Millisecond; cfg.Interval = time.Hour })
	waitFor(t, 20*time.Second, "root everywhere and the fourth node connected", func() bool {
		return c.converged(t) && len(c.nodes[3].Host().Network().Peers()) >= 2
	})
	time.Sleep(time.Second) // the pulls of the new connections end
	root := heads(t, c.replicas[0], c.space)
	author := synctest.NewAuthor(7)
	var datas [][]byte
	for i := range 1 + ws.NamedHeads {
		data, _ := author.Entry(c.space, []dag.ID{root[0]}, i)
		datas = append(datas, data)
	}
	before := c.nodes[3].Stats()
	// The fourth first: it holds the newer entries before the others
	// announce them.
	for _, i := range []int{3, 0, 1, 2} {
		r := c.replicas[i]
		for k, data := range datas {
			if k == 0 && i == 3 {
				continue // the fourth never gets the first
			}
			if _, err := r.Submit(ctx, data); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, 20*time.Second, "the fourth node holding the first entry", func() bool {
		return c.converged(t) && len(heads(t, c.replicas[3], c.space)) == 1+ws.NamedHeads
	})
	time.Sleep(time.Second) // the other announcements arrive
	after := c.nodes[3].Stats()
	t.Logf("fourth node: received %d, in sync %d, pulls %d (for a digest %d)", after.Received-before.Received,
		after.InSync-before.InSync, after.Triggered-before.Triggered, after.DigestPulls-before.DigestPulls)
	// One pull, for the digest; none if the entry came by another way
	// first (a reply to the fourth node's own announcement is the same
	// digest, and counts as this one).
	if d := after.Triggered - before.Triggered; d > 1 || after.DigestPulls-before.DigestPulls != d {
		t.Errorf("%d pulls set off by three announcements of one digest (%d for the digest), want at most one, for the digest",
			d, after.DigestPulls-before.DigestPulls)
	}
}
