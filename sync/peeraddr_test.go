package sync_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// A peer address that is not a multiaddr, or has no /p2p/ part, is an
// error when the node starts, not a debug line later.
func TestBadPeerAddressRefusedAtStart(t *testing.T) {
	for _, addr := range []string{"garbage", "/ip4/127.0.0.1/tcp/4001"} {
		_, err := ws.NewNode(context.Background(), synctest.NewMem(synctest.Options{}),
			ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Peers: []string{addr}})
		if err == nil {
			t.Fatalf("%q: node started", addr)
		}
		if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "/p2p/") {
			t.Fatalf("%q: %v", addr, err)
		}
	}
}

// Connect to an address where nothing listens fails, even when the peer
// it names is already connected by another route.
func TestConnectUnreachableAddressFailsWhenConnected(t *testing.T) {
	c := newCluster(t, 2) // node 0 on TCP; node 1 dials it at start
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	good := c.nodes[0].Addrs()[0]
	if err := c.nodes[1].Connect(ctx, good); err != nil {
		t.Fatalf("reachable address: %v", err)
	}
	if c.nodes[1].Host().Network().Connectedness(c.ids[0]) != network.Connected {
		t.Fatal("not connected")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	bad := "/ip4/127.0.0.1/tcp/" + strconv.Itoa(port) + "/p2p/" + c.ids[0].String()
	if err := c.nodes[1].Connect(ctx, bad); err == nil {
		t.Fatalf("Connect(%s) succeeded through the existing connection", bad)
	}
}
