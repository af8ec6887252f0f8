package node

import (
	"context"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/sync"
)

// memNode opens an in-memory node on a fixed clock for one run of a
// property test; the caller closes it when the run ends (rapid.T has no
// Cleanup, and a node per run kept to the test's end would hold them all).
func memNode(rt *rapid.T) *Node {
	clk := func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }
	n, err := Open(context.Background(), Options{InMemory: true, Clock: clk})
	if err != nil {
		rt.Fatal(err)
	}
	return n
}

// txItems is what sync hands Ingest for txs: each envelope with the
// objects it carries.
func txItems(txs []ht.Tx) []sync.Item {
	out := make([]sync.Item, 0, len(txs))
	for _, tx := range txs {
		it := sync.Item{Data: tx.Bytes}
		for _, a := range tx.Attach {
			it.Objects = append(it.Objects, dag.NewObject(a))
		}
		out = append(out, it)
	}
	return out
}
