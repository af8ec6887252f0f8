package node_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/simnet"
)

// TestOneSpellingOfASpace: a memory space is "mem:notes" everywhere (the
// memory API also takes the bare "notes"); Heads, Join, Connect and simnet
// refuse the bare name, or any other misspelling, with an error naming
// the spelling to use, instead of an empty answer.
func TestOneSpellingOfASpace(t *testing.T) {
	ctx := context.Background()
	n := openNode(t)
	blk := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("high water 06:10"), Lineage: mb.MustParents()}.Seal()
	id, err := n.PutBlock(ctx, "mem:notes", blk)
	if err != nil {
		t.Fatalf("PutBlock with mem:notes: %v", err)
	}
	for _, name := range []string{"notes", "mem:notes"} {
		hs, err := n.MemoryHeads(ctx, name)
		if err != nil || !slices.Equal(hs, []dag.ID{id}) {
			t.Errorf("MemoryHeads(%q) = %v, %v; want [%s]", name, hs, err, id)
		}
		if _, err := n.Block(ctx, name, id, 0); err != nil {
			t.Errorf("Block(%q): %v", name, err)
		}
	}
	if hs, err := n.Heads(ctx, "mem:notes"); err != nil || !slices.Equal(hs, []dag.ID{id}) {
		t.Errorf("Heads(mem:notes) = %v, %v", hs, err)
	}
	_, err = n.Heads(ctx, "notes")
	if !errors.Is(err, node.ErrSpaceName) || !strings.Contains(err.Error(), "mem:notes") {
		t.Errorf("Heads(notes): %v; want ErrSpaceName naming mem:notes", err)
	}
	for _, bad := range []string{"notes", "mem:", "mem:mem:notes", "sha256:nope", ""} {
		if err := node.CheckSpace(bad); !errors.Is(err, node.ErrSpaceName) {
			t.Errorf("CheckSpace(%q) = %v", bad, err)
		}
	}
	if err := n.Join(ctx, "notes"); !errors.Is(err, node.ErrSpaceName) {
		t.Errorf("Join(notes) = %v", err)
	}
	// Connect checks its spaces before it dials: no sync is needed to be
	// told of the misspelling.
	if _, err := n.StartSync(ctx, loopback()); err != nil {
		t.Fatal(err)
	}
	if res, err := n.Connect(ctx, "/ip4/127.0.0.1/tcp/1/p2p/12D3KooWHHzSeKaY8xuZVzkLbKFfvNgPPeKhFBGrMbNzbm5akpqu", []string{"notes"}); !errors.Is(err, node.ErrSpaceName) {
		t.Errorf("Connect(…, [notes]) = %v, %v", res, err)
	}
	// simnet over real nodes: a misspelt space is an error, not a network
	// that never converges.
	other := openNode(t)
	net := simnet.New(simnet.Config{Seed: 1})
	net.Add("a", n, sync.Options{})
	net.Add("b", other, sync.Options{})
	if _, err := net.RunUntilConverged(ctx, "notes", 3); !errors.Is(err, node.ErrSpaceName) {
		t.Errorf("simnet with notes: %v", err)
	}
	if _, err := net.RunUntilConverged(ctx, "mem:nobody", 3); err == nil || !strings.Contains(err.Error(), "no replica holds") {
		t.Errorf("simnet with a space no node holds: %v", err)
	}
}

// TestHeadsOfAnUnheldSpace: Heads of a well-spelt space the node holds
// nothing of (a memory space, a session id) is an error wrapping
// dag.ErrUnheldSpace, not an empty list, and not ErrSpaceName; dag.HeadsOf
// reads it as no heads, and sync, which uses it, still brings the space
// to a node that held nothing of it (simnet over real nodes).
func TestHeadsOfAnUnheldSpace(t *testing.T) {
	ctx := context.Background()
	a, b := openNode(t), openNode(t)
	for _, sp := range []string{"mem:tide", dag.Sum([]byte("no such session")).String()} {
		hs, err := b.Heads(ctx, sp)
		if !errors.Is(err, dag.ErrUnheldSpace) || errors.Is(err, node.ErrSpaceName) || hs != nil {
			t.Errorf("Heads(%s) on a node holding none of it = %v, %v; want ErrUnheldSpace", sp, hs, err)
		}
		if hs, err := dag.HeadsOf(ctx, b, sp); err != nil || hs != nil {
			t.Errorf("HeadsOf(%s) = %v, %v; want no heads, no error", sp, hs, err)
		}
	}
	blk := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("low water 12:25"), Lineage: mb.MustParents()}.Seal()
	id, err := a.PutBlock(ctx, "mem:tide", blk)
	if err != nil {
		t.Fatal(err)
	}
	net := simnet.New(simnet.Config{Seed: 2})
	net.Add("a", a, sync.Options{})
	net.Add("b", b, sync.Options{})
	if _, err := net.RunUntilConverged(ctx, "mem:tide", 10); err != nil {
		t.Fatal(err)
	}
	if hs, err := b.Heads(ctx, "mem:tide"); err != nil || !slices.Equal(hs, []dag.ID{id}) {
		t.Fatalf("after sync, Heads(mem:tide) on b = %v, %v; want [%s]", hs, err, id)
	}
	if _, err := net.RunUntilConverged(ctx, "mem:nobody", 3); !errors.Is(err, dag.ErrUnheldSpace) {
		t.Errorf("simnet with a space no node holds: %v", err)
	}
}
