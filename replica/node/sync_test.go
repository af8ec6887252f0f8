package node_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

func loopback() sync.Config {
	return sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Debounce: 10 * time.Millisecond, Interval: time.Second}
}

// eventually polls cond every 20ms until it holds or ctx ends.
func eventually(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Two nodes on loopback libp2p: the node starts sync itself
// (Options.Sync, StartSync), joins a space that changes on it, and serves
// Connect, Peers and Pulls; Close stops sync before the store.
func TestNodeSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := loopback()
	a, err := node.Open(ctx, node.Options{InMemory: true, Sync: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := openNode(t)
	if b.Sync() != nil || b.Peers() != nil {
		t.Fatal("a node opened without Options.Sync runs sync")
	}
	if _, err := b.Connect(ctx, a.Sync().Addrs()[0], nil); !errors.Is(err, node.ErrNoSync) {
		t.Fatalf("Connect without sync: %v, want ErrNoSync", err)
	}

	// A session created on a after sync started is joined there at once.
	space := newSession(t, a)
	eventually(ctx, t, "a joins its new session", func() bool { return slices.Contains(a.Sync().Spaces(), space.String()) })

	if _, err := b.StartSync(ctx, loopback()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.StartSync(ctx, loopback()); err == nil {
		t.Fatal("a second StartSync succeeded")
	}
	res, err := b.Connect(ctx, a.Sync().Addrs()[0], []string{space.String()})
	if err != nil {
		t.Fatal(err)
	}
	// Two entries (session.create, the roster's group.create) came from
	// a, by this pull or by the one the connection started first.
	if len(res) != 1 || res[0].Space != space.String() || res[0].Error != "" || res[0].Accepted+res[0].Duplicate != 2 {
		t.Fatalf("Connect: %+v, want the session's 2 entries", res)
	}
	// Whichever pull stored them, the node held none of them before the
	// call and both after it: what witan sync reports as stored.
	if res[0].HeldBefore != 0 || res[0].HeldAfter != 2 {
		t.Fatalf("Connect: held %d before, %d after; want 0 and 2", res[0].HeldBefore, res[0].HeldAfter)
	}
	ha, _ := a.Heads(ctx, space.String())
	hb, _ := b.Heads(ctx, space.String())
	if len(ha) != 1 || !slices.Equal(ha, hb) {
		t.Fatalf("heads a %v, b %v", ha, hb)
	}
	if ps := b.Peers(); len(ps) != 1 || ps[0].ID != a.Sync().ID().String() || len(ps[0].Addrs) == 0 {
		t.Fatalf("b's peers: %+v", ps)
	}

	// A memory block written on b reaches a: b joined the memory space
	// when it changed, and a joins it when told of it by a subscription.
	blk := mb.Block{Subject: mb.MustText("tide"), Body: mb.MustText("high water 06:10"), Lineage: mb.MustParents()}.Seal()
	type arrival struct {
		name   string
		blocks []dag.ID
	}
	got := make(chan arrival, 4)
	defer a.SubscribeMemory(func(name string, blocks []dag.ID) { got <- arrival{name, blocks} })()
	if _, err := a.StartSync(ctx, loopback()); err == nil {
		t.Fatal("StartSync on a node opened with Options.Sync succeeded")
	}
	if err := a.Sync().Join(node.MemoryPrefix + "harbour"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutBlock(ctx, "harbour", blk); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "b joins the memory space it wrote", func() bool {
		return slices.Contains(b.Sync().Spaces(), node.MemoryPrefix+"harbour")
	})
	select {
	case x := <-got:
		if x.name != "harbour" || !slices.Equal(x.blocks, []dag.ID{blk.ID()}) {
			t.Fatalf("SubscribeMemory told of %q %v, want harbour [%s]", x.name, x.blocks, blk.ID())
		}
	case <-ctx.Done():
		t.Fatal("the block never reached a")
	}
	r, err := a.Block(ctx, "harbour", blk.ID(), 0)
	if err != nil || r.Hash != blk.ID() {
		t.Fatalf("a reads the block: %+v, %v", r, err)
	}
	// A block's finality is a replica.Finality, as every read's is (a
	// string would not compile here); a memory space has no checkpoint.
	var f replica.Finality = r.Finality
	if f != replica.Provisional {
		t.Fatalf("the block's finality is %q, want provisional", f)
	}
	if hs, err := a.MemoryHeads(ctx, "harbour"); err != nil || !slices.Equal(hs, []dag.ID{blk.ID()}) {
		t.Fatalf("a's memory heads %v, %v", hs, err)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b.Sync() != nil {
		t.Fatal("sync still runs after Close")
	}
}
