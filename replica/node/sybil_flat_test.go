package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
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

// The flood's cost levels off (bounded disk and memory under
// every flood): peer ids one after another each send orphans, a node on
// disk keeps at most PendingPerSpace of them and drops the rest, and runs
// its value-log GC itself once enough dropped bytes are garbage
// (GCAfterDropped), with no schedule. After 20 peer ids and after 100
// (4000, then 20 000 orphans taken in), the store is closed, collected and
// closed again: its value log and tables stay where they were, within a
// third of the 7 MiB dropped in between, and what the replica held in
// memory for pending entries (charge records, queue slots, cached
// envelopes) does not grow. The GCs the node started by itself must have
// rewritten files: with the trigger off (GCAfterDropped -1) the test
// fails, and the open store's disk reached 8.5 MiB instead of 3-6. Small
// files (1 MiB value-log files, 2 MiB memtables, level 0 compacted at
// each flush) stand for a long flood at a size CI runs;
// BenchmarkSybilFlood is the scale.
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
	stOpts := badgerstore.Options{ValueLogFileSize: 1 << 20, BodyFileSize: 1 << 20, MemTableSize: 2 << 20, NoSync: true,
		Tune: func(o badger.Options) badger.Options { return o.WithNumLevelZeroTables(1) }}
	var st *badgerstore.Store
	var n *node.Node
	open := func() {
		var err error
		if st, err = badgerstore.Open(dir, stOpts); err != nil {
			t.Fatal(err)
		}
		if n, err = node.Open(ctx, node.Options{Store: st, NodeKey: key,
			Replica: replica.Options{PendingPerSpace: perSpace, PendingCache: 64 << 10, GCAfterDropped: 256 << 10}}); err != nil {
			t.Fatal(err)
		}
	}
	closeAll := func() {
		if err := errors.Join(n.Close(), st.Close()); err != nil {
			t.Fatal(err)
		}
	}
	open()
	defer func() { closeAll() }()
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
		taken   int
		disk    int64 // allocated while open, the GC by dropped bytes running
		settled int64 // value log and tables after Close, GC and Close
		fp      replica.PendingFootprint
		ps      replica.PendingStats
	}
	var dropped, runs, rewritten uint64 // over the node's openings
	measure := func() stage {
		ps := n.Replica().PendingStats()
		dropped, runs, rewritten = dropped+ps.DroppedBytes, runs+ps.GCRuns, rewritten+ps.GCRewritten
		s := stage{taken: peers * per, disk: allocated(dir), fp: n.Replica().PendingFootprint(), ps: ps}
		s.ps.DroppedBytes, s.ps.GCRuns, s.ps.GCRewritten = dropped, runs, rewritten
		// What the flood leaves once the store has settled: Close compacts
		// level 0, which tells the value-log GC what is garbage.
		closeAll()
		gs, err := badgerstore.Open(dir, stOpts)
		if err != nil {
			t.Fatal(err)
		}
		// Every file a tenth garbage rewritten (Store.GC: half), so that
		// what is left is what the store could not tell from live.
		rewrote := 0
		for gs.DB().RunValueLogGC(0.1) == nil {
			rewrote++
		}
		t.Logf("settling %d orphans: GC at a tenth garbage rewrote %d files", peers*per, rewrote)
		if err := gs.Close(); err != nil {
			t.Fatal(err)
		}
		s.settled = dataBytes(dir)
		open()
		return s
	}
	// Stages of the flood: after 20 and 100 peer ids.
	flood(20)
	s1 := measure()
	flood(100)
	s2 := measure()
	for _, s := range []stage{s1, s2} {
		t.Logf("%d orphans taken in: %d KiB on disk open, %d KiB settled; pending %+v; replica holds %+v", s.taken, s.disk>>10, s.settled>>10, s.ps, s.fp)
	}
	if s2.ps.Held > perSpace || s1.ps.Held != perSpace {
		t.Fatalf("held %d then %d: the flood is not what the test means", s1.ps.Held, s2.ps.Held)
	}
	if s2.ps.GCRuns == 0 || s2.ps.GCRewritten == 0 {
		t.Fatalf("no value-log GC started by dropped bytes reclaimed anything after %d dropped bytes: %+v", s2.ps.DroppedBytes, s2.ps)
	}
	// The orphans taken in between the stages are some 7 MiB of
	// envelopes, which a disk that grows with the flood adds; a flat one
	// adds at most about a value-log file or two (the newest is never
	// collected). Allow a third of them.
	between := int64(s2.ps.DroppedBytes - s1.ps.DroppedBytes)
	if s2.settled > s1.settled+between/3 {
		t.Errorf("store on disk %d KiB after %d orphans, %d KiB after %d (%d KiB of them dropped in between): it grows with the flood",
			s1.settled>>10, s1.taken, s2.settled>>10, s2.taken, between>>10)
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

// dataBytes returns the sizes of the body files, value-log files and
// tables under dir (closed: no file is preallocated), without Badger's
// fixed files.
func dataBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".vlog") || strings.HasSuffix(path, ".sst") || strings.HasSuffix(path, ".dat")) {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
