package node

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/sync"
)

// logSize, read from the heads' positions, is the length of the log as
// Log lists it, after every part of a random history (forks, entries
// before their parents, duplicates) ingested in random order, and 0 for a
// space the node does not hold.
func TestLogSizeIsTheLogsLength(t *testing.T) {
	ctx := context.Background()
	clk := func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		space := hs.B.Session.String()
		txs := rapid.Permutation(hs.All).Draw(rt, "order")
		n, err := Open(ctx, Options{InMemory: true, Clock: clk})
		if err != nil {
			rt.Fatal(err)
		}
		defer n.Close()
		if got := n.logSize(ctx, space); got != 0 {
			rt.Fatalf("logSize of a space not held = %d", got)
		}
		for lo := 0; lo < len(txs); {
			hi := lo + rapid.IntRange(1, len(txs)-lo).Draw(rt, "part")
			if _, err := n.Ingest(ctx, space, txItems(txs[lo:hi])); err != nil {
				rt.Fatal(err)
			}
			log, err := n.Log(ctx, space, 0, 0)
			if err != nil {
				rt.Fatal(err)
			}
			if got := n.logSize(ctx, space); got != len(log) {
				rt.Fatalf("after items %d–%d: logSize %d, the log holds %d", lo, hi, got, len(log))
			}
			lo = hi
		}
	})
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
