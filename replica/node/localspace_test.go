package node_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// The replica keeps its checkpoints in node-local spaces of the store;
// the node, which sync reads, neither lists nor serves them.
func TestNodeHidesNodeLocalSpaces(t *testing.T) {
	ctx := context.Background()
	n := openNode(t)
	space := newSession(t, n)
	if _, err := n.Replica().Checkpoint(ctx, space); err != nil {
		t.Fatal(err)
	}
	all, err := n.Store().Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var local []string
	for _, name := range all {
		if replica.IsLocalSpace(name) {
			local = append(local, name)
		}
	}
	if len(local) == 0 {
		t.Fatalf("the store holds no node-local space after a checkpoint: %v", all)
	}
	offered, err := n.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(offered, space.String()) {
		t.Fatalf("Spaces %v lacks the session %s", offered, space)
	}
	for _, name := range local {
		if slices.Contains(offered, name) {
			t.Errorf("Spaces offers node-local %s", name)
		}
		stored, err := n.Store().Heads(ctx, name)
		if err != nil || len(stored) == 0 {
			t.Fatalf("store heads of %s: %v %v", name, stored, err)
		}
		if h, _ := n.Heads(ctx, name); len(h) != 0 {
			t.Errorf("Heads(%s) = %v", name, h)
		}
		if lg, _ := n.Log(ctx, name, 0, 0); len(lg) != 0 {
			t.Errorf("Log(%s) = %v", name, lg)
		}
		if _, err := n.Get(ctx, stored[0]); !errors.Is(err, dag.ErrNotFound) {
			t.Errorf("Get of node-local entry %s: %v, want ErrNotFound", stored[0], err)
		}
	}
}
