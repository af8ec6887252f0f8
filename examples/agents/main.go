// Command agents: two agents work offline, each writing CAT7 memory blocks
// into its own node's memory space; then they meet (libp2p on loopback),
// sync the space, and read each other's blocks at different authority
// levels: the ordinary reader (level 0) never sees evidence, the captain
// (level 50) does, and nobody receives confidence. A block that descends
// from the other's block shows its ancestry across both agents; a block
// whose lineage names something the node does not hold is refused
// (BLOCK_MISSING_PARENT), never re-rooted.
//
//	go run ./examples/agents
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

const space = "field-notes"

// agent is one agent's laptop: a node with a memory space, which syncs
// over libp2p once it meets someone.
type agent struct {
	name string
	n    *node.Node
}

func newAgent(ctx context.Context, name string) (*agent, error) {
	key, err := dag.GenerateSigner(nil)
	if err != nil {
		return nil, err
	}
	n, err := node.Open(ctx, node.Options{InMemory: true, NodeKey: key})
	if err != nil {
		return nil, err
	}
	return &agent{name: name, n: n}, nil
}

// goOnline starts the agent's sync on loopback, mDNS off, dialling peers.
func (a *agent) goOnline(ctx context.Context, peers ...string) error {
	_, err := a.n.StartSync(ctx, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Peers: peers,
		Spaces: []string{node.MemoryPrefix + space}, Debounce: 20 * time.Millisecond,
		// Re-announce often: an announcement sent before the gossip mesh
		// formed is lost, and the next one is what carries it.
		Interval: time.Second})
	return err
}

// close stops the agent's sync and closes its node.
func (a *agent) close() { a.n.Close() }

// outcome is what the test checks.
type outcome struct {
	Converged       bool
	AdaSeesEvidence bool // Ada reads Bo's block at level 0
	BoSeesEvidence  bool // Bo reads Ada's block at level 50
	Confidence      bool // anyone received confidence
	AncestryDepth   int
	Orphan          mb.Code
}

func run(ctx context.Context, w io.Writer) (*outcome, error) {
	ada, err := newAgent(ctx, "ada")
	if err != nil {
		return nil, err
	}
	defer ada.close()
	bo, err := newAgent(ctx, "bo")
	if err != nil {
		return nil, err
	}
	defer bo.close()
	o := &outcome{}

	// Offline: each writes what it observed.
	tide := mb.Block{Origin: mb.MustText("agent:ada"), Subject: mb.MustText("tide"), Body: mb.MustText("high water at 06:10"),
		Evidence: mb.MustText("gauge 3, photographed"), Confidence: mb.MustValue("80"),
		ObservedAt: mb.MustText("2026-09-21T06:10:00Z"), Lineage: mb.MustParents()}.Seal()
	pier := mb.Block{Origin: mb.MustText("agent:bo"), Subject: mb.MustText("pier 2"), Body: mb.MustText("pier 2 is closed"),
		Evidence: mb.MustText("sign on the gate"), Confidence: mb.MustValue("95"),
		ObservedAt: mb.MustText("2026-09-21T07:00:00Z"), Lineage: mb.MustParents()}.Seal()
	if _, err := ada.n.PutBlock(ctx, space, tide); err != nil {
		return nil, err
	}
	if _, err := bo.n.PutBlock(ctx, space, pier); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "offline: ada wrote %s (tide), bo wrote %s (pier 2)\n", short(tide.ID()), short(pier.ID()))

	// Bo cannot yet build on Ada's block: he does not hold it.
	reply := mb.Block{Origin: mb.MustText("agent:bo"), Subject: mb.MustText("tide"), Body: mb.MustText("confirmed from the pier"),
		ObservedAt: mb.MustText("2026-09-21T07:05:00Z"), Lineage: mb.MustParents(tide.ID())}.Seal()
	if _, err := bo.n.PutBlock(ctx, space, reply); err != nil {
		var e *mb.Error
		if errors.As(err, &e) {
			o.Orphan = e.Code
		}
		fmt.Fprintf(w, "offline: bo's reply to ada is refused: %s\n", mb.CodeOf(err))
	}

	// They meet.
	if err := ada.goOnline(ctx); err != nil {
		return nil, err
	}
	if err := bo.goOnline(ctx, ada.n.Sync().Addrs()[0]); err != nil {
		return nil, err
	}
	if err := converge(ctx, ada, bo); err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "met and synced: both hold both blocks")

	// Now Bo's reply is accepted, and syncs back to Ada.
	if _, err := bo.n.PutBlock(ctx, space, reply); err != nil {
		return nil, err
	}
	if err := converge(ctx, ada, bo); err != nil {
		return nil, err
	}
	o.Converged = true

	// Each reads the other's block at its own authority level.
	adaRead, err := ada.n.Block(ctx, space, pier.ID(), 0)
	if err != nil {
		return nil, err
	}
	boRead, err := bo.n.Block(ctx, space, tide.ID(), 50)
	if err != nil {
		return nil, err
	}
	o.AdaSeesEvidence = adaRead.Accepted.Has(mb.Evidence)
	o.BoSeesEvidence = boRead.Accepted.Has(mb.Evidence)
	o.Confidence = adaRead.Accepted.Has(mb.Confidence) || boRead.Accepted.Has(mb.Confidence)
	for _, x := range []struct {
		who string
		r   node.BlockRead
	}{{"ada reads bo's block", adaRead}, {"bo reads ada's block", boRead}} {
		fmt.Fprintf(w, "%s at level %d (%s): sees %v\n", x.who, x.r.Level, x.r.Band, x.r.Fields)
		for _, ref := range x.r.Refused {
			fmt.Fprintf(w, "  not %s: %s\n", ref.Field, ref.Code)
		}
	}
	h, err := ada.n.Ancestry(ctx, space, reply.ID())
	if err != nil {
		return nil, err
	}
	o.AncestryDepth = h.Depth
	fmt.Fprintf(w, "ada: bo's reply descends from her tide block (depth %d, %d missing)\n", h.Depth, len(h.Missing))
	return o, nil
}

// converge waits until both agents hold the same heads of the space,
// looking again whenever blocks land in it on either side.
func converge(ctx context.Context, a, b *agent) error {
	changed := make(chan struct{}, 1)
	poke := func(name string, _ []dag.ID) {
		if name != space {
			return
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	defer a.n.SubscribeMemory(poke)()
	defer b.n.SubscribeMemory(poke)()
	for {
		ha, err := a.n.MemoryHeads(ctx, space)
		if err != nil {
			return err
		}
		hb, err := b.n.MemoryHeads(ctx, space)
		if err != nil {
			return err
		}
		if slices.Equal(ha, hb) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("agents did not converge: %w", ctx.Err())
		case <-changed:
		}
	}
}

func short(id dag.ID) string { return id.String()[:15] + "…" }
