package sync_test

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// preparing is a real test replica made a Preparer that records what the
// requester hands Prepare, and checks that Ingest only ever receives
// entries prepared before it.
type preparing struct {
	*synctest.Replica
	mu         gosync.Mutex
	prepared   map[dag.ID]bool
	unprepared int // items Ingest received that Prepare had not seen
	ingested   int
}

func (p *preparing) Prepare(ctx context.Context, space string, items []ws.Item) {
	p.mu.Lock()
	for _, it := range items {
		p.prepared[dag.Sum(it.Data)] = true
	}
	p.mu.Unlock()
}

func (p *preparing) Ingest(ctx context.Context, space string, items []ws.Item) (ws.IngestResult, error) {
	p.mu.Lock()
	for _, it := range items {
		if !p.prepared[dag.Sum(it.Data)] {
			p.unprepared++
		}
	}
	p.ingested += len(items)
	p.mu.Unlock()
	return p.Replica.Ingest(ctx, space, items)
}

// A pull over libp2p hands each batch to the Local's Prepare as it arrives,
// before the Ingest that takes it, so a Preparer verifies the next batch
// while the one before is written; the pull ends the same.
func TestPullPreparesBatchesAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, space := build(t, 5000)
	n := count(t, src, space)
	cfg := ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Interval: time.Hour}
	sn, err := ws.NewNode(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sn.Close() })
	dst := &preparing{Replica: synctest.NewMem(synctest.Options{}), prepared: map[dag.ID]bool{}}
	dn, err := ws.NewNode(ctx, dst, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dn.Close() })
	if err := dn.Connect(ctx, sn.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	st, err := dn.SyncWith(ctx, sn.ID(), space)
	if err != nil || st.Accepted != n {
		t.Fatalf("pull: %+v %v", st, err)
	}
	dst.mu.Lock()
	defer dst.mu.Unlock()
	if dst.ingested != n || dst.unprepared != 0 || len(dst.prepared) != n {
		t.Fatalf("Ingest took %d entries, %d of them not prepared first; %d prepared, want %d", dst.ingested, dst.unprepared, len(dst.prepared), n)
	}
	if !sameHeads(t, space, src, dst.Replica) {
		t.Fatal("heads differ after the pull")
	}
}
