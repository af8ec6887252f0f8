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

// dirBytes returns the bytes of the files under dir.
func dirBytes(t testing.TB, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkDiskBytes measures the store's bytes on disk (apparent file
// sizes, after Close) against the canonical bytes of a chain of 20 000
// entries put in order and put children first (every entry pending first,
// then promoted: written twice), and again after Compact (Badger's
// flatten and value-log GC), with 1 MiB value-log files so that GC has
// files it may take. Issue 15's goal: children first within 1.3× of
// canonical bytes in any order.
func BenchmarkDiskBytes(b *testing.B) {
	for range b.N {
		diskBytes(b, 20_000)
	}
}

func diskBytes(t *testing.B, n int) {
	data := make([]byte, 500)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	es := make([]dag.Entry, n)
	canonical := 0
	for j := range es {
		d := append(strconv.AppendInt(nil, int64(j), 10), data...)
		es[j] = dag.Entry{ID: dag.Sum(d), Space: "s", Data: d}
		if j > 0 {
			es[j].Parents = []dag.ID{es[j-1].ID}
		}
		canonical += len(d)
	}
	ctx := context.Background()
	opts := badgerstore.Options{Tune: func(o badger.Options) badger.Options {
		o.ValueLogFileSize = 1 << 20 // GC never takes the value log's head file
		return o
	}}
	measure := func(order string, put func(*badgerstore.Store)) (before, after int64) {
		dir := t.TempDir()
		s, err := badgerstore.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		put(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		before = dirBytes(t, dir)
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
		after = dirBytes(t, dir)
		t.ReportMetric(float64(before)/float64(canonical), order+"-x")
		t.ReportMetric(float64(after)/float64(canonical), order+"-gc-x")
		return before, after
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
	})
}
