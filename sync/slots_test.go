package sync_test

import (
	"context"
	"os"
	gosync "sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// inboundSync counts the sync streams (of either protocol) others hold
// open to n.
func inboundSync(n *ws.Node) int {
	c := 0
	for _, conn := range n.Host().Network().Conns() {
		for _, s := range conn.GetStreams() {
			if (s.Protocol() == protocol.ID(ws.ProtocolID) || s.Protocol() == protocol.ID(ws.ProtocolDeflateID)) && s.Stat().Direction == network.DirInbound {
				c++
			}
		}
	}
	return c
}

// trickle opens n /witan/sync/2 streams from each of peers fresh libp2p
// hosts (separate hosts on loopback, as hostile classmates on the same
// Wi-Fi would be) to the victim, and sends on each one byte of a frame's
// length every period, never completing it, until ctx ends. It returns
// how many streams were opened (each may still be refused).
func trickle(ctx context.Context, t testing.TB, victim *ws.Node, peers, n int, period time.Duration) int {
	t.Helper()
	target := peer.AddrInfo{ID: victim.ID(), Addrs: victim.Host().Addrs()}
	opened := 0
	var wg gosync.WaitGroup
	t.Cleanup(wg.Wait)
	for range peers {
		h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		if err := h.Connect(ctx, target); err != nil {
			t.Fatal(err)
		}
		for range n {
			s, err := h.NewStream(ctx, victim.ID(), protocol.ID(ws.ProtocolID))
			if err != nil {
				continue
			}
			opened++
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.Reset()
				// 0x80 is a varint's first byte with more to come: the
				// frame's length never ends.
				for {
					if _, err := s.Write([]byte{0x80}); err != nil {
						return
					}
					select {
					case <-ctx.Done():
						return
					case <-time.After(period):
					}
				}
			}()
		}
	}
	return opened
}

// Peers that hold sync streams open by trickling a byte now and then
// cannot get a node cut off by its honest peers: the honest peer's pulls
// keep working in one round trip during the attack, the victim is never
// charged for a stream it could not serve, and the trickling streams lose
// their slots after one frame's deadline. 20 fake peers × 64 streams
// (WITAN_HOSTILE_FULL=1: 100 × 64); each tries to hold 64, four times the
// per-peer limit, and together five times the node's total.
func TestTricklingPeersCannotCutOffANode(t *testing.T) {
	peers, per := 20, 64
	if os.Getenv("WITAN_HOSTILE_FULL") != "" {
		peers = 100
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src, space := build(t, 50)
	const timeout = 3 * time.Second
	victim, err := ws.NewNode(ctx, src, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space}, StreamTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	honest := synctest.NewMem(synctest.Options{})
	hn, err := ws.NewNode(ctx, honest, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer hn.Close()
	if err := hn.Connect(ctx, victim.Addrs()[0]); err != nil {
		t.Fatal(err)
	}

	actx, stopAttack := context.WithCancel(ctx)
	defer stopAttack()
	opened := trickle(actx, t, victim, peers, per, timeout/4)
	held := inboundSync(victim)
	t.Logf("%d fake peers × %d streams: %d opened, victim holds %d inbound sync streams", peers, per, opened, held)

	// The honest peer pulls again and again during the attack: more than
	// the Malformed budget (4) of failures would have cut the victim off.
	for i := range 6 {
		st, err := hn.SyncWith(ctx, victim.ID(), space)
		if err != nil {
			t.Fatalf("honest pull %d during the attack: %v", i+1, err)
		}
		if st.Rounds != 1 {
			t.Fatalf("honest pull %d took %d round trips, want 1", i+1, st.Rounds)
		}
		if i == 0 && st.Accepted != 51 {
			t.Fatalf("honest pull 1 accepted %d entries, want 51", st.Accepted)
		}
	}
	if banned, until := hn.Engine().Banned(victim.ID().String()); banned {
		t.Fatalf("the honest peer cut the victim off until %s", until)
	}

	// The trickling streams never complete a frame: each loses its slot
	// within one frame's deadline, though bytes keep coming.
	waitFor(t, 3*timeout, "the trickling streams to lose their slots", func() bool {
		return inboundSync(victim) <= 16
	})
	t.Logf("trickling streams cut: victim holds %d inbound sync streams (busy %d, evicted %d)", inboundSync(victim), victim.Stats().Busy, victim.Stats().Evicted)
	stopAttack()

	// A pull after the attack works too.
	extend(t, src, space, 5, 7)
	if st, err := hn.SyncWith(ctx, victim.ID(), space); err != nil || st.Accepted != 5 || st.Rounds != 1 {
		t.Fatalf("honest pull after the attack: %+v %v", st, err)
	}
}

// A responder with no slot free says so (CodeBusy, the stream's first
// frame) and the requester recognises it: it charges the responder
// nothing, however often it happens, and pulls as soon as a slot frees.
func TestBusyResponderIsNotCharged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, space := build(t, 10)
	victim, err := ws.NewNode(ctx, src, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space},
		Limits: ws.Limits{Streams: 2, StreamsPerPeer: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	hn, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer hn.Close()
	if err := hn.Connect(ctx, victim.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	// Two peers hold one slot each: every slot is taken, and nobody holds
	// more than one above the honest peer's none.
	actx, stopAttack := context.WithCancel(ctx)
	trickle(actx, t, victim, 2, 1, 100*time.Millisecond)
	waitFor(t, 5*time.Second, "two held streams", func() bool { return inboundSync(victim) == 2 })
	for i := range 6 {
		_, err := hn.SyncWith(ctx, victim.ID(), space)
		if ws.CodeOf(err) != ws.CodeBusy {
			t.Fatalf("pull %d with every slot taken: %v, want code busy", i+1, err)
		}
	}
	if banned, _ := hn.Engine().Banned(victim.ID().String()); banned {
		t.Fatal("a busy responder was cut off")
	}
	if b := victim.Stats().Busy; b != 6 {
		t.Errorf("victim counted %d busy refusals, want 6", b)
	}
	stopAttack()
	waitFor(t, 5*time.Second, "the held streams to end", func() bool { return inboundSync(victim) == 0 })
	if st, err := hn.SyncWith(ctx, victim.ID(), space); err != nil || st.Accepted != 11 || st.Rounds != 1 {
		t.Fatalf("pull once a slot is free: %+v %v", st, err)
	}
}
