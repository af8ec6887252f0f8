package node_test

import (
	"context"
	"testing"

	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
)

// Discovery in the DHT is opt-in: an education session and a memory space
// only when named, a plain session with -discover-sessions, a session not
// held yet only when named.
func TestDiscoverable(t *testing.T) {
	ctx := context.Background()
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	plain := ht.New(ht.Options{Simulation: true, Label: "plain"})
	class := ht.New(ht.Options{Simulation: true, Education: true, Label: "class"})
	for _, b := range []*ht.Builder{plain, class} {
		if _, err := n.Submit(ctx, b.Create.Bytes, b.Create.Attach); err != nil {
			t.Fatalf("create %s: %v", b.Session, err)
		}
	}
	unknown := ht.New(ht.Options{Label: "not held"}).Session.String()
	mem := node.MemoryPrefix + "notes"
	for _, c := range []struct {
		space    string
		named    bool
		sessions bool
		want     bool
	}{
		{plain.Session.String(), false, false, false},
		{plain.Session.String(), false, true, true},
		{plain.Session.String(), true, false, true},
		{class.Session.String(), false, true, false},
		{class.Session.String(), true, false, true},
		{mem, false, true, false},
		{mem, true, false, true},
		{unknown, false, true, false},
		{unknown, true, false, true},
	} {
		named := map[string]bool{}
		if c.named {
			named[c.space] = true
		}
		if got := n.Discoverable(ctx, c.space, named, c.sessions); got != c.want {
			t.Errorf("Discoverable(%s, named %v, sessions %v) = %v, want %v", c.space, c.named, c.sessions, got, c.want)
		}
	}
}
