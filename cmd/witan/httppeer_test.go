package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/httpapi"
)

// TestHTTPFederationUp (30k §9): two witan up processes with libp2p off
// (-no-p2p); B names A with -peer-http only, and converges on A's heads
// and state hash as A grows. B witnesses A's checkpoints: A's extract
// comes to carry B's cosignature and verifies with B's key required.
func TestHTTPFederationUp(t *testing.T) {
	bin := buildWitan(t)
	ctx := context.Background()
	b := ht.New(ht.Options{Label: "http federation"})
	space := b.Session.String()
	a := startUp(t, bin, t.TempDir(), "-no-p2p", "-checkpoint-every", "100ms")
	bn := startUp(t, bin, t.TempDir(), "-no-p2p", "-peer-http", a.info.HTTP, "-peer-http-every", "100ms")
	ca := &httpapi.Client{BaseURL: a.info.HTTP, Session: space}
	cb := &httpapi.Client{BaseURL: bn.info.HTTP, Session: space}
	last := b.Create.ID
	for _, tx := range []ht.Tx{b.Create, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 5), ht.Members(0, 1), b.Create.ID)} {
		if rc, err := ca.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("%s: %v", tx.Env.Type, err)
		}
		last = tx.ID
	}
	same := func() (bool, string) {
		var ha, hb httpapi.HeadsAnswer
		var sa, sb httpapi.SessionAnswer
		if ca.Get(ctx, "/heads", nil, &ha) != nil || cb.Get(ctx, "/heads", nil, &hb) != nil ||
			ca.Get(ctx, "/sessions/"+space, nil, &sa) != nil || cb.Get(ctx, "/sessions/"+space, nil, &sb) != nil {
			return false, "not yet on B"
		}
		return slices.Equal(ha.Heads, hb.Heads) && sa.StateHash == sb.StateHash, fmt.Sprintf("heads %v / %v", ha.Heads, hb.Heads)
	}
	eventually(t, "B converges over HTTP", 30*time.Second, same)
	registrar := b.GroupCreate(ht.Member(0), "registrar", ht.Members(0, 1), ht.Members(0, 1), last)
	if p, err := ca.Submit(ctx, registrar.Bytes, nil); err != nil || p.Status != "accepted" {
		t.Fatalf("registrar: %v", err)
	}
	eventually(t, "B converges again", 30*time.Second, same)
	keyA, errA := dag.ParseKey(a.info.NodeKey)
	keyB, errB := dag.ParseKey(bn.info.NodeKey)
	if errA != nil || errB != nil {
		t.Fatalf("node keys %q %q: %v %v", a.info.NodeKey, bn.info.NodeKey, errA, errB)
	}
	eventually(t, "A's extract carries B's cosignature", 30*time.Second, func() (bool, string) {
		resp, err := http.Get(a.info.HTTP + httpapi.Base + "/extract/" + registrar.ID.String())
		if err != nil {
			return false, err.Error()
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Sprintf("%d %s", resp.StatusCode, raw)
		}
		if _, _, err := extract.VerifyWitnessed(raw, keyA, []dag.Key{keyB}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}
