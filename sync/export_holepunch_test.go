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
