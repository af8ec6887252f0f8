package badgerstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
)

// TestReadWhileClosing closes the store inside a read's transaction, as a
// sync node's debounced announcement can at a node's shutdown: the read
// returns dag.ErrClosed instead of panicking (Badger panics when a
// transaction opens an iterator on a closed DB).
func TestReadWhileClosing(t *testing.T) {
	ctx := context.Background()
	s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, dag.Batch{Entries: promoChainIn("sp", 10)}); err != nil {
		t.Fatal(err)
	}
	badgerstore.SetViewHook(s, func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if _, err := s.Heads(ctx, "sp"); !errors.Is(err, dag.ErrClosed) {
		t.Fatalf("Heads of a store closed under it: %v, want dag.ErrClosed", err)
	}
}
