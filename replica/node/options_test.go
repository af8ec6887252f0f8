package node_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/node"
)

// Exactly one of Store, Dir and InMemory; a node that keeps its entries
// needs its key.
func TestOptionsValidate(t *testing.T) {
	ctx := context.Background()
	key, err := dag.GenerateSigner(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bad := map[string]node.Options{
		"none":                {NodeKey: key},
		"dir and in-memory":   {Dir: t.TempDir(), InMemory: true, NodeKey: key},
		"store and dir":       {Store: st, Dir: t.TempDir(), NodeKey: key},
		"store and in-memory": {Store: st, InMemory: true, NodeKey: key},
		"dir without a key":   {Dir: t.TempDir()},
		"store without a key": {Store: st},
		"all three, with key": {Store: st, Dir: t.TempDir(), InMemory: true, NodeKey: key},
	}
	for name, o := range bad {
		n, err := node.Open(ctx, o)
		if err == nil {
			n.Close()
			t.Errorf("%s: Open succeeded", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "node: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
	// InMemory alone works: the key is generated.
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if n.Replica().NodeKey() == (dag.Key{}) {
		t.Error("no node key generated")
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// A store the caller gives stays open after Close: it is the caller's.
func TestOptionsStoreIsCallers(t *testing.T) {
	ctx := context.Background()
	key, _ := dag.GenerateSigner(nil)
	st, err := badgerstore.Open("", badgerstore.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := node.Open(ctx, node.Options{Store: st, NodeKey: key})
	if err != nil {
		t.Fatal(err)
	}
	space := newSession(t, n)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	hs, err := st.Heads(ctx, space)
	if err != nil || len(hs) != 1 {
		t.Fatalf("the caller's store after the node closed: heads %v, %v", hs, err)
	}
	if _, _, err := n.Replica().State(ctx, space); !errors.Is(err, replica.ErrClosed) {
		t.Fatalf("the replica after Close: %v", err)
	}
}
