package sync_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestAvailable: a node lists the spaces a connected peer announces (its
// gossip subscriptions: what it holds and what it joined), marks those
// it joined itself, keeps at most MaxOffersPerPeer per peer, and forgets
// a peer that disconnects.
func TestAvailable(t *testing.T) {
	ctx := context.Background()
	root := synctest.NewAuthor(7)
	held, data, _ := root.Session("available")
	a := synctest.NewMem(synctest.Options{})
	if _, err := a.Submit(ctx, data); err != nil {
		t.Fatal(err)
	}
	// A holds one space and was told to join many more than the cap.
	spaces := []string{held}
	for i := range ws.MaxOffersPerPeer + 20 {
		spaces = append(spaces, fmt.Sprintf("mem:s%03d", i))
	}
	na, err := ws.NewNode(ctx, a, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: spaces, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer na.Close()
	nb, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	if got := nb.Available(); len(got) != 0 {
		t.Fatalf("before any peer: %v", got)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := nb.Connect(cctx, na.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "A's spaces listed", func() bool { return len(nb.Available()) == ws.MaxOffersPerPeer })
	got := nb.Available()
	if !slices.IsSortedFunc(got, func(x, y ws.Offer) int { return compare(x.Space, y.Space) }) {
		t.Fatal("not sorted")
	}
	for _, o := range got {
		if !slices.Equal(o.Peers, []peer.ID{na.ID()}) || o.Joined {
			t.Fatalf("offer %+v", o)
		}
	}
	// Counted per message: gossipsub may repeat a subscription.
	if st := nb.Stats(); st.OffersIgnored < 20 {
		t.Fatalf("ignored %d subscriptions, want at least the 20 over the cap", st.OffersIgnored)
	}
	// B joins one: it is marked joined.
	first := got[0].Space
	if err := nb.Join(first); err != nil {
		t.Fatal(err)
	}
	if o := nb.Available()[0]; o.Space != first || !o.Joined {
		t.Fatalf("after joining: %+v", o)
	}
	// A leaves: nothing is offered any more.
	if err := nb.Disconnect(na.ID()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "A forgotten", func() bool { return len(nb.Available()) == 0 })
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestLeave: a space a node joined and then left is no longer offered to
// its connected peer (gossipsub's unsubscription), is not listed among
// its own spaces, and can be joined again; leaving twice is a no-op.
func TestLeave(t *testing.T) {
	ctx := context.Background()
	open := func() *ws.Node {
		n, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	na, nb := open(), open()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := nb.Connect(cctx, na.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	offered := func() bool {
		for _, o := range nb.Available() {
			if o.Space == "mem:left" && slices.Contains(o.Peers, na.ID()) {
				return true
			}
		}
		return false
	}
	if err := na.Join("mem:left"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "A's join offered to B", offered)
	for range 2 {
		if err := na.Leave("mem:left"); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Contains(na.Spaces(), "mem:left") {
		t.Fatalf("A still lists it: %v", na.Spaces())
	}
	waitFor(t, 20*time.Second, "A's leave seen by B", func() bool { return !offered() })
	if err := na.Join("mem:left"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "A's second join offered to B", offered)
}
