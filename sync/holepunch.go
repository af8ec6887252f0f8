package sync

// When go-libp2p's hole punching can run. Its service (DCUtR) starts on a
// host only once the host has a public address to offer the other side:
// one it listens on, or one a peer observed it at (identify's observed
// address, counted from a single observer for hole punching). Until then
// the host does not speak DCUtR at all, and a relayed connection made
// before both sides speak it is never upgraded: the side that accepted
// it tries once, when it is made, and does not retry. So a node that
// expects to speak DCUtR soon (a peer observed it at a public address)
// waits for it before dialling a peer through a relay, and a pull waits
// for the direct connection only when both sides speak it.
// docs/networking.md, "Which connection a pull runs on".

import (
	"context"
	"fmt"
	"slices"
	gosync "sync"
	"time"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// punchState is what the node knows of its own hole punching.
type punchState struct {
	mu gosync.Mutex
	// observedPublic is set once a peer's identify reported this host at
	// a public address that is not relayed: the hole punching service
	// then starts within its polling interval.
	observedPublic bool
	// changed is closed and replaced whenever either fact changes.
	changed chan struct{}
	// readyAt is when this host began to speak DCUtR; pushedAt, per
	// peer, when the peer's identify push announced that it speaks it.
	// A relayed connection opened before either was not hole punched.
	readyAt  time.Time
	pushedAt map[peer.ID]time.Time
}

// watchHolePunch follows identify's observed addresses and the host's own
// protocols.
func (n *Node) watchHolePunch() error {
	n.punch.mu.Lock()
	n.punch.changed = make(chan struct{})
	n.punch.pushedAt = map[peer.ID]time.Time{}
	n.punch.mu.Unlock()
	sub, err := n.host.EventBus().Subscribe([]any{new(event.EvtPeerIdentificationCompleted),
		new(event.EvtLocalProtocolsUpdated), new(event.EvtPeerProtocolsUpdated)})
	if err != nil {
		return fmt.Errorf("sync: identify events: %w", err)
	}
	n.host.Network().Notify(&network.NotifyBundle{DisconnectedF: func(nw network.Network, c network.Conn) {
		if nw.Connectedness(c.RemotePeer()) == network.NotConnected {
			n.punch.mu.Lock()
			delete(n.punch.pushedAt, c.RemotePeer())
			n.punch.mu.Unlock()
		}
	}})
	n.onEvents(sub, func(e any) {
		switch ev := e.(type) {
		case event.EvtPeerIdentificationCompleted:
			a := ev.ObservedAddr
			if a == nil || !manet.IsPublicAddr(a) {
				return
			}
			if _, relayed := relayOf(a); relayed {
				return
			}
			n.punch.mu.Lock()
			if !n.punch.observedPublic {
				n.punch.observedPublic = true
				n.log.Debug("observed at a public address", "addr", a, "by", ev.Peer)
				close(n.punch.changed)
				n.punch.changed = make(chan struct{})
			}
			n.punch.mu.Unlock()
		case event.EvtLocalProtocolsUpdated:
			if slices.Contains(ev.Added, holepunch.Protocol) {
				n.log.Debug("hole punching ready")
				n.punch.mu.Lock()
				n.punch.readyAt = time.Now()
				close(n.punch.changed)
				n.punch.changed = make(chan struct{})
				n.punch.mu.Unlock()
			}
		case event.EvtPeerProtocolsUpdated:
			// Only identify pushes emit this: the peer's protocols
			// changed while connected.
			if slices.Contains(ev.Added, holepunch.Protocol) {
				n.punch.mu.Lock()
				n.punch.pushedAt[ev.Peer] = time.Now()
				n.punch.mu.Unlock()
			}
		}
	})
	return nil
}

// holePunchReady reports whether this host speaks DCUtR now: its hole
// punching service registers the protocol once it has a public address.
func (n *Node) holePunchReady() bool {
	return slices.Contains(n.host.Mux().Protocols(), holepunch.Protocol)
}

// awaitHolePunch waits up to limit for this host to speak DCUtR when a peer
// has observed it at a public address (without one it never will). It
// reports whether the host speaks it.
func (n *Node) awaitHolePunch(ctx context.Context, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		n.punch.mu.Lock()
		observed, changed := n.punch.observedPublic, n.punch.changed
		n.punch.mu.Unlock()
		if n.holePunchReady() {
			return true
		}
		if !observed || changed == nil {
			return false
		}
		select {
		case <-changed:
		case <-deadline.C:
			return n.holePunchReady()
		case <-ctx.Done():
			return false
		}
	}
}

// canHolePunch reports whether DCUtR can upgrade a relayed connection to
// p: this host and p (as its identify said) both speak it.
func (n *Node) canHolePunch(p peer.ID) bool {
	if !n.holePunchReady() {
		return false
	}
	protos, err := n.host.Peerstore().SupportsProtocols(p, holepunch.Protocol)
	return err == nil && len(protos) > 0
}

// HolePunching reports whether this host speaks DCUtR now, which its hole
// punching service does once it has a public address to offer: one it
// listens on, or one a peer observed it at. Without it a relayed
// connection stays relayed. Always false without Discovery.
func (n *Node) HolePunching() bool {
	return n.cfg.Discovery.on() && n.holePunchReady()
}

// renewRelayed re-makes the relayed connections to p when each was opened
// before this host or p spoke DCUtR: hole punching is tried once, by the
// side that accepted the relayed connection, when it is made, so these
// would stay relayed. It reports whether it made a new one.
func (n *Node) renewRelayed(ctx context.Context, p peer.ID) bool {
	n.punch.mu.Lock()
	since := n.punch.readyAt
	if t, ok := n.punch.pushedAt[p]; ok && t.After(since) {
		since = t
	}
	n.punch.mu.Unlock()
	var addrs []ma.Multiaddr
	var stale []network.Conn
	for _, c := range n.host.Network().ConnsToPeer(p) {
		if !c.Stat().Limited {
			return false
		}
		if !c.Stat().Opened.Before(since) {
			return false
		}
		stale = append(stale, c)
		addrs = append(addrs, c.RemoteMultiaddr())
	}
	if len(stale) == 0 {
		return false
	}
	n.log.Debug("renewing relayed connection for hole punching", "peer", p)
	for _, c := range stale {
		c.Close()
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := n.host.Connect(dctx, peer.AddrInfo{ID: p, Addrs: addrs}); err != nil {
		n.log.Debug("renew relayed connection", "peer", p, "err", err)
		return false
	}
	return true
}
