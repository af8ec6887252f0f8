package node_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
)

// openNode opens an in-memory node with a fixed key and clock.
func openNode(t testing.TB) *node.Node {
	t.Helper()
	key, err := dag.SignerFromSeed(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	clk := func() time.Time { return time.Date(2026, 9, 21, 0, 0, 0, 0, time.UTC) }
	n, err := node.Open(context.Background(), node.Options{InMemory: true, NodeKey: key, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// submit hands tx to n and fails unless it is accepted.
func submit(t testing.TB, n *node.Node, tx ht.Tx) {
	t.Helper()
	rc, err := n.Submit(context.Background(), tx.Bytes, tx.Attach)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != "accepted" {
		t.Fatalf("%s %s: %s %+v", tx.Env.Type, tx.ID, rc.Status, rc.Errors)
	}
}

// newSession submits a session.create and its roster group, and returns
// the session's space.
func newSession(t testing.TB, n *node.Node) dag.ID {
	t.Helper()
	b := ht.New(ht.Options{Simulation: true})
	submit(t, n, b.Create)
	submit(t, n, b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), b.Create.ID))
	return b.Session
}
