package replica_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// What sync may offer peers: the store's spaces without the replica's
// node-local ones (here, where its checkpoints are kept).
func ExampleIsLocalSpace() {
	ctx := context.Background()
	st, _ := badgerstore.Open("", badgerstore.Options{InMemory: true})
	defer st.Close()
	node, _ := dag.SignerFromSeed(make([]byte, 32))
	r, _ := replica.Open(ctx, replica.Options{Store: st, NodeKey: node, Clock: func() time.Time { return time.Unix(0, 0) }})
	defer r.Close()
	b := ht.New(ht.Options{})
	if rc, err := r.Submit(ctx, b.Create.Bytes, b.Create.Attach); err != nil || rc.Status != "accepted" {
		panic(fmt.Sprint(rc, err))
	}
	if _, err := r.Checkpoint(ctx, b.Session); err != nil {
		panic(err)
	}
	all, _ := st.Spaces(ctx)
	for _, s := range all {
		kind := "offer to peers"
		if replica.IsLocalSpace(s) {
			kind = "keep to this node"
		}
		fmt.Println(strings.Replace(s, b.Session.String(), "<session>", 1)+":", kind)
	}
	// Output:
	// <session>: offer to peers
	// witan-local/checkpoints/<session>: keep to this node
	// witan-local/identity: keep to this node
}
