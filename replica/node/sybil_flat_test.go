package node_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// The flood's cost levels off (issue 15: bounded disk and memory under
// every flood): peer ids one after another each send orphans, a node on
// disk keeps at most PendingPerSpace of them and drops the rest, and runs
// its value-log GC itself once enough dropped bytes are garbage
// (GCAfterDropped), with no schedule. Between a stage of the flood and
// one three times as long, the store's files on disk and what the
// replica holds in memory for pending entries (charge records, queue
// slots, cached envelopes) stay where they were, with a generous margin,
// while the orphans taken in triple. Before the GC was started by
// dropped bytes, the disk grew with every orphan taken in (the value log
// was collected only on an operator's schedule). Small files (1 MiB
// value-log files, 2 MiB memtables) stand for Badger's defaults at a
// size CI runs; BenchmarkSybilFlood is the scale.
func TestSybilFloodFlat(t *testing.T) {
	const (
		perSpace = 400
		per      = 200 // orphans per peer id, all taken in (the first batch)
	)
	ctx := context.Background()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	space := b.Session.String()
	dir := t.TempDir()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{9}, 32))
	// Badger learns what is garbage from its compactions, which a flood at
	// scale causes all along; at this size, level 0 is compacted at each
	// flush for the same effect.
	st, err := badgerstore.Open(dir, badgerstore.Options{ValueLogFileSize: 1 << 20, MemTableSize: 2 << 20, NoSync: true,
		Tune: func(o badger.Options) badger.Options { return o.WithNumLevelZeroTables(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := node.Open(ctx, node.Options{Store: st, NodeKey: key, PendingPerSpace: perSpace,
		PendingCache: 64 << 10, GCAfterDropped: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, tx := range []ht.Tx{b.Create, roster} {
		if rc, err := n.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("setup: %+v %v", rc, err)
		}
	}
	peers := 0
	flood := func(to int) {
		for ; peers < to; peers++ {
			items := make([]sync.Item, per)
			for k := range items {
				items[k] = sync.Item{Data: b.KeyRegister(ht.Member(k%4), randomID()).Bytes}
			}
			src := dag.WithSource(ctx, fmt.Sprintf("peer:sybil-%d", peers))
			res, err := n.Ingest(src, space, items)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range res.Items {
				if o.Outcome != sync.Pending {
					t.Fatalf("orphan: %+v, want pending", o)
				}
			}
		}
	}
	type stage struct {
		taken int
		disk  int64
		fp    replica.PendingFootprint
		ps    replica.PendingStats
	}
	measure := func() stage {
		ps := n.Replica().PendingStats()
		return stage{taken: ps.Held + int(ps.Evicted), disk: allocated(dir), fp: n.Replica().PendingFootprint(), ps: ps}
	}
	// Stages of the flood: after 10, 20, 50 and 100 peer ids.
	var all []stage
	for _, k := range []int{10, 20, 50, 100} {
		flood(k)
		all = append(all, measure())
	}
	for _, s := range all {
		t.Logf("%d orphans taken in: %d KiB on disk; pending %+v; replica holds %+v", s.taken, s.disk>>10, s.ps, s.fp)
	}
	early := max(all[0].disk, all[1].disk)
	s1, s2 := all[1], all[3]
	if s2.taken != 5*s1.taken || s2.ps.Held > perSpace {
		t.Fatalf("taken %d then %d, held %d: the flood is not what the test means", s1.taken, s2.taken, s2.ps.Held)
	}
	if s2.ps.GCRuns == 0 || s2.ps.GCRewritten == 0 {
		t.Fatalf("no value-log GC reclaimed anything after %d dropped bytes: %+v", s2.ps.DroppedBytes, s2.ps)
	}
	// The orphans taken in between the stages are some 7 MiB of
	// envelopes, which a disk that grows with the flood adds; a flat one
	// adds nothing. Allow a quarter of them.
	between := int64(s2.ps.DroppedBytes - s1.ps.DroppedBytes)
	if s2.disk > early+between/4 {
		t.Errorf("store on disk at most %d KiB after %d orphans, %d KiB after %d (%d KiB of them dropped in between): it grows with the flood",
			early>>10, s1.taken, s2.disk>>10, s2.taken, between>>10)
	}
	if s2.fp.Records > perSpace || s2.fp.QueueSlots > 2*s1.fp.QueueSlots+256 || s2.fp.CacheSlots > 2*s1.fp.CacheSlots+256 ||
		s2.fp.CacheBytes > 64<<10 || s2.fp.Sources > s1.fp.Sources+1 {
		t.Errorf("what the replica holds for pending entries grew with the flood: %+v, then %+v", s1.fp, s2.fp)
	}
}

// allocated returns the bytes the files under dir take on disk (their
// blocks, not their apparent sizes: Badger preallocates files).
func allocated(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}
