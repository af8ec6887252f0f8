package node_test

import (
	"context"
	"testing"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// Node.Ingest decodes a large call's items on every core, in parts; each
// item's result stays at its place: applied ones are duplicates, one that
// does not decode or belongs to another session is refused, the rest are
// accepted, wherever they fall among the parts.
func TestIngestDecodesInParts(t *testing.T) {
	ctx := context.Background()
	space, items := benchBallots(600)
	other := ht.New(ht.Options{Label: "another session"}).Create.Bytes
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if res, err := n.Ingest(ctx, space, items[:100]); err != nil || res.Count(sync.Accepted) != 100 {
		t.Fatalf("first 100: %v, %d accepted", err, res.Count(sync.Accepted))
	}
	call := append([]sync.Item(nil), items[:150]...)
	call = append(call, sync.Item{Data: []byte(`{"not":"an envelope"}`)})
	call = append(call, items[150:300]...)
	call = append(call, sync.Item{Data: other})
	call = append(call, items[300:]...)
	res, err := n.Ingest(ctx, space, call)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Items {
		want, code := sync.Accepted, dag.Code("")
		switch {
		case i < 100:
			want = sync.Duplicate
		case i == 150:
			want, code = sync.Quarantined, dag.CodeSchema
		case i == 301:
			want, code = sync.Quarantined, dag.CodeSchema
		}
		if r.Outcome != want || r.Code != code {
			t.Fatalf("item %d: %+v, want %s %q", i, r, want, code)
		}
		if i != 150 && i != 301 && r.ID != dag.Sum(call[i].Data) {
			t.Fatalf("item %d: id %s, want %s", i, r.ID, dag.Sum(call[i].Data))
		}
	}
	if len(res.Items) != len(items)+2 {
		t.Fatalf("%d results for %d items", len(res.Items), len(items)+2)
	}
}
