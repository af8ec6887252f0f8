package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/witan-dev/witan/replica/node"
)

// httpPullLoop pulls p into n every interval until ctx ends (witan up
// -peer-http): everything goes through the node's peer write path, and
// an unreachable peer is retried at the next tick.
func httpPullLoop(ctx context.Context, n *node.Node, p *node.HTTPPeer, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		res, err := n.PullHTTP(ctx, p)
		switch {
		case errors.Is(err, node.ErrForkDetected):
			// The peer's checkpoints contradict what this node verified
			// from it before (S10): evidence against its operator.
			log.Error("http peer rewrote its history", "peer", p.URL, "code", node.CodeForkDetected, "err", err)
		case err != nil && ctx.Err() == nil:
			log.Warn("http peer pull failed", "peer", p.URL, "err", err)
		}
		for _, r := range res {
			if r.Accepted+r.Quarantined+r.Pending > 0 {
				log.Info("http peer pull", "peer", p.URL, "session", r.Session, "accepted", r.Accepted, "pending", r.Pending, "quarantined", r.Quarantined)
			}
			switch {
			case r.Witness == "sent":
				log.Info("http peer checkpoint co-signed", "peer", p.URL, "session", r.Session)
			case strings.HasPrefix(r.Witness, "not_kept"):
				// A conforming peer need not keep cosignatures: not a fault.
				log.Debug("http peer did not keep our cosignature", "peer", p.URL, "session", r.Session, "why", r.Witness)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
