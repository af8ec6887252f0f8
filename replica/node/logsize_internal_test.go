package node

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// logSize, read from the heads' positions, is the length of the log as
// Log lists it, after every part of a random history (forks, entries
// before their parents, duplicates) ingested in random order, and 0 for a
// space the node does not hold.
func TestLogSizeIsTheLogsLength(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		space := hs.B.Session.String()
		txs := rapid.Permutation(hs.All).Draw(rt, "order")
		n := memNode(rt)
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
