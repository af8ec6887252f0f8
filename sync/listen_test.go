package sync_test

import (
	"context"
	"strings"
	"testing"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestZeroConfigListensOnLoopback: a node started with the zero Config
// listens on loopback only (TCP and QUIC); naming ws.AllInterfaces opens
// it to the network.
func TestZeroConfigListensOnLoopback(t *testing.T) {
	ctx := context.Background()
	n, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), ws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var tcp, quic bool
	for _, a := range n.Host().Network().ListenAddresses() {
		s := a.String()
		if strings.HasPrefix(s, "/p2p-circuit") {
			continue // a relay's address, on no interface
		}
		if !strings.HasPrefix(s, "/ip4/127.0.0.1/") && !strings.HasPrefix(s, "/ip6/::1/") {
			t.Errorf("the zero Config listens on %s", s)
		}
		tcp = tcp || strings.Contains(s, "/tcp/")
		quic = quic || strings.Contains(s, "/quic-v1")
	}
	if !tcp || !quic {
		t.Errorf("listening over TCP %v, QUIC %v: want both", tcp, quic)
	}
	all, err := ws.NewNode(ctx, synctest.NewMem(synctest.Options{}), ws.Config{ListenAddrs: ws.AllInterfaces})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	for _, a := range all.Host().Network().ListenAddresses() {
		if strings.HasPrefix(a.String(), "/ip4/0.0.0.0/") {
			return
		}
	}
	t.Errorf("ListenAddrs AllInterfaces listens on %v", all.Host().Network().ListenAddresses())
}
