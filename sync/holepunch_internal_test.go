package sync

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
)

// awaitHolePunch, which a pull over a relayed connection calls first,
// returns at once when no peer observed this host at a public address (it
// will never speak DCUtR then), waits while one did until the host speaks
// it, and gives up at its limit. A real host: its mux is what tells.
func TestAwaitHolePunch(t *testing.T) {
	h, err := libp2p.New(libp2p.NoListenAddrs)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	n := &Node{host: h, log: slog.New(slog.DiscardHandler)}
	n.punch.changed = make(chan struct{})
	ctx := context.Background()

	// Never observed at a public address: no wait.
	began := time.Now()
	if n.awaitHolePunch(ctx, time.Minute) {
		t.Fatal("ready without speaking DCUtR")
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("waited %v with no public address observed", d)
	}

	// Observed: it waits, up to its limit.
	n.punch.mu.Lock()
	n.punch.observedPublic = true
	n.punch.mu.Unlock()
	began = time.Now()
	if n.awaitHolePunch(ctx, 200*time.Millisecond) {
		t.Fatal("ready without speaking DCUtR")
	}
	if d := time.Since(began); d < 200*time.Millisecond {
		t.Fatalf("gave up after %v, before its limit", d)
	}

	// The host begins to speak DCUtR while it waits (as the node's
	// watcher does on EvtLocalProtocolsUpdated): it returns then, well
	// before its limit.
	done := make(chan bool, 1)
	began = time.Now()
	go func() { done <- n.awaitHolePunch(ctx, time.Minute) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("returned before the host spoke DCUtR")
	default:
	}
	h.SetStreamHandler(holepunch.Protocol, func(s network.Stream) { s.Reset() })
	n.punch.mu.Lock()
	n.punch.readyAt = time.Now()
	close(n.punch.changed)
	n.punch.changed = make(chan struct{})
	n.punch.mu.Unlock()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("not ready once the host spoke DCUtR")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting 10 s after the host spoke DCUtR")
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("returned after %v", d)
	}

	// A cancelled pull stops waiting.
	h.RemoveStreamHandler(holepunch.Protocol)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if n.awaitHolePunch(cctx, time.Minute) {
		t.Fatal("ready without speaking DCUtR")
	}
}
