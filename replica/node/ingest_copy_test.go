package node_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// TestIngestKeepsNoCallerBytes: Node.Ingest takes its items' bytes
// without copying them, as sync hands them (slices of a frame it may
// reuse), so nothing the node keeps may point into them. Two nodes take
// the same random history (forks, objects, entries before their parents
// or without their objects, duplicates) in the same calls; one gets
// buffers that are overwritten as soon as each call returns, the other
// buffers nobody touches. After every call both answer the same (log,
// heads, pending, state hash), and at the end every stored entry and
// object of the first reads back as it was sent.
func TestIngestKeepsNoCallerBytes(t *testing.T) {
	ctx := context.Background()
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	clk := func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }
	rapid.Check(t, func(rt *rapid.T) {
		hs := ht.GenHistory(rt)
		space := hs.B.Session.String()
		txs := slices.Clone(hs.All)
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(hs.All)-1), 0, 3).Draw(rt, "dup") {
			txs = append(txs, hs.All[i])
		}
		txs = rapid.Permutation(txs).Draw(rt, "order")
		// Some entries are sent first without their objects (held back in
		// the node), which come later with a copy of the entry or only
		// attached to another entry (then the held copy is what is judged).
		attach := make([][][]byte, len(txs))
		for i, tx := range txs {
			attach[i] = tx.Attach
		}
		for _, d := range rapid.SliceOfN(rapid.IntRange(0, len(txs)-1), 0, 4).Draw(rt, "strip") {
			if len(attach[d]) == 0 {
				continue
			}
			carrier := d
			if rapid.Bool().Draw(rt, "elsewhere") {
				carrier = rapid.IntRange(0, len(txs)-1).Draw(rt, "carrier")
			}
			txs = append(txs, txs[carrier])
			attach = append(attach, append(slices.Clone(attach[carrier]), attach[d]...))
			attach[d] = nil
		}
		items := func(lo, hi int) []sync.Item {
			out := make([]sync.Item, 0, hi-lo)
			for i := lo; i < hi; i++ {
				it := sync.Item{Data: slices.Clone(txs[i].Bytes)}
				for _, a := range attach[i] {
					it.Objects = append(it.Objects, dag.NewObject(slices.Clone(a)))
				}
				out = append(out, it)
			}
			return out
		}
		open := func() *node.Node {
			n, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key, Clock: clk})
			if err != nil {
				rt.Fatal(err)
			}
			return n
		}
		a, b := open(), open()
		defer func() { a.Close(); b.Close() }()
		for lo := 0; lo < len(txs); {
			hi := lo + rapid.IntRange(1, min(len(txs)-lo, 8)).Draw(rt, "call")
			ia, ib := items(lo, hi), items(lo, hi)
			ra, errA := a.Ingest(ctx, space, ia)
			// The caller reuses its buffers.
			for _, it := range ia {
				scribble(it.Data)
				for _, o := range it.Objects {
					scribble(o.Data)
				}
			}
			rb, errB := b.Ingest(ctx, space, ib)
			if errA != nil || errB != nil {
				rt.Fatalf("%v / %v", errA, errB)
			}
			if fmt.Sprint(ra.Items) != fmt.Sprint(rb.Items) {
				rt.Fatalf("results\n%v\n%v", ra.Items, rb.Items)
			}
			if va, vb := copyView(rt, a, space), copyView(rt, b, space); va != vb {
				rt.Fatalf("after items %d–%d, the node whose buffers were overwritten answers\n%s\nthe other\n%s", lo, hi, va, vb)
			}
			lo = hi
		}
		log, _ := a.Log(ctx, space, 0, 0)
		sent := map[dag.ID]ht.Tx{}
		for _, tx := range hs.All {
			sent[tx.ID] = tx
		}
		for _, id := range log {
			e, err := a.Get(ctx, id)
			if err != nil || !bytes.Equal(e.Data, sent[id].Bytes) {
				rt.Fatalf("entry %s reads back changed: %v", id, err)
			}
			for _, att := range sent[id].Attach {
				if o, err := a.Object(ctx, dag.Sum(att)); err == nil && !bytes.Equal(o, att) {
					rt.Fatalf("object %s of %s reads back changed", dag.Sum(att), id)
				}
			}
		}
	})
}

// scribble overwrites b, as a reused buffer is.
func scribble(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}

func copyView(rt *rapid.T, n *node.Node, space string) string {
	ctx := context.Background()
	var b strings.Builder
	log, err := n.Log(ctx, space, 0, 0)
	fmt.Fprintf(&b, "log %v %v\n", log, err)
	heads, err := n.Heads(ctx, space)
	fmt.Fprintf(&b, "heads %v %v\n", heads, err)
	p, err := n.Pending(ctx, space)
	fmt.Fprintf(&b, "pending %v %v\n", p, err)
	if j, h, err := n.Replica().StateJSON(ctx, dag.MustParseID(space)); err == nil {
		fmt.Fprintf(&b, "state %s %d\n", h, len(j))
	} else {
		fmt.Fprintf(&b, "state: %v\n", err)
	}
	return b.String()
}
