package badgerstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
)

func entry(space, data string, parents ...dag.ID) dag.Entry {
	return dag.Entry{ID: dag.Sum([]byte(data)), Space: space, Parents: parents, Data: []byte(data)}
}

// DropRefused keeps nothing of a refused entry or of its attachments that
// KeepObject leaves out; DropPending removes an orphan as if it had never
// come. Both stores behave alike.
func TestNothingKeptOfRefusedOrDropped(t *testing.T) {
	ctx := context.Background()
	bs, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	type store interface {
		dag.Store
		DropPending(context.Context, string, []dag.ID) (int, error)
	}
	for name, s := range map[string]store{"badger": bs, "mem": dag.NewMemStore()} {
		t.Run(name, func(t *testing.T) {
			root := entry("s", name+"root")
			bad := entry("s", name+"bad", root.ID)
			badChild := entry("s", name+"badchild", bad.ID) // arrives first, waits for bad
			junk := dag.NewObject([]byte(name + "junk"))
			keep := dag.NewObject([]byte(name + "keep"))
			if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{root, badChild}}); err != nil {
				t.Fatal(err)
			}
			res, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{bad}, Objects: []dag.Object{junk, keep}, DropRefused: true,
				Admit:      func(e dag.Entry) error { return dag.Errorf(dag.CodeNotAuthorized, "no") },
				KeepObject: func(id dag.ID) bool { return id == keep.ID }})
			if err != nil || len(res.Quarantined) != 2 {
				t.Fatalf("put: %+v %v, want the entry and its waiting child refused", res, err)
			}
			for _, id := range []dag.ID{bad.ID, badChild.ID} {
				if st, err := s.Has(ctx, id); err != nil || st != dag.Absent {
					t.Fatalf("refused %s held as %s %v", id, st, err)
				}
			}
			if q, _ := s.Quarantine(ctx, "s"); len(q) != 0 {
				t.Fatalf("quarantine stored: %v", q)
			}
			if _, err := s.Object(ctx, junk.ID); !errors.Is(err, dag.ErrNotFound) {
				t.Fatalf("an object KeepObject left out was written (%v)", err)
			}
			if _, err := s.Object(ctx, keep.ID); err != nil {
				t.Fatalf("an object KeepObject kept is missing: %v", err)
			}
			orphan := entry("s", name+"orphan", dag.Sum([]byte("nobody has this")))
			if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{orphan}}); err != nil {
				t.Fatal(err)
			}
			if n, err := s.DropPending(ctx, "s", []dag.ID{orphan.ID, root.ID}); err != nil || n != 1 {
				t.Fatalf("DropPending: %d %v, want 1 (root is applied, not pending)", n, err)
			}
			if st, _ := s.Has(ctx, orphan.ID); st != dag.Absent {
				t.Fatalf("dropped orphan held as %s", st)
			}
			if p, _ := s.Pending(ctx, "s"); len(p) != 0 {
				t.Fatalf("pending after drop: %v", p)
			}
			if m, _ := s.Missing(ctx, "s"); len(m) != 0 {
				t.Fatalf("missing after drop: %v", m)
			}
			if st, _ := s.Has(ctx, root.ID); st != dag.Applied {
				t.Fatalf("root %s", st)
			}
		})
	}
}
