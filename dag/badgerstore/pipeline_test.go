package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
	"github.com/witan-dev/witan/dag/storetest"
	"pgregory.net/rapid"
)

// Batches put with PutAsync, several planned on top of commits still
// running, end as the same batches put one at a time with Put: every
// Result the same (applied in the same order, pending, quarantined,
// duplicates), then the same heads, log, pending and missing entries per
// space. Two DAGs in two spaces arrive in any order, with duplicates, an
// Admit that refuses some entries and an object per batch, so that Puts
// that leave entries pending (which wait for the running commit) alternate
// with Puts planned on top of it (which read it through its record).
func TestPutAsyncMatchesPut(t *testing.T) {
	ctx := context.Background()
	pipe, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	serial, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		sa, sb := fmt.Sprintf("a%d", n), fmt.Sprintf("b%d", n)
		da := dagtest.DAGs(dagtest.DAGOptions{Space: sa, MaxEntries: 40}).Draw(t, "a")
		db := dagtest.DAGs(dagtest.DAGOptions{Space: sb, MaxEntries: 40}).Draw(t, "b")
		// Mostly in causal order, as a sync delivers, sometimes shuffled.
		seq := append(slices.Clone(da.Entries), db.Entries...)
		if rapid.Bool().Draw(t, "shuffle") {
			seq = dagtest.Arrivals(dagtest.DAG{Entries: seq}).Draw(t, "arrival")
		}
		batches := dagtest.Batches(seq).Draw(t, "batches")
		depth := rapid.IntRange(1, 4).Draw(t, "depth")
		admit := func(e dag.Entry) error {
			if e.ID.Digest()[0] < 20 {
				return dag.Errorf(dag.CodeSchema, "refused %s", e.ID)
			}
			return nil
		}
		var waits []func() (dag.Result, error)
		var want []dag.Result
		for i, es := range batches {
			b := dag.Batch{Entries: es, Admit: admit, Objects: []dag.Object{dag.NewObject(fmt.Appendf(nil, `{"case":%d,"batch":%d}`, n, i))}}
			r, err := serial.Put(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, r)
			waits = append(waits, pipe.PutAsync(ctx, b))
			if len(waits) > depth {
				landAndCompare(t, waits[0], want[0])
				waits, want = waits[1:], want[1:]
			}
		}
		for i := range waits {
			landAndCompare(t, waits[i], want[i])
		}
		for _, sp := range []string{sa, sb} {
			for _, f := range []func(dag.Store) ([]dag.ID, error){
				func(s dag.Store) ([]dag.ID, error) { return s.Heads(ctx, sp) },
				func(s dag.Store) ([]dag.ID, error) { return s.Log(ctx, sp, 0, 0) },
				func(s dag.Store) ([]dag.ID, error) { return s.Pending(ctx, sp) },
				func(s dag.Store) ([]dag.ID, error) { return s.Missing(ctx, sp) },
			} {
				got, err1 := f(pipe)
				exp, err2 := f(serial)
				if err1 != nil || err2 != nil || !slices.Equal(got, exp) {
					t.Fatalf("space %s: pipelined %v (%v), one at a time %v (%v)", sp, got, err1, exp, err2)
				}
			}
		}
	})
	if err := storetest.Check(ctx, pipe); err != nil {
		t.Fatal(err)
	}
}

func landAndCompare(t *rapid.T, wait func() (dag.Result, error), want dag.Result) {
	got, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	sorted := func(ids []dag.ID) []dag.ID {
		ids = slices.Clone(ids)
		slices.SortFunc(ids, dag.ID.Compare)
		return ids
	}
	codes := func(rs []dag.Rejection) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID.String()+" "+string(r.Code))
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(got.Applied, want.Applied) || !slices.Equal(sorted(got.Pending), sorted(want.Pending)) ||
		!slices.Equal(sorted(got.Duplicate), sorted(want.Duplicate)) || !slices.Equal(codes(got.Quarantined), codes(want.Quarantined)) {
		t.Fatalf("PutAsync: %+v\nPut: %+v", got, want)
	}
}

// A failed fdatasync under a pipelined ingest: the batch whose bodies did
// not reach the disk fails with ErrSync, so does the batch planned on top
// of it and every later write; the reopened store holds every batch
// acknowledged before, and neither of the two.
func TestPutAsyncSyncFailure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := chainEntries(500)
	batch := func(i int) dag.Batch { return dag.Batch{Entries: c[100*i : 100*(i+1)]} }
	w0 := s.PutAsync(ctx, batch(0))
	w1 := s.PutAsync(ctx, batch(1))
	for _, w := range []func() (dag.Result, error){w0, w1} {
		if r, err := w(); err != nil || len(r.Applied) != 100 {
			t.Fatalf("pipelined Put: %d applied, %v", len(r.Applied), err)
		}
	}
	badgerstore.SetBodySync(s, func(*os.File) error { return syscall.EIO })
	w2 := s.PutAsync(ctx, batch(2))
	w3 := s.PutAsync(ctx, batch(3))
	for i, w := range []func() (dag.Result, error){w2, w3} {
		if _, err := w(); !errors.Is(err, badgerstore.ErrSync) {
			t.Fatalf("batch %d after the failed fdatasync: %v, want ErrSync", 2+i, err)
		}
	}
	badgerstore.SetBodySync(s, nil)
	if _, err := s.Put(ctx, batch(4)); !errors.Is(err, badgerstore.ErrSync) {
		t.Fatalf("a later Put: %v, want ErrSync", err)
	}
	s.Close() //nolint:errcheck // the store failed; Close reports it
	if s, err = badgerstore.Open(dir, badgerstore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	log, err := s.Log(ctx, "s", 0, 0)
	if err != nil || len(log) != 200 {
		t.Fatalf("reopened: the log holds %d entries (%v), want the 200 acknowledged", len(log), err)
	}
	for i, id := range log {
		if id != c[i].ID {
			t.Fatalf("log position %d: %s, want %s", i+1, id, c[i].ID)
		}
	}
	for _, e := range c[200:] {
		if st, err := s.Has(ctx, e.ID); err != nil || st != dag.Absent {
			t.Fatalf("an entry of a failed batch: %v, %v; want absent", st, err)
		}
	}
	if err := storetest.Check(ctx, s); err != nil {
		t.Fatal(err)
	}
	// And it goes on from there.
	if r, err := s.Put(ctx, batch(2)); err != nil || len(r.Applied) != 100 {
		t.Fatalf("Put after the reopen: %d applied, %v", len(r.Applied), err)
	}
}
