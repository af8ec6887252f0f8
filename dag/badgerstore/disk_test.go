package badgerstore_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/memoryblock"
)

// BenchmarkDiskBytes measures the store's bytes on disk (after Close)
// against the canonical bytes of 20 000 entries put in batches of 1000 in
// three arrival orders: in order, children first (every entry pending
// first, then promoted when the root comes last) and in a random order
// (fixed seed), and again after Compact (Badger's flatten, body-file and
// value-log GC), with 1 MiB value-log and body files so that GC has files
// it may take. Two
// kinds of entries: "chain", a chain of ≈ 505-byte entries of random
// letters, which neither packing nor Snappy can shrink and whose parent
// is not in their data (the worst case), and "env", signed ballot
// envelopes (one or two parents each, named in their canonical bytes too,
// as every 30k envelope does). The goal: within 1.3× of canonical
// bytes in any order.
//
// Metrics, each divided by the canonical bytes: "x", the apparent sizes
// of every file; "var-x", without Badger's fixed files (DISCARD,
// KEYREGISTRY, MANIFEST); "du-x", the blocks the files occupy (what du
// counts: DISCARD is a sparse 1 MiB file of which one 4 KiB block is
// written); "vlog-x", "sst-x" and "body-x", the value log, the tables and
// the body files alone;
// "gc-x", every file after Compact. With -v it logs what the live keys
// hold, per key prefix, and the tables' sizes (docs/storage.md, "Where the
// bytes go").
func BenchmarkDiskBytes(b *testing.B) {
	const n = 20_000
	kinds := []struct {
		name string
		es   []dag.Entry
	}{{"chain", chainEntries(n)}, {"env", envelopeEntries(b, n)}, {"block", blockEntries(n)}}
	for _, k := range kinds {
		for _, order := range []string{"inorder", "childrenfirst", "random"} {
			b.Run(k.name+"/"+order, func(b *testing.B) {
				for range b.N {
					diskBytes(b, order, k.es)
				}
			})
		}
	}
}

// chainEntries returns a chain of n entries of ≈ 505 bytes: the entry's
// number and 500 letters drawn at random (a fixed seed), which Snappy
// cannot compress (its matches need 4 repeated bytes).
func chainEntries(n int) []dag.Entry {
	r := rand.New(rand.NewPCG(15, 505))
	es := make([]dag.Entry, n)
	for j := range es {
		d := strconv.AppendInt(nil, int64(j), 10)
		for range 500 {
			d = append(d, 'a'+byte(r.IntN(26)))
		}
		es[j] = dag.Entry{ID: dag.Sum(d), Space: "s", Data: d}
		if j > 0 {
			es[j].Parents = []dag.ID{es[j-1].ID}
		}
	}
	return es
}

// blockEntries returns a lineage of n CAT7 memory blocks as a memory
// space stores them (memoryblock.Block.Entry): each names the one before,
// with five agents and fifty subjects taking turns, and a body of 200
// letters drawn at random (a fixed seed), which Snappy cannot shrink: the
// worst case for a block, whose lineage ids are in its canonical bytes
// (≈ 390 bytes each) as an envelope's parents are in its own.
func blockEntries(n int) []dag.Entry {
	r := rand.New(rand.NewPCG(7, 200))
	es := make([]dag.Entry, n)
	var prev []dag.ID
	for j := range es {
		body := make([]byte, 200)
		for i := range body {
			body[i] = 'a' + byte(r.IntN(26))
		}
		b := memoryblock.Block{
			Origin:     memoryblock.MustText("agent:" + strconv.Itoa(j%5)),
			Subject:    memoryblock.MustText("subject " + strconv.Itoa(j%50)),
			Body:       memoryblock.MustText(string(body)),
			Evidence:   memoryblock.NullValue(),
			Confidence: memoryblock.MustValue(strconv.Itoa(j % 101)),
			ObservedAt: memoryblock.MustText("2026-12-01T" + fmt.Sprintf("%02d:%02d:%02dZ", j/3600%24, j/60%60, j%60)),
			Lineage:    memoryblock.MustParents(prev...),
		}.Seal()
		es[j] = b.Entry("mem:disk")
		prev = []dag.ID{es[j].ID}
	}
	return es
}

// envelopeEntries returns n signed envelopes of one session in causal
// order (benchEnvelopes).
func envelopeEntries(b *testing.B, n int) []dag.Entry {
	ch := make(chan [][]byte, 1)
	go readBatches(b, benchEnvelopes(b, n), n, ch)
	var es []dag.Entry
	for raws := range ch {
		for _, raw := range raws {
			se, err := dag.DecodeSigned(raw)
			if err != nil {
				b.Fatal(err)
			}
			es = append(es, dag.Entry{ID: se.ID, Space: se.Envelope.Session.String(), Parents: se.Envelope.Parents, Data: se.Canonical})
		}
	}
	return es
}

// fixedFiles are Badger's files whose size does not depend on what the
// store holds.
var fixedFiles = map[string]bool{"DISCARD": true, "KEYREGISTRY": true, "MANIFEST": true}

// storeFiles sums the sizes of the files in dir: apparent sizes, without
// the fixed files, allocated blocks, value log and tables.
type storeFiles struct{ all, variable, blocks, vlog, sst, body int64 }

func sizeOf(dir string) storeFiles {
	var f storeFiles
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		f.all += fi.Size()
		if !fixedFiles[d.Name()] {
			f.variable += fi.Size()
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			f.blocks += st.Blocks * 512
		}
		switch filepath.Ext(p) {
		case ".vlog":
			f.vlog += fi.Size()
		case ".sst":
			f.sst += fi.Size()
		case ".dat":
			f.body += fi.Size()
		}
		return nil
	})
	return f
}

func diskBytes(t *testing.B, order string, es []dag.Entry) {
	n := len(es)
	canonical := 0
	for _, e := range es {
		canonical += len(e.Data)
	}
	ctx := context.Background()
	opts := badgerstore.Options{BodyFileSize: 1 << 20, Tune: func(o badger.Options) badger.Options {
		o.ValueLogFileSize = 1 << 20 // GC never takes the value log's head file
		return o
	}}
	var batches [][]dag.Entry
	switch order {
	case "inorder":
		for i := 0; i < n; i += 1000 {
			batches = append(batches, es[i:min(i+1000, n)])
		}
	case "childrenfirst":
		for end := n; end > 1; end -= 1000 {
			var batch []dag.Entry
			for j := end - 1; j >= max(1, end-1000); j-- {
				batch = append(batch, es[j])
			}
			batches = append(batches, batch)
		}
		batches = append(batches, es[:1])
	case "random":
		p := slices.Clone(es)
		r := rand.New(rand.NewPCG(15, 1))
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		for i := 0; i < n; i += 1000 {
			batches = append(batches, p[i:min(i+1000, n)])
		}
	}
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range batches {
		if _, err := s.Put(ctx, dag.Batch{Entries: batch}); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := s.Pending(ctx, es[0].Space); err != nil || len(p) != 0 {
		t.Fatalf("pending at the end: %d, %v", len(p), err)
	}
	if testing.Verbose() {
		t.Log(keyStats(t, s.DB(), n))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f := sizeOf(dir)
	s, err = badgerstore.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		var keys, raw, index, bloom int64
		for _, ti := range s.DB().Tables() {
			keys += int64(ti.KeyCount)
			raw += int64(ti.UncompressedSize)
			index += int64(ti.IndexSz)
			bloom += int64(ti.BloomFilterSize)
		}
		t.Logf("tables: %d keys; per entry %.1f B uncompressed, %.1f B index, %.1f B Bloom filter; in the files %.1f B", keys, float64(raw)/float64(n), float64(index)/float64(n), float64(bloom)/float64(n), float64(f.sst)/float64(n))
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	gc := sizeOf(dir)
	c := float64(canonical)
	t.ReportMetric(c/float64(n), "canon-B/entry")
	t.ReportMetric(float64(f.all)/c, "x")
	t.ReportMetric(float64(f.variable)/c, "var-x")
	t.ReportMetric(float64(f.blocks)/c, "du-x")
	t.ReportMetric(float64(f.vlog)/c, "vlog-x")
	t.ReportMetric(float64(f.sst)/c, "sst-x")
	t.ReportMetric(float64(f.body)/c, "body-x")
	t.ReportMetric(float64(gc.all)/c, "gc-x")
}

// keyStats describes the live keys of db per prefix byte: how many, and
// the bytes of their keys and values, per entry.
func keyStats(t *testing.B, db *badger.DB, n int) string {
	type stat struct{ keys, kb, vb int }
	st := map[byte]*stat{}
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			s := st[k[0]]
			if s == nil {
				s = &stat{}
				st[k[0]] = s
			}
			s.keys++
			s.kb += len(k)
			s.vb += int(it.Item().ValueSize())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(st)) {
		s := st[p]
		out = append(out, fmt.Sprintf("%c: %d keys, %.1f key B/entry, %.1f value B/entry", p, s.keys, float64(s.kb)/float64(n), float64(s.vb)/float64(n)))
	}
	return "live keys: " + strings.Join(out, "; ")
}
