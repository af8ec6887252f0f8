package simnet

// The gossip model: announcements travel as gossipsub carries them,
// rather than from every replica to every other each round.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sync"
)

// Gossip configures a gossipsub-shaped announcement model (Config.Gossip).
// A round is one hop: a message published or forwarded in a round
// arrives at the next. Every replica holds every space's topic; each has
// a mesh of about D peers, drawn from the seed once. A message is
// forwarded, the first time a replica sees it, to its mesh peers but the
// one it came from; every Heartbeat rounds each replica sends to Dlazy
// random peers outside its mesh an IHAVE of the ids it saw in the last
// History heartbeats, and each answers with an IWANT of those it lacks
// (the message follows). As in sync.Node, a replica announces a space
// Debounce rounds after its heads change (not when they are those it
// announced last, nor one whose new heads were all named by
// announcements it received) and again every Reannounce rounds (skipped
// when the same heads were announced in the period); a receiver applies
// sync.Announcer's rule (pull when a named head is missing, once per
// digest when the sender has heads it did not name, and, when the
// sender is a mesh peer that is behind, announce within 1–2 TrickleMin
// unless another replica does first), pulling from the announcer if it
// is a mesh peer, else from the peer that passed it on.
// A partition
// loses the messages across it but keeps the mesh (a short cut, before
// connections time out): Heal ends it, and what each side missed travels
// with the next announcements. HealReconnect models a cut long enough to
// close connections: healing reconnects the links it cut, and each new
// connection pulls every space, as in sync.Node.
type Gossip struct {
	// D is the mesh degree (gossipsub's D; 8 if zero). A replica takes
	// peers until it has D, from those with fewer than D+4 (Dhi).
	D int
	// Dlazy is how many peers outside the mesh receive each heartbeat's
	// IHAVE (gossipsub's Dlazy; 6 if zero).
	Dlazy int
	// Heartbeat is the rounds between heartbeats (10 if zero: 100 ms
	// hops, gossipsub's 1 s heartbeat).
	Heartbeat int
	// History is the heartbeats of message ids an IHAVE names
	// (gossipsub's HistoryGossip; 3 if zero).
	History int
	// Debounce is the rounds from a change to its announcement (3 if
	// zero: sync.DefaultDebounce at 100 ms a round).
	Debounce int
	// TrickleMin is the shortest pause, in rounds, of a deferred
	// announcement (10 if zero: sync.Node's 1 s at 100 ms a round); it
	// pauses between one and two of it.
	TrickleMin int
	// Reannounce is the rounds between a replica's re-announcements of
	// each space, each replica at its own phase (300 if zero:
	// sync.DefaultInterval at 100 ms a round). Negative: never.
	Reannounce int
	// SeenTTL is how many rounds a replica remembers a message id and
	// drops the message again (1200 if zero: gossipsub's two minutes).
	SeenTTL int
	// ContentIDs names a message by the hash of its data, so that the
	// same heads announced by many replicas are one message; otherwise a
	// message is named by its sender and sequence number (gossipsub's
	// default, which sync.Node uses), and each replica's announcement
	// floods the mesh on its own. The hash covers the re-announcement
	// period the round is in as well (round / Reannounce), so that the
	// same heads are announced once each period rather than once per
	// SeenTTL.
	ContentIDs bool
	// FloodPublish sends a replica's own announcements to every other
	// replica, not only its mesh, as gossipsub does by default for the
	// peers it is connected to: a class on one Wi-Fi, connected to each
	// other, is that; a fleet whose agents connect to a few peers each
	// is not.
	FloodPublish bool
	// RoundTime is the simulated time of a round (100 ms if zero), for
	// Stats.Time only.
	RoundTime time.Duration
}

func (g Gossip) withDefaults() Gossip {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&g.D, 8)
	def(&g.Dlazy, 6)
	def(&g.Heartbeat, 10)
	def(&g.History, 3)
	def(&g.Debounce, 3)
	def(&g.TrickleMin, 10)
	def(&g.Reannounce, 300)
	def(&g.SeenTTL, 1200)
	if g.RoundTime == 0 {
		g.RoundTime = 100 * time.Millisecond
	}
	return g
}

// Wire sizes of gossipsub's RPC parts, for Stats.AnnounceBytes: a signed
// message carries its sender's peer id (an Ed25519 key inlined, 38
// bytes), a sequence number (8), a signature (64) and protobuf framing;
// a message id is the peer id and sequence number (46 bytes), or with
// ContentIDs a SHA-256 (32).
const (
	msgOverhead  = 38 + 8 + 64 + 16
	rpcOverhead  = 8
	idSeqLen     = 46
	idContentLen = 32
)

type gmsg struct {
	id     [32]byte
	origin int
	a      sync.Announcement
	data   []byte
}

type gdelivery struct {
	at       int
	seq      int
	from, to int
	m        *gmsg
}

type gnode struct {
	mesh      []int
	seen      map[[32]byte]int // id → round first seen
	history   [][]*gmsg        // ids seen, by heartbeat, newest last
	dirty     map[string]int   // space → round its announcement is due
	soon      map[string]int   // space → round its deferred announcement (a reply) is due
	soonOf    map[string][32]byte
	last      map[string][32]byte
	lastHeads map[string][]dag.ID
	derived   map[string]bool // heads changed in the period, only by Derived changes
	phase     int
	seq       uint64
	cancel    func()
	received  int
}

type gossipState struct {
	cfg   Gossip
	nodes []*gnode
	queue []gdelivery
	seq   int
}

// ensureGossip builds the mesh once every replica is added (at the
// first round), and subscribes to each replica's changes.
func (n *Net) ensureGossip() {
	if n.g != nil && len(n.g.nodes) == len(n.nodes) {
		return
	}
	g := &gossipState{cfg: n.cfg.Gossip.withDefaults()}
	if n.g != nil {
		g = n.g
	}
	for len(g.nodes) < len(n.nodes) {
		i := len(g.nodes)
		gn := &gnode{seen: map[[32]byte]int{}, dirty: map[string]int{}, soon: map[string]int{}, soonOf: map[string][32]byte{},
			last: map[string][32]byte{}, lastHeads: map[string][]dag.ID{}, derived: map[string]bool{}}
		if g.cfg.Reannounce > 0 {
			gn.phase = n.rng.IntN(g.cfg.Reannounce)
		}
		g.nodes = append(g.nodes, gn)
		n.subscribeGossip(g, i)
	}
	// The mesh: each replica takes random peers until it has D, from
	// those below Dhi.
	deg := make([]int, len(g.nodes))
	for i, gn := range g.nodes {
		deg[i] = len(gn.mesh)
	}
	dhi := g.cfg.D + 4
	for i := range g.nodes {
		cands := n.rng.Perm(len(g.nodes))
		for _, j := range cands {
			if deg[i] >= g.cfg.D {
				break
			}
			if j == i || deg[j] >= dhi || slices.Contains(g.nodes[i].mesh, j) {
				continue
			}
			g.nodes[i].mesh = append(g.nodes[i].mesh, j)
			g.nodes[j].mesh = append(g.nodes[j].mesh, i)
			deg[i]++
			deg[j]++
		}
	}
	n.g = g
}

func (n *Net) subscribeGossip(g *gossipState, i int) {
	gn := g.nodes[i]
	if gn.cancel != nil {
		gn.cancel()
	}
	gn.cancel = n.nodes[i].Local.Subscribe(func(space string) {
		if _, ok := gn.dirty[space]; !ok {
			gn.dirty[space] = n.stats.Rounds + g.cfg.Debounce
		}
	})
}

// Mesh returns the mesh peers of the replica at index i (in the order of
// Nodes), for tests; nil without Config.Gossip.
func (n *Net) Mesh(i int) []int {
	if n.g == nil || i >= len(n.g.nodes) {
		return nil
	}
	return slices.Clone(n.g.nodes[i].mesh)
}

func (n *Net) msgBytes(m *gmsg) int {
	return rpcOverhead + msgOverhead + len(sync.TopicPrefix) + len(m.a.Space) + len(m.data)
}

func (n *Net) send(from, to int, m *gmsg, delay int) {
	g := n.g
	n.stats.AnnounceBytes += int64(n.msgBytes(m))
	n.stats.Announced++
	if n.rng.Float64() < n.cfg.Loss {
		n.stats.Lost++
		return
	}
	copies := 1
	if n.rng.Float64() < n.cfg.Dup {
		copies = 2
		n.stats.Duplicated++
	}
	for range copies {
		g.seq++
		d := 1 + delay
		if n.cfg.MaxDelay > 0 {
			d += n.rng.IntN(n.cfg.MaxDelay + 1)
		}
		g.queue = append(g.queue, gdelivery{at: n.stats.Rounds + d, seq: g.seq, from: from, to: to, m: m})
	}
}

func (n *Net) publish(ctx context.Context, i int, space string, hs []dag.ID) error {
	g, gn := n.g, n.g.nodes[i]
	a := sync.NewAnnouncement(space, hs, sync.Newest(ctx, n.nodes[i].Local, hs, sync.NamedHeads))
	data := a.Encode()
	m := &gmsg{origin: i, a: a, data: data}
	if g.cfg.ContentIDs {
		var epoch [8]byte
		if g.cfg.Reannounce > 0 {
			binary.BigEndian.PutUint64(epoch[:], uint64(n.stats.Rounds/g.cfg.Reannounce))
		}
		m.id = sha256.Sum256(append(epoch[:], data...))
	} else {
		gn.seq++
		binary.BigEndian.PutUint64(m.id[:], uint64(i))
		binary.BigEndian.PutUint64(m.id[8:], gn.seq)
	}
	gn.last[space] = a.Digest
	gn.lastHeads[space] = hs
	delete(gn.derived, space)
	delete(gn.soon, space)
	if at, ok := gn.seen[m.id]; ok && n.stats.Rounds-at < g.cfg.SeenTTL {
		n.stats.Suppressed++ // gossipsub drops a message it has seen, its own too
		return nil
	}
	n.stats.Published++
	n.see(i, m)
	if g.cfg.FloodPublish {
		for j := range g.nodes {
			if j != i {
				n.send(i, j, m, 0)
			}
		}
		return nil
	}
	for _, j := range gn.mesh {
		n.send(i, j, m, 0)
	}
	return nil
}

func (n *Net) see(i int, m *gmsg) {
	gn := n.g.nodes[i]
	gn.seen[m.id] = n.stats.Rounds
	if len(gn.history) == 0 {
		gn.history = [][]*gmsg{nil}
	}
	gn.history[len(gn.history)-1] = append(gn.history[len(gn.history)-1], m)
}

func (n *Net) gossipRound(ctx context.Context) error {
	n.ensureGossip()
	g := n.g
	r := n.stats.Rounds
	// Announcements due: changes after their debounce, deferred ones,
	// re-announcements (sync.Node's announce).
	for i, gn := range g.nodes {
		nd := n.nodes[i]
		due := func(m map[string]int) []string {
			var out []string
			for sp, at := range m {
				if at <= r {
					out = append(out, sp)
				}
			}
			slices.Sort(out)
			return out
		}
		for _, sp := range due(gn.dirty) {
			delete(gn.dirty, sp)
			hs, err := nd.Local.Heads(ctx, sp)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				continue
			}
			if d := nd.ann.Own(sp, hs); gn.last[sp] == d {
				n.stats.Suppressed++
				continue
			}
			if nd.ann.Derived(sp, sync.AddedHeads(hs, gn.lastHeads[sp])) {
				gn.derived[sp] = true
				n.stats.Suppressed++ // left to the re-announcement
				continue
			}
			if err := n.publish(ctx, i, sp, hs); err != nil {
				return err
			}
		}
		for _, sp := range due(gn.soon) {
			delete(gn.soon, sp)
			hs, err := nd.Local.Heads(ctx, sp)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				continue
			}
			d := nd.ann.Own(sp, hs)
			if gn.last[sp] == d || gn.soonOf[sp] != d || nd.ann.Redundant(sp, d) {
				if gn.soonOf[sp] == d {
					gn.last[sp], gn.lastHeads[sp] = d, hs
				}
				n.stats.Suppressed++
				continue
			}
			if err := n.publish(ctx, i, sp, hs); err != nil {
				return err
			}
		}
		if g.cfg.Reannounce > 0 && (r+gn.phase)%g.cfg.Reannounce == 0 {
			all, err := nd.Local.Spaces(ctx)
			if err != nil {
				return err
			}
			for _, sp := range all {
				hs, err := nd.Local.Heads(ctx, sp)
				if err != nil {
					return err
				}
				if len(hs) == 0 {
					continue
				}
				d := nd.ann.Own(sp, hs)
				redundant := nd.ann.Redundant(sp, d) || gn.derived[sp]
				delete(gn.derived, sp)
				nd.ann.Reset(sp)
				if redundant {
					gn.last[sp], gn.lastHeads[sp] = d, hs
					n.stats.Suppressed++
					continue
				}
				if err := n.publish(ctx, i, sp, hs); err != nil {
					return err
				}
			}
		}
	}
	// Heartbeat: IHAVE to Dlazy peers outside the mesh.
	if r%g.cfg.Heartbeat == 0 {
		for i, gn := range g.nodes {
			var ids []*gmsg
			for _, h := range gn.history {
				ids = append(ids, h...)
			}
			gn.history = append(gn.history, nil)
			if len(gn.history) > g.cfg.History {
				gn.history = gn.history[len(gn.history)-g.cfg.History:]
			}
			if len(ids) == 0 {
				continue
			}
			idLen := idSeqLen
			if g.cfg.ContentIDs {
				idLen = idContentLen
			}
			sent := 0
			for _, j := range n.rng.Perm(len(g.nodes)) {
				if sent >= g.cfg.Dlazy {
					break
				}
				if j == i || slices.Contains(gn.mesh, j) {
					continue
				}
				sent++
				n.stats.IHaves++
				n.stats.AnnounceBytes += int64(rpcOverhead + len(ids)*(idLen+2))
				if !n.reach(n.nodes[i], n.nodes[j]) || n.rng.Float64() < n.cfg.Loss {
					continue
				}
				var want []*gmsg
				for _, m := range ids {
					if at, ok := g.nodes[j].seen[m.id]; !ok || r-at >= g.cfg.SeenTTL {
						want = append(want, m)
					}
				}
				if len(want) == 0 {
					continue
				}
				n.stats.IWants++
				n.stats.AnnounceBytes += int64(rpcOverhead + len(want)*(idLen+2))
				for _, m := range want {
					n.send(i, j, m, 1) // IWANT goes back, the message comes a round later
				}
			}
		}
	}
	// Deliveries due this round.
	slices.SortFunc(g.queue, func(a, b gdelivery) int {
		if a.at != b.at {
			return a.at - b.at
		}
		return a.seq - b.seq
	})
	if n.cfg.Shuffle {
		k := 0
		for k < len(g.queue) && g.queue[k].at <= r {
			k++
		}
		n.rng.Shuffle(k, func(a, b int) { g.queue[a], g.queue[b] = g.queue[b], g.queue[a] })
	}
	k := 0
	for ; k < len(g.queue) && g.queue[k].at <= r; k++ {
		d := g.queue[k]
		if !n.reach(n.nodes[d.from], n.nodes[d.to]) {
			continue
		}
		to := g.nodes[d.to]
		if at, ok := to.seen[d.m.id]; ok && r-at < g.cfg.SeenTTL {
			n.stats.Repeats++
			continue
		}
		n.see(d.to, d.m)
		to.received++
		a, err := sync.DecodeAnnouncement(d.m.data)
		if err != nil {
			return err
		}
		src := d.from
		if slices.Contains(to.mesh, d.m.origin) && n.reach(n.nodes[d.to], n.nodes[d.m.origin]) {
			src = d.m.origin
		}
		nd := n.nodes[d.to]
		nd.Engine.Seen(n.nodes[d.m.origin].Name, a.Space, a.Heads)
		want, err := nd.ann.Judge(ctx, nd.Local, a)
		if err != nil {
			return err
		}
		switch want {
		case sync.WantReply:
			if !slices.Contains(to.mesh, d.m.origin) {
				break // the sender's own peers answer it
			}
			n.stats.Replies++
			hs, err := nd.Local.Heads(ctx, a.Space)
			if err != nil {
				return err
			}
			own := sync.HeadsDigest(hs)
			nd.ann.Unheard(a.Space, own)
			if _, ok := to.soon[a.Space]; !ok {
				to.soonOf[a.Space] = own
			}
			n.soon(d.to, a.Space)
		case sync.WantSender, sync.WantDigest:
			if want == sync.WantDigest {
				n.stats.DigestPulls++
			}
			failed := n.stats.Failed
			if err := n.pull(ctx, nd, n.nodes[src], a.Space); err != nil {
				return err
			}
			nd.ann.Heard(a.Space, nd.Engine.Announced(n.nodes[src].Name, a.Space))
			// A whole pull from the announcer covers what it announced.
			nd.ann.PullDone(a.Space, a.Key(), src == d.m.origin && n.stats.Failed == failed)
		default:
			n.stats.InSync++
		}
		for _, j := range to.mesh {
			if j != d.from && j != d.m.origin {
				n.send(d.to, j, d.m, 0)
			}
		}
	}
	g.queue = slices.Delete(g.queue, 0, k)
	return nil
}

// soon defers replica i's announcement of space by 1–2 TrickleMin (one
// already deferred keeps its round), as sync.Node's announceSoon.
func (n *Net) soon(i int, space string) {
	gn := n.g.nodes[i]
	if _, ok := gn.soon[space]; ok {
		return
	}
	t := n.g.cfg.TrickleMin
	gn.soon[space] = n.stats.Rounds + t + n.rng.IntN(t+1)
}

// healGossip reconnects the mesh links a partition cut: each side pulls
// every space from the other, as a new connection does in sync.Node.
func (n *Net) healGossip(ctx context.Context, cut map[string]int) error {
	if n.g == nil || cut == nil {
		return nil
	}
	for i, gn := range n.g.nodes {
		for _, j := range gn.mesh {
			if cut[n.nodes[i].Name] == cut[n.nodes[j].Name] {
				continue
			}
			spaces, err := n.nodes[j].Local.Spaces(ctx)
			if err != nil {
				return err
			}
			for _, sp := range spaces {
				if err := n.pull(ctx, n.nodes[i], n.nodes[j], sp); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
