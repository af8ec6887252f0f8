package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
)

// A node in a program: the node (node.Open), the API server on a loopback
// listener, and a client.
func ExampleServer() {
	ctx := context.Background()
	key, _ := dag.SignerFromSeed(bytes.Repeat([]byte{1}, 32))
	l, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	srv, _ := httpapi.New(httpapi.Options{Node: l})
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
	// eventual crdt-replicas L2 [always_allow designated_approvers threshold_vote]
	// 400 schema
}
