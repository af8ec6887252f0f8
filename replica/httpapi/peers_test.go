package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/sync"
)

// Without Options.Peers the server answers /peers from its node's own
// sync: POST /peers connects over libp2p on loopback and pulls, GET
// /peers lists the peer. A node without sync answers none and 501.
func TestPeersFromTheNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := newNode(t)
	s := src.newSession(t)
	if _, err := src.node.StartSync(ctx, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}}); err != nil {
		t.Fatal(err)
	}

	dst := newNode(t) // no sync yet: GET lists none, POST is not implemented
	var pa httpapi.PeersAnswer
	if err := dst.c.Get(ctx, "/peers", nil, &pa); err != nil || len(pa.Peers) != 0 {
		t.Fatalf("GET /peers without sync: %+v, %v", pa, err)
	}
	dst.problem(t, http.MethodPost, httpapi.Base+"/peers", "application/json",
		strings.NewReader(`{"addr":"`+src.node.Sync().Addrs()[0]+`"}`), http.StatusNotImplemented, httpapi.CodeNotImplemented)

	if _, err := dst.node.StartSync(ctx, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}}); err != nil {
		t.Fatal(err)
	}
	var ca httpapi.ConnectAnswer
	req := httpapi.ConnectRequest{Addr: src.node.Sync().Addrs()[0], Spaces: []string{s.space}}
	if err := dst.c.Do(ctx, http.MethodPost, "/peers", nil, req, &ca); err != nil {
		t.Fatal(err)
	}
	want, _ := src.node.Heads(ctx, s.space)
	got, _ := dst.node.Heads(ctx, s.space)
	if len(ca.Synced) != 1 || ca.Synced[0].Error != "" || len(got) != 1 || got[0] != want[0] {
		t.Fatalf("POST /peers: %+v; heads %v, want %v", ca, got, want)
	}
	if err := dst.c.Get(ctx, "/peers", nil, &pa); err != nil {
		t.Fatal(err)
	}
	if len(pa.Peers) != 1 || pa.Peers[0].ID != src.node.Sync().ID().String() {
		t.Fatalf("GET /peers: %+v, want the source %s", pa.Peers, src.node.Sync().ID())
	}
}
