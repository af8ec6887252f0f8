package sync_test

import (
	"context"
	"slices"
	"testing"
	"time"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// Pulls between real libp2p hosts ask for deflated batches
// (ws.ProtocolDeflateID) and get them from a node that serves them: the
// same entries in fewer bytes. A node that speaks only /witan/sync/2 (as
// one made before deflated batches, Config.PlainBatches) pulls from a new
// one and serves one, in plain batches. These nodes meet on loopback, so
// the deflating ones say Config.DeflateLoopback; a node that does not
// serves plain batches to a loopback requester that asked for deflated
// ones.
func TestDeflatedBatchesOverLibp2p(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 2000
	src, space := build(t, n)
	var openWith func(*synctest.Replica, ws.Config) *ws.Node
	open := func(r *synctest.Replica, plain bool) *ws.Node {
		t.Helper()
		return openWith(r, ws.Config{PlainBatches: plain, DeflateLoopback: !plain})
	}
	openWith = func(r *synctest.Replica, cfg ws.Config) *ws.Node {
		t.Helper()
		cfg.ListenAddrs, cfg.Manual, cfg.Spaces = []string{"/ip4/127.0.0.1/tcp/0"}, true, []string{space}
		nd, err := ws.NewNode(ctx, r, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Close() })
		return nd
	}
	pull := func(from, to *ws.Node, r *synctest.Replica) ws.Stats {
		t.Helper()
		if err := to.Connect(ctx, from.Addrs()[0]); err != nil {
			t.Fatal(err)
		}
		st, err := to.SyncWith(ctx, from.ID(), space)
		if err != nil {
			t.Fatal(err)
		}
		if got := count(t, r, space); got != n+1 {
			t.Fatalf("%d entries after the pull, want %d", got, n+1)
		}
		if !slices.Equal(heads(t, r, space), heads(t, src, space)) {
			t.Fatal("heads differ after the pull")
		}
		return st
	}
	a := open(src, false)
	rNew, rOld, rNewer := synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{}), synctest.NewMem(synctest.Options{})
	fresh, old := open(rNew, false), open(rOld, true)

	deflated := pull(a, fresh, rNew)
	plain := pull(a, old, rOld)
	t.Logf("%d entries (%d bytes of envelopes): %d bytes in deflated, %d plain (%.2f)",
		n+1, plain.EntryBytes, deflated.BytesIn, plain.BytesIn, float64(deflated.BytesIn)/float64(plain.BytesIn))
	// Envelopes are JSON whose bulk is hex (ids, keys, signatures): four
	// bits of information in each eight-bit character, so DEFLATE's
	// Huffman codes alone take them to about half; the filter and framing
	// are the same either way.
	if deflated.BytesIn*10 > plain.BytesIn*6 {
		t.Errorf("deflated batches took %d bytes, plain %d: more than 60 %%", deflated.BytesIn, plain.BytesIn)
	}
	if plain.EntryBytes != deflated.EntryBytes {
		t.Errorf("entry bytes %d deflated, %d plain", deflated.EntryBytes, plain.EntryBytes)
	}

	// A new node pulling from an old one gets plain batches.
	newer := open(rNewer, false)
	fromOld := pull(old, newer, rNewer)
	if fromOld.BytesIn*10 < plain.BytesIn*9 {
		t.Errorf("from a node that speaks only %s: %d bytes, plain %d", ws.ProtocolID, fromOld.BytesIn, plain.BytesIn)
	}

	// A node with the default policy serves a requester on loopback plain
	// batches, though it asked for deflated ones; the requester reads
	// them all the same.
	local := openWith(src, ws.Config{})
	rLocal := synctest.NewMem(synctest.Options{})
	fromLocal := pull(local, open(rLocal, false), rLocal)
	if fromLocal.BytesIn*10 < plain.BytesIn*9 {
		t.Errorf("over loopback without DeflateLoopback: %d bytes, plain %d", fromLocal.BytesIn, plain.BytesIn)
	}
}
