// Package simnet runs the sync protocol between replicas in one process,
// over in-memory streams, with seeded faults: lost, late and duplicated
// announcements, streams cut part way, and partitions. The protocol code is
// sync.Engine's, the very code a sync.Node runs over libp2p; only the
// transport and the gossip are simulated.
//
// A Net advances in rounds, one goroutine at a time, so that a seed
// reproduces a run: in each round every replica announces its heads in
// every space it holds to every other replica, and each announcement that
// arrives and names a head the receiver lacks makes the receiver pull from
// the announcer. It is meant for property tests (pgregory.net/rapid):
// random operations and partition schedules must end, once healed, with
// every replica holding the same heads. Restart replaces a replica's
// process (a kill -9 and a reopened store) between rounds.
//
// That is N² announcements a round, which says nothing of traffic beyond
// a few dozen replicas. With Config.Gossip the announcements travel as
// gossipsub carries them instead (a mesh, forwarding, IHAVE gossip,
// debounced and periodic announcements; see Gossip), and a round is one
// hop: the model behind the fleet figures of docs/sync-protocol.md.
//
// The caller's duties: add replicas with Add before running rounds; keep
// using each replica's Local only between rounds (a Net is not safe for
// concurrent use); give each Local its own store.
package simnet

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sync"
)

// Config sets the faults of a Net. The zero value is a perfect network.
type Config struct {
	// Seed makes runs reproducible.
	Seed uint64
	// Loss is the probability that an announcement is lost, and that a
	// pull's stream is cut at a random byte.
	Loss float64
	// Dup is the probability that an announcement arrives twice.
	Dup float64
	// MaxDelay is the most rounds an announcement may arrive late.
	MaxDelay int
	// Shuffle delivers the announcements due in a round in a random
	// order rather than in the order they were sent.
	Shuffle bool
	// Gossip, if set, carries announcements as gossipsub does (a mesh,
	// forwarding, IHAVE gossip, re-announcements; see Gossip) instead of
	// from every replica to every other each round.
	Gossip *Gossip
}

// Node is one replica on a Net.
type Node struct {
	Name   string
	Local  sync.Local
	Engine *sync.Engine
	// ann holds the announcement rules' memory, as sync.Node does.
	ann *sync.Announcer
}

// Stats counts what a Net did.
type Stats struct {
	Rounds, Announced, Lost, Duplicated, Pulls, Cut, Failed int
	// Entries counts entries received by pulls; Duplicates those already
	// held.
	Entries, Duplicates int
	// With Config.Gossip: AnnounceBytes is the gossip sent (messages,
	// forwarded or not, IHAVEs and IWANTs, at their wire size);
	// Published the announcements replicas made, Suppressed those not
	// made (heads as announced last, or a message id already seen);
	// Repeats the messages that arrived at a replica that had seen them;
	// IHaves and IWants the control messages. Announced counts each
	// message sent to a peer.
	AnnounceBytes                                  int64
	Published, Suppressed, Repeats, IHaves, IWants int
	// InSync counts announcements that asked their receiver for nothing,
	// Replies those that showed their sender behind, DigestPulls the
	// pulls set off for a digest (sync.Announcer.Judge).
	InSync, Replies, DigestPulls int
}

type msg struct {
	at       int
	seq      int
	from, to *Node
	a        sync.Announcement
}

// Net is a simulated network. It is not safe for concurrent use.
type Net struct {
	cfg   Config
	rng   *rand.Rand
	nodes []*Node
	queue []msg
	seq   int
	group map[string]int
	stats Stats
	g     *gossipState
	// healed is the partition Heal ended, whose cut links reconnect at
	// the next round (gossip model).
	healed map[string]int
}

// New returns an empty network.
func New(cfg Config) *Net {
	return &Net{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
}

// Add puts a replica on the network. Unless o.Rand is set, its filter
// salts come from the Net's seed.
func (n *Net) Add(name string, local sync.Local, o sync.Options) *Node {
	if o.Rand == nil {
		var seed [32]byte
		seed[0], seed[1] = byte(len(n.nodes)), byte(n.cfg.Seed)
		seed[2] = byte(n.cfg.Seed >> 8)
		o.Rand = rand.NewChaCha8(seed)
	}
	nd := &Node{Name: name, Local: local, Engine: sync.NewEngine(local, o), ann: sync.NewAnnouncer()}
	n.nodes = append(n.nodes, nd)
	return nd
}

// Restart replaces the process of the replica named name: a new Local
// (typically the same store, opened again) and a fresh Engine, which
// knows nothing of what the old one learnt of its peers. Announcements
// on their way to the old process are lost, as pubsub loses them when a
// process dies. o is as for Add.
func (n *Net) Restart(name string, local sync.Local, o sync.Options) (*Node, error) {
	k := slices.IndexFunc(n.nodes, func(nd *Node) bool { return nd.Name == name })
	if k < 0 {
		return nil, fmt.Errorf("simnet: no replica named %q", name)
	}
	if o.Rand == nil {
		var seed [32]byte
		seed[0], seed[1] = byte(k), byte(n.cfg.Seed)
		seed[2], seed[3] = byte(n.cfg.Seed>>8), byte(n.stats.Rounds)
		o.Rand = rand.NewChaCha8(seed)
	}
	old := n.nodes[k]
	n.queue = slices.DeleteFunc(n.queue, func(m msg) bool { return m.to == old })
	nd := &Node{Name: name, Local: local, Engine: sync.NewEngine(local, o), ann: sync.NewAnnouncer()}
	for i := range n.queue {
		if n.queue[i].from == old {
			n.queue[i].from = nd
		}
	}
	n.nodes[k] = nd
	if n.g != nil && k < len(n.g.nodes) {
		n.subscribeGossip(n.g, k)
	}
	return nd, nil
}

// Nodes returns the replicas in the order they were added.
func (n *Net) Nodes() []*Node { return slices.Clone(n.nodes) }

// Stats returns the counters so far.
func (n *Net) Stats() Stats { return n.stats }

// Partition splits the network: replicas in different groups cannot
// reach each other (announcements between them are lost, pulls fail).
// Replicas named in no group form one more group together.
func (n *Net) Partition(groups ...[]string) {
	n.group = map[string]int{}
	for i, g := range groups {
		for _, name := range g {
			n.group[name] = i + 1
		}
	}
}

// Heal ends every partition.
func (n *Net) Heal() { n.group = nil }

// HealReconnect ends every partition as one that closed connections: in
// the gossip model, the mesh links it cut reconnect at the next round,
// and each side of each pulls every space from the other, as a new
// connection does in sync.Node. Without the gossip model it is Heal.
func (n *Net) HealReconnect() {
	if n.group != nil && n.cfg.Gossip != nil {
		n.healed = n.group
	}
	n.group = nil
}

// Elapsed is the simulated time so far: rounds times Gossip.RoundTime
// (rounds of 100 ms without the gossip model).
func (n *Net) Elapsed() time.Duration {
	rt := 100 * time.Millisecond
	if n.cfg.Gossip != nil {
		rt = n.cfg.Gossip.withDefaults().RoundTime
	}
	return time.Duration(n.stats.Rounds) * rt
}

func (n *Net) reach(a, b *Node) bool {
	return n.group == nil || n.group[a.Name] == n.group[b.Name]
}

// Round runs one round: announcements out, due ones delivered, pulls run.
func (n *Net) Round(ctx context.Context) error {
	n.stats.Rounds++
	if n.cfg.Gossip != nil {
		if n.healed != nil {
			n.ensureGossip()
			healed := n.healed
			n.healed = nil
			if err := n.healGossip(ctx, healed); err != nil {
				return err
			}
		}
		return n.gossipRound(ctx)
	}
	for _, from := range n.nodes {
		spaces, err := from.Local.Spaces(ctx)
		if err != nil {
			return err
		}
		for _, sp := range spaces {
			hs, err := dag.HeadsOf(ctx, from.Local, sp)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				continue
			}
			for _, to := range n.nodes {
				if to == from {
					continue
				}
				n.stats.Announced++
				if n.rng.Float64() < n.cfg.Loss {
					n.stats.Lost++
					continue
				}
				copies := 1
				if n.rng.Float64() < n.cfg.Dup {
					copies = 2
					n.stats.Duplicated++
				}
				for range copies {
					n.seq++
					delay := 0
					if n.cfg.MaxDelay > 0 {
						delay = n.rng.IntN(n.cfg.MaxDelay + 1)
					}
					n.queue = append(n.queue, msg{at: n.stats.Rounds + delay, seq: n.seq, from: from, to: to, a: sync.Announcement{Space: sp, Heads: hs}})
				}
			}
		}
	}
	if n.cfg.Shuffle {
		for i := range n.queue {
			if n.queue[i].at <= n.stats.Rounds {
				n.queue[i].seq = n.rng.Int()
			}
		}
	}
	sort.Slice(n.queue, func(i, j int) bool {
		if n.queue[i].at != n.queue[j].at {
			return n.queue[i].at < n.queue[j].at
		}
		return n.queue[i].seq < n.queue[j].seq
	})
	i := 0
	for ; i < len(n.queue) && n.queue[i].at <= n.stats.Rounds; i++ {
		m := n.queue[i]
		if !n.reach(m.from, m.to) {
			continue
		}
		// Pubsub is a hint: the announcement travels through the
		// decoder like one from the wire.
		a, err := sync.DecodeAnnouncement(m.a.Encode())
		if err != nil {
			return err
		}
		m.to.Engine.Seen(m.from.Name, a.Space, a.Heads)
		// The receiver's rule, as in sync.Node; a reply is not needed
		// here, every replica announcing every round.
		want, err := m.to.ann.Judge(ctx, m.to.Local, a)
		if err != nil {
			return err
		}
		if want == sync.WantSender || want == sync.WantDigest {
			failed := n.stats.Failed
			if err := n.pull(ctx, m.to, m.from, a.Space); err != nil {
				return err
			}
			m.to.ann.PullDone(a.Space, a.Key(), n.stats.Failed == failed)
		}
	}
	n.queue = slices.Delete(n.queue, 0, i)
	return nil
}

// Pull makes to pull space from from now, through the same faults as a
// round's pulls. Protocol failures (a cut stream) are counted, not
// returned; the error is for local failures.
func (n *Net) Pull(ctx context.Context, to, from *Node, space string) error {
	return n.pull(ctx, to, from, space)
}

func (n *Net) pull(ctx context.Context, to, from *Node, space string) error {
	n.stats.Pulls++
	if !n.reach(to, from) {
		n.stats.Failed++
		return nil
	}
	c1, c2 := net.Pipe()
	var client io.ReadWriter = c1
	if n.rng.Float64() < n.cfg.Loss {
		n.stats.Cut++
		client = &cutter{Conn: c1, left: n.rng.IntN(64 << 10)}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		from.Engine.Serve(ctx, to.Name, c2) //nolint:errcheck // a cut stream fails here too
		c2.Close()
	}()
	st, err := to.Engine.Pull(ctx, from.Name, client, space)
	c1.Close()
	<-done
	n.stats.Entries += st.Received
	n.stats.Duplicates += st.Duplicate
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n.stats.Failed++
	}
	return nil
}

// cutter breaks a stream after left bytes read.
type cutter struct {
	net.Conn
	left int
}

func (c *cutter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.Conn.Close()
		return 0, io.ErrUnexpectedEOF
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	k, err := c.Conn.Read(p)
	c.left -= k
	return k, err
}

// Converged reports whether every replica holds the same, non-empty heads
// in space. A space no replica holds anything of is an error (a
// misspelling: a session id, or mem:NAME for a memory space), not a
// network that has yet to converge; so is a space a replica's Heads
// refuses.
func (n *Net) Converged(ctx context.Context, space string) (bool, error) {
	var first []dag.ID
	ok, held := true, false
	for i, nd := range n.nodes {
		hs, err := dag.HeadsOf(ctx, nd.Local, space)
		if err != nil {
			return false, err
		}
		held = held || len(hs) > 0
		if len(hs) == 0 {
			ok = false
		}
		if i == 0 {
			first = hs
		} else if !slices.Equal(first, hs) {
			ok = false
		}
	}
	if !held && len(n.nodes) > 0 {
		return false, fmt.Errorf("simnet: no replica holds anything of space %q (a session id, or mem:NAME for a memory space): %w", space, dag.ErrUnheldSpace)
	}
	return ok, nil
}

// RunUntilConverged runs rounds until Converged, at most max of them, and
// returns how many it ran.
func (n *Net) RunUntilConverged(ctx context.Context, space string, max int) (int, error) {
	for r := 0; r < max; r++ {
		ok, err := n.Converged(ctx, space)
		if err != nil || ok {
			return r, err
		}
		if err := n.Round(ctx); err != nil {
			return r, err
		}
	}
	ok, err := n.Converged(ctx, space)
	if err == nil && !ok {
		err = fmt.Errorf("simnet: %s not converged after %d rounds", space, max)
	}
	return max, err
}
