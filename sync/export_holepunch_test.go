package sync

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// RenewRelayed exposes renewRelayed to the external tests.
func (n *Node) RenewRelayed(ctx context.Context, p peer.ID) bool { return n.renewRelayed(ctx, p) }

// SetHolePunchReadyAt moves when the host began to speak DCUtR, so that a
// test can make a relayed connection older than it.
func (n *Node) SetHolePunchReadyAt(t time.Time) {
	n.punch.mu.Lock()
	n.punch.readyAt = t
	n.punch.mu.Unlock()
}

// AdvertiseOnly returns d for a node that advertises its spaces but never
// looks up their providers, so that it dials no peer it was not told of.
func AdvertiseOnly(d Discovery) Discovery {
	d.advertiseOnly = true
	return d
}
