package sync_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// halfOpen opens n /witan/sync/2 streams from each of peers fresh libp2p
// hosts to the node, each announcing a MaxFrame frame and sending one byte
// of it, and leaves them open. It returns the victim's live heap growth,
// the most seen while the streams stay open, and the inbound sync streams
// the victim holds.
func halfOpen(t testing.TB, victim *ws.Node, peers, n int) (grew uint64, held int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	frame := append(binary.AppendUvarint(nil, ws.MaxFrame), ws.FrameBatch)
	target := peer.AddrInfo{ID: victim.ID(), Addrs: victim.Host().Addrs()}
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
				continue // refused: over a limit
			}
			s.Write(frame) //nolint:errcheck // a refused stream fails here
		}
	}
	inbound := func() int {
		c := 0
		for _, conn := range victim.Host().Network().Conns() {
			for _, s := range conn.GetStreams() {
				if (s.Protocol() == protocol.ID(ws.ProtocolID) || s.Protocol() == protocol.ID(ws.ProtocolDeflateID)) && s.Stat().Direction == network.DirInbound {
					c++
				}
			}
		}
		return c
	}
	// Watch the victim's heap while the streams stay open: on 9f8fa68 every
	// stream's handler allocated the announced 4 MiB at once.
	var most uint64
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > before.HeapAlloc {
			most = max(most, m.HeapAlloc-before.HeapAlloc)
		}
	}
	return most, inbound()
}

// Half-open streams from many peers cost the victim bounded memory, and it
// still serves an honest peer in one round trip.
func TestHalfOpenStreamsBounded(t *testing.T) {
	peers, n := 2, 40
	if !testing.Short() {
		peers, n = 10, 100 // a thousand half-open streams
	}
	ctx := context.Background()
	src, space := build(t, 50)
	victim, err := ws.NewNode(ctx, src, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	grew, held := halfOpen(t, victim, peers, n)
	t.Logf("%d peers × %d half-open streams announcing %d-byte frames: victim holds %d sync streams, live heap grew by at most %d KiB",
		peers, n, ws.MaxFrame, held, grew>>10)
	if held > peers*ws.DefaultStreamsPerPeer {
		t.Errorf("victim holds %d inbound sync streams, more than %d per peer", held, ws.DefaultStreamsPerPeer)
	}
	if limit := uint64(peers*ws.DefaultStreamsPerPeer) * (256 << 10); grew > limit {
		t.Errorf("live heap grew by %d KiB under %d half-open streams, more than %d KiB", grew>>10, peers*n, limit>>10)
	}
	// An honest peer is served as before.
	honest := synctest.NewMem(synctest.Options{})
	hn, err := ws.NewNode(ctx, honest, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer hn.Close()
	if err := hn.Connect(ctx, victim.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	st, err := hn.SyncWith(ctx, victim.ID(), space)
	if err != nil || st.Rounds != 1 || st.Accepted != 51 {
		t.Fatalf("honest pull during the attack: %+v %v", st, err)
	}
}
