package badgerstore_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/dagtest"
)

// LogEntries gives the entries of a space's log, in log order, from any
// position and with any limit, even where the bodies were written out of
// that order: here e3 and e4 arrive (pending) before e2, and an entry of
// another space is written between, so the log e0 … e7 has bodies numbered
// 1 2 6 3 4 7 8 9.
// On disk, body files of 300 bytes put the bodies in several files.
func TestLogEntries(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		s, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		testLogEntries(t, s)
	})
	t.Run("disk", func(t *testing.T) {
		s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{NoSync: true, BodyFileSize: 300})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		testLogEntries(t, s)
	})
}

func testLogEntries(t *testing.T, s *badgerstore.Store) {
	ctx := context.Background()
	var es []dag.Entry
	var parents []dag.ID
	for i := range 8 {
		e := dagtest.NewEntry("s", 1, i, parents)
		es = append(es, e)
		parents = []dag.ID{e.ID}
	}
	other := dagtest.NewEntry("t", 1, 0, nil)
	for _, b := range [][]dag.Entry{{es[0], es[1], es[3], es[4]}, {other}, {es[2]}, es[5:]} {
		if _, err := s.Put(ctx, dag.Batch{Entries: b}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		after uint64
		limit int
		want  []dag.Entry
	}{
		{0, 0, es}, {0, 3, es[:3]}, {1, 4, es[1:5]}, {2, 0, es[2:]}, {7, 5, es[7:]}, {8, 0, nil}, {1<<64 - 1, 0, nil},
	} {
		got, err := s.LogEntries(ctx, "s", c.after, c.limit)
		if err != nil {
			t.Fatalf("after %d limit %d: %v", c.after, c.limit, err)
		}
		var scanned []dag.Entry
		if err := s.ScanLog(ctx, "s", c.after, c.limit, func(page []dag.Entry) error {
			scanned = append(scanned, page...)
			return nil
		}); err != nil {
			t.Fatalf("ScanLog after %d limit %d: %v", c.after, c.limit, err)
		}
		if len(scanned) != len(got) {
			t.Fatalf("ScanLog after %d limit %d: %d entries, LogEntries %d", c.after, c.limit, len(scanned), len(got))
		}
		for i := range got {
			if g, e := scanned[i], got[i]; g.ID != e.ID || g.Space != e.Space || !bytes.Equal(g.Data, e.Data) || !slices.Equal(g.Parents, e.Parents) {
				t.Errorf("ScanLog after %d limit %d: entry %d is %s, LogEntries %s", c.after, c.limit, i, g.ID, e.ID)
			}
		}
		if len(got) != len(c.want) {
			t.Fatalf("after %d limit %d: %d entries, want %d", c.after, c.limit, len(got), len(c.want))
		}
		for i, e := range c.want {
			g := got[i]
			if g.ID != e.ID || g.Space != "s" || !bytes.Equal(g.Data, e.Data) || !slices.Equal(g.Parents, e.Parents) {
				t.Errorf("after %d limit %d: entry %d is %s %q %v, want %s", c.after, c.limit, i, g.ID, g.Space, g.Parents, e.ID)
			}
		}
	}
	if got, err := s.LogEntries(ctx, "nowhere", 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("unknown space: %v, %v", got, err)
	}
	if err := s.ScanLog(ctx, "nowhere", 0, 0, func([]dag.Entry) error { t.Fatal("a page of an unknown space"); return nil }); err != nil {
		t.Fatalf("ScanLog of an unknown space: %v", err)
	}
}

// ScanLog reads a log of many pages, in several log runs and body files,
// in order, from any position; an error from fn ends it with that error.
func TestScanLogPages(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "memory"}[mem], func(t *testing.T) {
			ctx := context.Background()
			s := scanStore(t, mem)
			es := putChain(t, s, "s", 3000, 250)
			for _, after := range []uint64{0, 1, 511, 512, 1700, 2999, 3000} {
				var got []dag.Entry
				pages := 0
				if err := s.ScanLog(ctx, "s", after, 0, func(page []dag.Entry) error {
					pages++
					if len(page) == 0 || len(page) > 512 {
						t.Fatalf("after %d: a page of %d entries", after, len(page))
					}
					got = append(got, page...)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				want := es[after:]
				if len(got) != len(want) {
					t.Fatalf("after %d: %d entries, want %d", after, len(got), len(want))
				}
				// Read after every page has come: nothing points into what
				// a later page was read into. An entry's slices end where
				// it does (entries of a read share one allocation each for
				// data and parents): an append to one never writes another.
				for i := range want {
					if got[i].ID != want[i].ID || !bytes.Equal(got[i].Data, want[i].Data) || !slices.Equal(got[i].Parents, want[i].Parents) {
						t.Fatalf("after %d: entry %d is %s, want %s", after, i, got[i].ID, want[i].ID)
					}
					if cap(got[i].Data) != len(got[i].Data) || cap(got[i].Parents) != len(got[i].Parents) {
						t.Fatalf("after %d: entry %d has room past its end (data %d of %d, parents %d of %d)", after, i,
							len(got[i].Data), cap(got[i].Data), len(got[i].Parents), cap(got[i].Parents))
					}
				}
				if after == 0 && pages < 6 {
					t.Errorf("3000 entries came in %d pages, want pages of at most 512", pages)
				}
			}
			var n int
			if err := s.ScanLog(ctx, "s", 100, 700, func(page []dag.Entry) error { n += len(page); return nil }); err != nil || n != 700 {
				t.Fatalf("limit 700: %d entries, %v", n, err)
			}
			stop := errors.New("stop")
			n = 0
			if err := s.ScanLog(ctx, "s", 0, 0, func(page []dag.Entry) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
				t.Fatalf("fn's error: %v after %d pages", err, n)
			}
		})
	}
}

// A caller that stops taking pages does not hold the scan's read view: the
// body files' GC, which waits for every view, gets its turn while fn
// waits for it, and the scan then goes on where it was, in a new view.
// With the view held across fn this test deadlocks (and fails on its
// timeout).
func TestScanLogReleasesViewWhileCallerWaits(t *testing.T) {
	ctx := context.Background()
	s := scanStore(t, false)
	es := putChain(t, s, "s", 3000, 250)
	var got []dag.Entry
	first := true
	if err := s.ScanLog(ctx, "s", 0, 0, func(page []dag.Entry) error {
		if first {
			first = false
			done := make(chan struct{})
			go func() { badgerstore.LockGCGate(s); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("the GC gate was not free while the caller of ScanLog waited")
			}
		}
		got = append(got, page...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(es) {
		t.Fatalf("%d entries, want %d", len(got), len(es))
	}
	for i := range es {
		if got[i].ID != es[i].ID {
			t.Fatalf("entry %d is %s, want %s", i, got[i].ID, es[i].ID)
		}
	}
}

func scanStore(t *testing.T, mem bool) *badgerstore.Store {
	o := badgerstore.Options{NoSync: true, BodyFileSize: 64 << 10}
	dir := t.TempDir()
	if mem {
		o, dir = badgerstore.Options{InMemory: true}, ""
	}
	s, err := badgerstore.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// putChain writes a chain of n entries to space in batches of batch, and
// returns them in log order.
func putChain(t *testing.T, s *badgerstore.Store, space string, n, batch int) []dag.Entry {
	var es []dag.Entry
	var parents []dag.ID
	for i := range n {
		e := dagtest.NewEntry(space, 1, i, parents)
		es = append(es, e)
		parents = []dag.ID{e.ID}
	}
	for i := 0; i < n; i += batch {
		if _, err := s.Put(context.Background(), dag.Batch{Entries: es[i:min(i+batch, n)]}); err != nil {
			t.Fatal(err)
		}
	}
	return es
}

// A scan of the first n entries while the log grows (Puts appending to the
// same space, and so rewriting its last log run) reads exactly those n, in
// order, across the views it takes.
func TestScanLogWhileWriting(t *testing.T) {
	ctx := context.Background()
	s := scanStore(t, false)
	es := putChain(t, s, "s", 2000, 100)
	more := make([]dag.Entry, 0, 2000)
	parents := []dag.ID{es[len(es)-1].ID}
	for i := range 2000 {
		e := dagtest.NewEntry("s", 1, 2000+i, parents)
		more = append(more, e)
		parents = []dag.ID{e.ID}
	}
	done := make(chan error, 1)
	go func() {
		for i := 0; i < len(more); i += 50 {
			if _, err := s.Put(ctx, dag.Batch{Entries: more[i : i+50]}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var got []dag.Entry
	if err := s.ScanLog(ctx, "s", 0, len(es), func(page []dag.Entry) error {
		time.Sleep(25 * time.Millisecond) // past the pause: several views
		got = append(got, page...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != len(es) {
		t.Fatalf("%d entries, want %d", len(got), len(es))
	}
	for i := range es {
		if got[i].ID != es[i].ID || !bytes.Equal(got[i].Data, es[i].Data) {
			t.Fatalf("entry %d is %s, want %s", i, got[i].ID, es[i].ID)
		}
	}
}
