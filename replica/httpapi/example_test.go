package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/httpapi"
)

// A node in a program: a store and replica (OpenLocal), the API server on
// a loopback listener, and a client.
func ExampleServer() {
	ctx := context.Background()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{1}, 32))
	l, err := httpapi.OpenLocal(ctx, httpapi.OpenOptions{InMemory: true, NodeKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	srv, _ := httpapi.New(httpapi.Options{Local: l})
	hs := httptest.NewServer(srv) // 127.0.0.1
	defer hs.Close()

	c := &httpapi.Client{BaseURL: hs.URL}
	var capa httpapi.Capability
	if err := c.Get(ctx, "/.well-known/oth", nil, &capa); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(capa.Consistency, capa.TrustModel, capa.ConformanceLevel, capa.RuleKinds)

	// Errors are problem+json with a code.
	err = c.Get(ctx, "/objects/not-an-id", nil, nil)
	fmt.Println(err.(*httpapi.Error).Status, err.(*httpapi.Error).Code())
	// Output:
	// eventual crdt-replicas L0 [always_allow designated_approvers threshold_vote]
	// 400 schema
}

// Memory blocks: put whole blocks, read them at an authority level.
func ExampleLocal_PutBlock() {
	ctx := context.Background()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{2}, 32))
	l, err := httpapi.OpenLocal(ctx, httpapi.OpenOptions{InMemory: true, NodeKey: key})
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
