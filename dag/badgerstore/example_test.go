package badgerstore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "witan-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	s, err := badgerstore.Open(dir, badgerstore.Options{}) // on disk, synced
	if err != nil {
		fmt.Println(err)
		return
	}
	data := []byte(`{"hello":"world"}`)
	e := dag.Entry{ID: dag.Sum(data), Space: "demo", Data: data}
	if _, err := s.Put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		fmt.Println(err)
		return
	}
	s.Close()

	// Everything acknowledged is there after reopening.
	s, _ = badgerstore.Open(dir, badgerstore.Options{})
	defer s.Close()
	got, _ := s.Get(ctx, e.ID)
	heads, _ := s.Heads(ctx, "demo")
	fmt.Println(string(got.Data), len(heads))
	// Output: {"hello":"world"} 1
}

// After Open, a caller that judges entries with Batch.Admit finishes a
// promotion that a crash cut off, space by space, with each space's Admit.
// (Otherwise the next Put of an entry of the space does it.)
func ExampleStore_Resume() {
	ctx := context.Background()
	s, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	admitFor := func(space string) func(dag.Entry) error {
		return func(dag.Entry) error { return nil } // judge the entry against its space
	}
	spaces, err := s.Unfinished(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, sp := range spaces {
		r, err := s.Resume(ctx, sp, admitFor(sp))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(sp, len(r.Applied), "applied")
	}
	fmt.Println(len(spaces), "unfinished")
	// Output: 0 unfinished
}
