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
