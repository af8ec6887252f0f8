package sync_test

import (
	"context"
	"log/slog"
	"net"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/marcopolo/simnet"
	ma "github.com/multiformats/go-multiaddr"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// directGate refuses, while closed, every connection between a and b that
// is not relayed, and counts the direct dials it refused.
type directGate struct {
	a, b    peer.ID
	closed  atomic.Bool
	mu      gosync.Mutex
	refused int
}

func (g *directGate) blocks(p peer.ID, a ma.Multiaddr) bool {
	if p != g.a && p != g.b || !g.closed.Load() {
		return false
	}
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err != nil
}
func (g *directGate) InterceptPeerDial(peer.ID) bool { return true }
func (g *directGate) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	if g.blocks(p, a) {
		g.mu.Lock()
		g.refused++
		g.mu.Unlock()
		return false
	}
	return true
}
func (g *directGate) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g *directGate) InterceptSecured(_ network.Direction, p peer.ID, c network.ConnMultiaddrs) bool {
	return !g.blocks(p, c.RemoteMultiaddr())
}
func (g *directGate) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

func (g *directGate) refusals() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// staleRelayed is two private nodes on a simulated network, b connected to
// a only through a relay, by a connection whose hole punch failed: a gate
// refused direct connections while it was tried (in the field: one side
// did not speak DCUtR yet). The gates are open again when it returns.
type staleRelayed struct {
	a, b  *ws.Node
	gateA *directGate
}

// newStaleRelayed starts the relay and a and b over ra and rb; bDisc adds
// to b's discovery settings and bLog, if not nil, takes b's log.
func newStaleRelayed(t *testing.T, ctx context.Context, ra, rb *synctest.Replica, bDisc ws.Discovery, bLog *slog.Logger) staleRelayed {
	t.Helper()
	router := &simnet.SimpleFirewallRouter{}
	relayAddr := &net.UDPAddr{IP: net.IPv4(1, 2, 0, 1), Port: 4001}
	relay, err := ws.NewRelay(ctx, ws.RelayConfig{
		ListenAddrs: []string{"/ip4/1.2.0.1/udp/4001/quic-v1"},
		HostOptions: []libp2p.Option{onSimnet(router, relayAddr, true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close() })
	boot := relay.Addrs()[0]

	keyA, _, _ := crypto.GenerateEd25519Key(nil)
	keyB, _, _ := crypto.GenerateEd25519Key(nil)
	idA, _ := peer.IDFromPrivateKey(keyA)
	idB, _ := peer.IDFromPrivateKey(keyB)
	gateA, gateB := &directGate{a: idA, b: idB}, &directGate{a: idA, b: idB}
	gateA.closed.Store(true)
	gateB.closed.Store(true)
	start := func(r *synctest.Replica, ip net.IP, key crypto.PrivKey, gate *directGate, disc ws.Discovery, log *slog.Logger) *ws.Node {
		a := &net.UDPAddr{IP: ip, Port: 8000}
		disc.Bootstrap, disc.Relays, disc.Reachability = []string{boot}, []string{boot}, "private"
		n, err := ws.NewNode(ctx, r, ws.Config{
			ListenAddrs: []string{"/ip4/" + ip.String() + "/udp/8000/quic-v1"},
			Identity:    key,
			Discovery:   disc,
			Logger:      log,
			HostOptions: []libp2p.Option{onSimnet(router, a, false), libp2p.ConnectionGater(gate)},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a := start(ra, net.IPv4(2, 2, 0, 1), keyA, gateA, ws.Discovery{}, nil)
	b := start(rb, net.IPv4(3, 3, 0, 1), keyB, gateB, bDisc, bLog)
	waitFor(t, 30*time.Second, "both speak DCUtR and a holds a relay slot", func() bool {
		return a.HolePunching() && b.HolePunching() && len(a.RelayAddrs()) > 0
	})

	circuit := ma.StringCast(relay.Addrs()[0] + "/p2p-circuit")
	if err := b.Host().Connect(ctx, peer.AddrInfo{ID: idA, Addrs: []ma.Multiaddr{circuit}}); err != nil {
		t.Fatal(err)
	}
	// a's hole punch on this connection fails at the gate; wait until its
	// attempts (go-libp2p makes three) have ended before opening it.
	waitFor(t, 30*time.Second, "a's hole punch attempts refused", func() bool { return gateA.refusals() >= 3 })
	for last := -1; last != gateA.refusals(); {
		last = gateA.refusals()
		time.Sleep(time.Second)
	}
	gateA.closed.Store(false)
	gateB.closed.Store(false)
	for _, c := range b.Conns(idA) {
		if c.Kind != ws.ConnRelayed {
			t.Fatalf("b's connections to a before renewal: %+v, want only relayed", b.Conns(idA))
		}
	}
	return staleRelayed{a: a, b: b, gateA: gateA}
}

// holePunched reports whether b holds a hole-punched connection to a.
func (s staleRelayed) holePunched() bool {
	for _, c := range s.b.Conns(s.a.ID()) {
		if c.Kind == ws.ConnHolePunched {
			return true
		}
	}
	return false
}

// TestStaleRelayedConnRenewed: DCUtR is tried once per relayed connection,
// by the side that accepted it, when it is made. A relayed connection made
// while a hole punch could not succeed (here a gate refuses direct
// connections; in the field, one side did not speak DCUtR yet) stays
// relayed. renewRelayed leaves alone a relayed connection newer than the
// host's hole punching, and re-makes one older than it: on the new
// relayed connection DCUtR runs again and gives a direct connection.
func TestStaleRelayedConnRenewed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := newStaleRelayed(t, ctx, synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{}), ws.Discovery{}, nil)
	a, b := s.a, s.b

	// The relayed connection is newer than b's hole punching: left alone.
	if b.RenewRelayed(ctx, a.ID()) {
		t.Fatal("renewed a relayed connection made after hole punching began")
	}
	// Once it is older, it is re-made, and DCUtR upgrades the new one.
	b.SetHolePunchReadyAt(time.Now())
	if !b.RenewRelayed(ctx, a.ID()) {
		t.Fatalf("did not renew the stale relayed connection: %+v", b.Conns(a.ID()))
	}
	waitFor(t, 30*time.Second, "a hole-punched connection from b to a", s.holePunched)
	t.Logf("b's connections to a: %+v; a's gate refused %d dials", b.Conns(a.ID()), s.gateA.refusals())
}

// A pull from a peer connected only by a relayed connection older than
// this host's hole punching (what a peer dialling it through a relay
// before it spoke DCUtR leaves, as a NAT lab run once showed) makes the
// connection again so that DCUtR runs on it, and runs over the direct
// connection that gives: b waits for a direct connection longer than the
// test runs, so only one can bring it the space, and its log shows any
// sync stream opened through the relay all the same.
func TestPullRenewsStaleRelayedConn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	src, space := build(t, 50)
	dst := synctest.NewMem(synctest.Options{})
	bLog := &lineLog{}
	s := newStaleRelayed(t, ctx, src, dst, ws.Discovery{DirectWait: time.Hour}, slog.New(bLog))
	s.b.SetHolePunchReadyAt(time.Now())

	pctx, pcancel := context.WithTimeout(ctx, 45*time.Second)
	defer pcancel()
	st, err := s.b.SyncWith(pctx, s.a.ID(), space)
	if err != nil {
		t.Fatalf("pull: %v; b's connections to a: %+v; b's log:\n%s", err, s.b.Conns(s.a.ID()), bLog)
	}
	if st.Accepted != 51 || !sameHeads(t, space, src, dst) {
		t.Fatalf("pulled %+v, want the 51 entries", st)
	}
	if bLog.has("sync over relay") {
		t.Fatal("b opened a sync stream through the relay")
	}
	if !s.holePunched() {
		t.Fatalf("b's connections to a: %+v, want one DCUtR made", s.b.Conns(s.a.ID()))
	}
	t.Logf("b's connections to a: %+v", s.b.Conns(s.a.ID()))
}
