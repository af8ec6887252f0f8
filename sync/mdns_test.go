package sync_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestMDNSDiscovery: two nodes that know nothing of each other find each
// other on the LAN and sync. It multicasts on every interface, beyond
// loopback, so it runs only when asked: WITAN_MDNS_TEST=1 (on a LAN of your
// own). CI and the default run keep all traffic on loopback.
func TestMDNSDiscovery(t *testing.T) {
	if testing.Short() || os.Getenv("WITAN_MDNS_TEST") == "" {
		t.Skip("mDNS multicasts beyond loopback; set WITAN_MDNS_TEST=1 to run it")
	}
	ctx := context.Background()
	a := synctest.NewAuthor(1)
	space, root, _ := a.Session("lan")
	ra, rb := synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{})
	ra.Submit(ctx, root)
	a.Write(ctx, ra, space, 20)
	tag := fmt.Sprintf("witan-test-%d", rand.Uint64())
	cfg := func() ws.Config {
		return ws.Config{ListenAddrs: []string{"/ip4/0.0.0.0/tcp/0"}, MDNS: true, MDNSTag: tag, Spaces: []string{space}}
	}
	na, err := ws.NewNode(ctx, ra, cfg())
	if err != nil {
		t.Fatal(err)
	}
	defer na.Close()
	nb, err := ws.NewNode(ctx, rb, cfg())
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	waitFor(t, 20*time.Second, "discovery and sync", func() bool { return sameHeads(t, space, ra, rb) })
}
