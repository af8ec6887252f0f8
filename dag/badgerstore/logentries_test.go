package badgerstore_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

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
}
