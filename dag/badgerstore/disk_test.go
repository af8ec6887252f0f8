package badgerstore_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
)

// BenchmarkDiskBytes measures the store's bytes on disk (apparent file
// sizes, after Close) against the canonical bytes of 20 000 entries put in
// order and put children first (every entry pending first, then promoted),
// and again after Compact (Badger's flatten and value-log GC), with 1 MiB
// value-log files so that GC has files it may take. Two kinds of entries:
// "chain", a chain of ≈ 505-byte entries of letters, which packing cannot
// shrink and whose parent is not in their data (the worst case), and
// "envelopes", signed ballot envelopes (one or two parents each, named in
// their canonical bytes too, as every 30k envelope does). "-x" counts every
// file; "-var-x" leaves out Badger's fixed files (DISCARD, KEYREGISTRY,
// MANIFEST: about 1 MiB whatever the store holds). Issue 15's goal:
// within 1.3× of canonical bytes in any order.
func BenchmarkDiskBytes(b *testing.B) {
	const n = 20_000
	env := envelopeEntries(b, n)
	for range b.N {
		diskBytes(b, "chain-", chainEntries(n))
		diskBytes(b, "env-", env)
	}
}

// chainEntries returns a chain of n entries of ≈ 505 bytes.
func chainEntries(n int) []dag.Entry {
	data := make([]byte, 500)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	es := make([]dag.Entry, n)
	for j := range es {
		d := append(strconv.AppendInt(nil, int64(j), 10), data...)
		es[j] = dag.Entry{ID: dag.Sum(d), Space: "s", Data: d}
		if j > 0 {
			es[j].Parents = []dag.ID{es[j-1].ID}
		}
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

func diskBytes(t *testing.B, kind string, es []dag.Entry) {
	n := len(es)
	canonical := 0
	for _, e := range es {
		canonical += len(e.Data)
	}
	ctx := context.Background()
	opts := badgerstore.Options{Tune: func(o badger.Options) badger.Options {
		o.ValueLogFileSize = 1 << 20 // GC never takes the value log's head file
		return o
	}}
	size := func(dir string) (all, variable int64) {
		filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error { //nolint:errcheck
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					all += fi.Size()
					if !fixedFiles[d.Name()] {
						variable += fi.Size()
					}
				}
			}
			return nil
		})
		return all, variable
	}
	measure := func(order string, put func(*badgerstore.Store)) {
		dir := t.TempDir()
		s, err := badgerstore.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		put(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		all, variable := size(dir)
		s, err = badgerstore.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		gcAll, _ := size(dir)
		t.ReportMetric(float64(all)/float64(canonical), kind+order+"-x")
		t.ReportMetric(float64(variable)/float64(canonical), kind+order+"-var-x")
		t.ReportMetric(float64(gcAll)/float64(canonical), kind+order+"-gc-x")
	}
	measure("inorder", func(s *badgerstore.Store) {
		for i := 0; i < n; i += 1000 {
			if _, err := s.Put(ctx, dag.Batch{Entries: es[i:min(i+1000, n)]}); err != nil {
				t.Fatal(err)
			}
		}
	})
	measure("childrenfirst", func(s *badgerstore.Store) {
		for end := n; end > 1; end -= 1000 {
			var batch []dag.Entry
			for j := end - 1; j >= max(1, end-1000); j-- {
				batch = append(batch, es[j])
			}
			if _, err := s.Put(ctx, dag.Batch{Entries: batch}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Put(ctx, dag.Batch{Entries: es[:1]}); err != nil {
			t.Fatal(err)
		}
		if p, err := s.Pending(ctx, es[0].Space); err != nil || len(p) != 0 {
			t.Fatalf("pending after the root: %d, %v", len(p), err)
		}
	})
}
