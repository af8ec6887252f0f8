package node_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/node"
)

// Memory blocks: put whole blocks, read them at an authority level.
func ExampleNode_PutBlock() {
	ctx := context.Background()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{2}, 32))
	l, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	b := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("high water 06:10"),
		Evidence: mb.MustText("gauge 3"), Confidence: mb.MustValue("80"), Lineage: mb.MustParents()}.Seal()
	id, err := l.PutBlock(ctx, "harbour", b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, level := range []mb.Level{0, 50} {
		r, _ := l.Block(ctx, "harbour", id, level)
		fmt.Println(level, r.Band, r.Fields)
	}
	orphan := mb.Block{Body: mb.MustText("reply"), Lineage: mb.MustParents(dag.Sum([]byte("elsewhere")))}.Seal()
	_, err = l.PutBlock(ctx, "harbour", orphan)
	fmt.Println(mb.CodeOf(err))
	// Output:
	// 0 ordinary [origin observed_at lineage subject body]
	// 50 captain [origin observed_at lineage subject body evidence]
	// BLOCK_MISSING_PARENT
}
