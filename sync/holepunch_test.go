package sync_test

import (
	"context"
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
	router := &simnet.SimpleFirewallRouter{}
	relayAddr := &net.UDPAddr{IP: net.IPv4(1, 2, 0, 1), Port: 4001}
	relay, err := ws.NewRelay(ctx, ws.RelayConfig{
		ListenAddrs: []string{"/ip4/1.2.0.1/udp/4001/quic-v1"},
		HostOptions: []libp2p.Option{onSimnet(router, relayAddr, true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	boot := relay.Addrs()[0]

	keyA, _, _ := crypto.GenerateEd25519Key(nil)
	keyB, _, _ := crypto.GenerateEd25519Key(nil)
	idA, _ := peer.IDFromPrivateKey(keyA)
	idB, _ := peer.IDFromPrivateKey(keyB)
	gateA, gateB := &directGate{a: idA, b: idB}, &directGate{a: idA, b: idB}
	gateA.closed.Store(true)
	gateB.closed.Store(true)
	start := func(ip net.IP, key crypto.PrivKey, gate *directGate) *ws.Node {
		a := &net.UDPAddr{IP: ip, Port: 8000}
		n, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), ws.Config{
			ListenAddrs: []string{"/ip4/" + ip.String() + "/udp/8000/quic-v1"},
			Identity:    key,
			Discovery:   ws.Discovery{Bootstrap: []string{boot}, Relays: []string{boot}, Reachability: "private"},
			HostOptions: []libp2p.Option{onSimnet(router, a, false), libp2p.ConnectionGater(gate)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a := start(net.IPv4(2, 2, 0, 1), keyA, gateA)
	defer a.Close()
	b := start(net.IPv4(3, 3, 0, 1), keyB, gateB)
	defer b.Close()
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

	// The relayed connection is newer than b's hole punching: left alone.
	if b.RenewRelayed(ctx, idA) {
		t.Fatal("renewed a relayed connection made after hole punching began")
	}
	// Once it is older, it is re-made, and DCUtR upgrades the new one.
	b.SetHolePunchReadyAt(time.Now())
	if !b.RenewRelayed(ctx, idA) {
		t.Fatalf("did not renew the stale relayed connection: %+v", b.Conns(idA))
	}
	waitFor(t, 30*time.Second, "a hole-punched connection from b to a", func() bool {
		for _, c := range b.Conns(idA) {
			if c.Kind == ws.ConnHolePunched {
				return true
			}
		}
		return false
	})
	t.Logf("b's connections to a: %+v; a's gate refused %d dials", b.Conns(idA), gateA.refusals())
}
