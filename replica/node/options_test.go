package node_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
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
	hs, err := st.Heads(ctx, space.String())
	if err != nil || len(hs) != 1 {
		t.Fatalf("the caller's store after the node closed: heads %v, %v", hs, err)
	}
	if _, _, err := n.Replica().State(ctx, space); !errors.Is(err, replica.ErrClosed) {
		t.Fatalf("the replica after Close: %v", err)
	}
}

// TestOptionsReplicaReachesTheReplica: node.Options.Replica is the
// replica's configuration, whole: MaxRefusals (which the node once
// restated field by field, and lost) bounds the refusal log; the fields
// that are the node's own are refused there.
func TestOptionsReplicaReachesTheReplica(t *testing.T) {
	ctx := context.Background()
	b := ht.New(ht.Options{})
	// Ballots of a session this node does not hold: refused
	// unknown_parent, a refusal the log keeps.
	_, mr := b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: b.Genesis, TargetHead: b.Genesis,
		Members: ht.Members(0, 3), Rule: ht.Majority(house.MinRootNotice)}, b.Create.ID)
	logged := func(o node.Options) (int, bool) {
		n, err := node.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		for i := 0; i < 3; i++ {
			tx := b.Ballot(ht.Member(i), mr, "approve", dag.ID{}, b.Create.ID)
			rc, err := n.Submit(ctx, tx.Bytes, tx.Attach)
			if err != nil || rc.Status != "rejected" || rc.Errors[0].Code != dag.CodeUnknownParent {
				t.Fatalf("ballot %d: %v %+v", i, err, rc)
			}
		}
		recs, _ := n.Replica().RefusalLog(0, 10)
		return len(recs), n.Replica().RefusalLogFull()
	}
	if got, full := logged(node.Options{InMemory: true}); got != 3 || full {
		t.Errorf("default refusal log: %d records, full %v; want 3, not full", got, full)
	}
	if got, full := logged(node.Options{InMemory: true, Replica: replica.Options{MaxRefusals: 1}}); got != 1 || !full {
		t.Errorf("Replica.MaxRefusals 1: %d records, full %v; want 1, full", got, full)
	}
	if n, err := node.Open(ctx, node.Options{InMemory: true, Replica: replica.Options{InMemory: true}}); err == nil {
		n.Close()
		t.Error("Options.Replica.InMemory accepted: the store is the node's to choose")
	}
}
