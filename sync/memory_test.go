package sync_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestMemoryBlocksSync: CAT7 blocks sync across a memory space like
// envelopes do; a block whose lineage cannot be produced is never applied
// (nor re-rooted), and malformed blocks are quarantined.
func TestMemoryBlocksSync(t *testing.T) {
	ctx := context.Background()
	space := synctest.MemoryPrefix + "tides"
	src := synctest.NewMem(synctest.Options{})
	agents := []*synctest.Author{synctest.NewAuthor(1), synctest.NewAuthor(2)}
	data, root := agents[0].Block("tide tables")
	if res, err := src.Ingest(ctx, space, []ws.Item{{Data: data}}); err != nil || res.Items[0].Outcome != ws.Accepted {
		t.Fatalf("%v %+v", err, res)
	}
	for i := 0; i < 30; i++ {
		hs := heads(t, src, space)
		ps := hs
		if i%4 != 0 {
			ps = hs[:1] // branch
		}
		data, _ := agents[i%2].Block("tide tables", ps...)
		if res, err := src.Ingest(ctx, space, []ws.Item{{Data: data}}); err != nil || res.Items[0].Outcome != ws.Accepted {
			t.Fatalf("%v %+v", err, res)
		}
	}
	dst := synctest.NewMem(synctest.Options{})
	st, err := pipePull(ctx, ws.NewEngine(dst, ws.Options{}), ws.NewEngine(src, ws.Options{}), space)
	if err != nil || st.Rounds != 1 || st.Accepted != 31 || !sameHeads(t, space, src, dst) {
		t.Fatalf("%v %+v", err, st)
	}

	// A liar offers a block descending from one nobody can produce, its
	// child, and bytes that are no block.
	before := heads(t, dst, space)
	unknown := dag.Sum([]byte("a block nobody has"))
	orphan, orphanID := agents[1].Block("confirmed", unknown)
	child, childID := agents[1].Block("re-confirmed", orphanID)
	bad := []byte(`["witan/cat7/v1"]`)
	st, err = liarPull(ctx, ws.NewEngine(dst, ws.Options{}), space, func(w io.Writer, req *ws.Request) {
		if len(req.Want) > 0 {
			respondWith(nil, req.Want)(w, req) // it cannot produce the parent
			return
		}
		respondWith([]ws.Item{{Data: orphan}, {Data: child}, {Data: bad}, {Data: data}}, nil)(w, req)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rounds != 2 || st.Pending != 2 || st.Quarantined != 1 || st.Duplicate != 1 || st.Missing != 1 {
		t.Fatalf("%+v", st)
	}
	if !slices.Equal(heads(t, dst, space), before) {
		t.Fatal("a block with an unproducible lineage changed the heads")
	}
	for _, id := range []dag.ID{orphanID, childID} {
		if s, _ := dst.Has(ctx, id); s != dag.Pending {
			t.Fatalf("%s is %s", id, s)
		}
	}
	if code, ok, _ := dst.Quarantined(ctx, dag.Sum(bad)); !ok || code == "" {
		t.Fatal("malformed block not quarantined")
	}
	if missing, _ := dst.Missing(ctx, space); !slices.Equal(missing, []dag.ID{unknown}) {
		t.Fatalf("missing %v", missing)
	}
	_ = root
}
