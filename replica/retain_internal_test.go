package replica

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag/badgerstore"
)

// TestPendingKeepsOnlyItsBytes: an entry from a peer is a slice of the
// frame it arrived in (sync.DecodeBatch), and its decoded envelope's body a
// slice of that. An entry that waits for its parent is kept in the pending
// cache; if the cache kept those slices, each waiting entry would keep its
// whole frame alive (up to sync.MaxFrame, 4 MiB) for the few hundred bytes
// it charges. Here each of 48 waiting entries comes in its own 1 MiB
// buffer, as a peer's frames padded with other entries would bring them:
// afterwards the heap may hold what the cache charges for them (its bound
// counts that), not the buffers.
func TestPendingKeepsOnlyItsBytes(t *testing.T) {
	ctx := context.Background()
	st, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := Open(ctx, Options{Store: st, NodeKey: testNode(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const n, frame = 48, 1 << 20
	_, txs := chain(n)
	rest := slices.Clone(txs[2:]) // without the create and the roster: all wait
	slices.Reverse(rest)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for _, tx := range rest {
		buf := make([]byte, frame)
		off := frame / 2
		copy(buf[off:], tx.Bytes)
		sub := Submission{Envelope: buf[off : off+len(tx.Bytes) : off+len(tx.Bytes)]}
		outs, err := r.Ingest(ctx, []Submission{sub})
		if err != nil || outs[0].Status != Pending {
			t.Fatalf("ingest: %+v, %v", outs, err)
		}
	}
	if got := r.pend.len(); got != n {
		t.Fatalf("cache holds %d envelopes, want %d", got, n)
	}
	grown := int64(heap()) - int64(before)
	charged := int64(r.pend.size)
	// The store and the replica's indexes grow a little too; a frame kept
	// alive is a MiB, so 48 of them cannot hide in this slack.
	t.Logf("heap grew %d bytes for %d waiting entries charged %d", grown, n, charged)
	if slack := int64(2 << 20); grown > charged+slack {
		t.Fatalf("heap grew %d bytes for %d waiting entries charged %d: their frames are kept", grown, n, charged)
	}
	runtime.KeepAlive(r)
}
