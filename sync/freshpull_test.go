package sync_test

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// A node that holds nothing of a space and joins it while three connected
// peers offer it takes the space once, not three times: its pulls from
// those peers run one at a time, and the ones after the first ask only
// for what is still missing. (Side by side, a late laptop took a session
// three classmates held three times over the Wi-Fi they share.)
func TestFreshSpaceFromManyPeersOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 3000
	src, space := build(t, n)
	ids, err := src.Log(ctx, space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var whole uint64
	for _, id := range ids {
		e, err := src.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		whole += uint64(len(e.Data))
	}
	cfg := func() ws.Config {
		return ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Debounce: 20 * time.Millisecond, Interval: time.Hour}
	}
	var holders []*ws.Node
	for range 3 {
		r := synctest.NewMem(synctest.Options{})
		for _, id := range ids {
			e, _ := src.Get(ctx, id)
			if res, err := r.Submit(ctx, e.Data); err != nil || res.Outcome != ws.Accepted {
				t.Fatalf("copy: %v %+v", err, res)
			}
		}
		h, err := ws.NewNode(ctx, r, cfg())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		holders = append(holders, h)
	}
	var mu gosync.Mutex
	var got ws.Stats
	pulls := 0
	fresh := synctest.NewMem(synctest.Options{})
	fc := cfg()
	fc.Engine.OnEvent = func(ev ws.Event) {
		if ev.Kind == ws.EventSyncDone && ev.Space == space {
			mu.Lock()
			got.EntryBytes += ev.Stats.EntryBytes
			got.Received += ev.Stats.Received
			pulls++
			mu.Unlock()
		}
	}
	fn, err := ws.NewNode(ctx, fresh, fc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fn.Close() })
	for _, h := range holders {
		if err := fn.Connect(ctx, h.Addrs()[0]); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "the three holders among the offers", func() bool {
		for _, o := range fn.Available() {
			if o.Space == space && len(o.Peers) == 3 {
				return true
			}
		}
		return false
	})
	if err := fn.Join(space); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the space at the fresh node", func() bool { return count(t, fresh, space) == n+1 })
	waitFor(t, 20*time.Second, "the three pulls done", func() bool { mu.Lock(); defer mu.Unlock(); return pulls >= 3 })
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d pulls brought %d entries, %d bytes of them; the space is %d entries, %d bytes", pulls, got.Received, got.EntryBytes, n+1, whole)
	// The second and third pull bring at most the few entries a Bloom
	// filter's false positives leave (about 1 % of the filter's
	// entries, each with its one child: BitsPerID).
	if got.EntryBytes > whole*11/10 {
		t.Errorf("the fresh node received %d bytes of entries for a space of %d: more than once", got.EntryBytes, whole)
	}
}
