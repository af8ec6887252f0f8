package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/sync"
)

// startRelay runs witan relay on loopback and returns its first address.
func startRelay(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "relay", "-listen", "/ip4/127.0.0.1/tcp/0", "-key", filepath.Join(t.TempDir(), "relay.key"), "-json")
	dieWithTest(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		var info relayInfo
		if !ok || json.Unmarshal([]byte(l), &info) != nil || len(info.Addrs) == 0 {
			t.Fatalf("witan relay's startup line %q", l)
		}
		if info.Data != 1<<30 {
			t.Fatalf("relay's data limit %d, want the documented default 1 GiB", info.Data)
		}
		return info.Addrs[0]
	case <-time.After(30 * time.Second):
		t.Fatal("witan relay did not start")
	}
	return ""
}

// TestUpDiscoversBySpace: two nodes given only a session id and a relay's
// address (no -peer, no mDNS) find each other in witan's DHT and converge;
// GET /peers says how each is connected and since when.
func TestUpDiscoversBySpace(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	relay := startRelay(t, bin)
	b := ht.New(ht.Options{Simulation: true, Label: "found through the DHT"})
	space := b.Session.String()
	a := startUp(t, bin, t.TempDir(), "-bootstrap", relay, "-discover", space)
	if a.info.Reach == nil || a.info.Reach.DHT != "client" && a.info.Reach.DHT != "server" {
		t.Fatalf("startup line's reach: %+v", a.info.Reach)
	}
	if a.info.Reach.HolePunching {
		t.Fatal("hole punching on for a node on loopback: it has no public address to offer")
	}
	if !slices.Contains(a.info.Spaces, space) {
		t.Fatalf("-discover did not join %s: %v", space, a.info.Spaces)
	}
	bn := startUp(t, bin, t.TempDir(), "-bootstrap", relay, "-discover", space)
	ca := &httpapi.Client{BaseURL: a.info.HTTP, Session: space}
	cb := &httpapi.Client{BaseURL: bn.info.HTTP, Session: space}
	if rc, err := ca.Submit(ctx, b.Create.Bytes, b.Create.Attach); err != nil || rc.Status != "accepted" {
		t.Fatalf("create: %v %+v", err, rc)
	}
	heads := func(c *httpapi.Client) []dag.ID {
		var h httpapi.HeadsAnswer
		if err := c.Get(ctx, "/heads", nil, &h); err != nil {
			return nil
		}
		return h.Heads
	}
	eventually(t, "B finds A by the session id and reaches its heads", 60*time.Second, func() (bool, string) {
		ha, hb := heads(ca), heads(cb)
		return len(ha) > 0 && slices.Equal(ha, hb), "A " + idsString(ha) + " B " + idsString(hb)
	})
	var pa httpapi.PeersAnswer
	if err := cb.Get(ctx, "/peers", nil, &pa); err != nil {
		t.Fatal(err)
	}
	for _, p := range pa.Peers {
		if p.ID != a.info.PeerID {
			continue
		}
		if len(p.Conns) == 0 || p.Conns[0].Kind != sync.ConnDirect || p.Conns[0].Since.IsZero() || time.Since(p.Conns[0].Since) > time.Minute {
			t.Fatalf("B's connections to A: %+v, want a direct one opened in the last minute", p.Conns)
		}
		// witan peers says the same: A's id, then its direct connection
		// at the address GET /peers gave.
		out, err := exec.Command(bin, "peers", "-node", bn.info.HTTP).CombinedOutput()
		want := a.info.PeerID + "\n  direct       " + p.Conns[0].Direction + " " + p.Conns[0].Addr + ", since "
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("witan peers: %v\n%s\nwant a part %q", err, out, want)
		}
		return
	}
	t.Fatalf("A is not among B's peers: %+v", pa.Peers)
}
