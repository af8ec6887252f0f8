package sync

// Reachability behind NATs with libp2p's own parts: AutoNAT (v1 service
// and v2) to learn whether the node is public, circuit relay v2 as a
// client (static relays or relays found in the DHT), DCUtR hole punching,
// and the choice of connection a pull runs on. docs/networking.md.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/autorelay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
)

// How a peer is connected, in PeerConn.Kind.
const (
	ConnDirect      = "direct"
	ConnHolePunched = "hole-punched"
	ConnRelayed     = "relayed"
)

// ConnInfo is one connection to a peer.
type ConnInfo struct {
	// Kind is ConnDirect, ConnHolePunched or ConnRelayed. A hole-punched
	// connection is a direct one opened while the peers were connected
	// through a relay, or within two minutes of their last relayed
	// connection or hole punch: by DCUtR's hole punch, or by its dial
	// back when one side's NAT let that through.
	Kind string `json:"kind"`
	// Relay is the relay's peer id when Kind is ConnRelayed.
	Relay string `json:"relay,omitempty"`
	// Addr is the peer's address on this connection.
	Addr string `json:"addr"`
	// Direction is "inbound" or "outbound".
	Direction string `json:"direction"`
	// Since is when the connection opened.
	Since time.Time `json:"since"`
	// Limited is true on a relayed connection the relay bounds in time
	// and bytes.
	Limited bool `json:"limited,omitempty"`
}

// reach is a node's reachability state.
type reach struct {
	mu           gosync.Mutex
	reachability network.Reachability
	// met holds, per peer met through a relay, how many relayed
	// connections to it are open and when one last was, and when DCUtR
	// last made a direct connection to it: a direct connection opened
	// while a relayed one is open, or within metGrace of one or of a hole
	// punch, is an upgrade (punched). The grace covers a peer left for a
	// moment with no connection at all (a duplicate direct connection
	// closing, the relayed one closed, before the one that stays is
	// added): forgetting it then called the connection that followed a
	// plain direct one.
	met map[peer.ID]*relayMeeting
	// punched holds the ids of the open direct connections that are
	// upgrades, labelled when each opened.
	punched map[string]bool
	// now is the clock (tests set it).
	now func() time.Time
}

// relayMeeting is what reach knows of a peer met through a relay.
type relayMeeting struct {
	open  int       // relayed connections open
	last  time.Time // when one was last open (opened, or closed)
	punch time.Time // when DCUtR or its dial back last succeeded
}

// metGrace is how long after its last relayed connection, or a hole
// punch, a peer's new direct connection still counts as an upgrade.
const metGrace = 2 * time.Minute

// maxMet bounds the peers reach remembers: past it, those with no relayed
// connection whose grace has run out are forgotten.
const maxMet = 1024

// Trace is holepunch's EventTracer: it remembers successful hole punches
// (and the dial backs that made one needless), so that the direct
// connections they made are told from others.
func (r *reach) Trace(e *holepunch.Event) {
	if e == nil {
		return
	}
	switch ev := e.Evt.(type) {
	case *holepunch.EndHolePunchEvt:
		if !ev.Success {
			return
		}
	case *holepunch.DirectDialEvt:
		if !ev.Success {
			return
		}
	default:
		return
	}
	// The connection the punch made opened before this event, while a
	// relayed one was open (DCUtR runs over it), and was labelled then;
	// this lets a direct connection that follows within metGrace count
	// as the punch's too, with no relayed one left open.
	r.mu.Lock()
	r.meeting(e.Remote).punch = r.now()
	r.mu.Unlock()
}

// meeting returns the peer's entry, made if absent. r.mu is held.
func (r *reach) meeting(p peer.ID) *relayMeeting {
	m := r.met[p]
	if m == nil {
		if len(r.met) >= maxMet {
			r.sweep()
		}
		m = &relayMeeting{}
		r.met[p] = m
	}
	return m
}

// sweep forgets the peers with no relayed connection whose grace has run
// out: a direct connection to them opened now would be a plain one, and
// the labels of those already open are kept by connection (punched).
// r.mu is held.
func (r *reach) sweep() {
	now := r.now()
	for p, m := range r.met {
		if m.open == 0 && now.Sub(m.last) > metGrace && now.Sub(m.punch) > metGrace {
			delete(r.met, p)
		}
	}
}

// connected counts a relayed connection, and labels a direct one an
// upgrade when the peer was met through a relay (now or within metGrace)
// or hole punched within metGrace.
func (r *reach) connected(_ network.Network, c network.Conn) {
	p := c.RemotePeer()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if _, relayed := relayOf(c.RemoteMultiaddr()); relayed {
		m := r.meeting(p)
		m.open++
		m.last = now
		return
	}
	if m := r.met[p]; m != nil && (m.open > 0 || now.Sub(m.last) <= metGrace || now.Sub(m.punch) <= metGrace) {
		r.punched[c.ID()] = true
	}
}

// disconnected forgets a closed connection's label and counts a relayed
// one closed; the peer's meeting is kept for metGrace (meeting, sweep).
func (r *reach) disconnected(_ network.Network, c network.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.punched, c.ID())
	if _, relayed := relayOf(c.RemoteMultiaddr()); !relayed {
		return
	}
	if m := r.met[c.RemotePeer()]; m != nil {
		m.open = max(m.open-1, 0)
		m.last = r.now()
	}
}

// newReach returns a node's reachability state, and the reference its
// relay peer source reads the node from once it exists.
func newReach() (*reach, *nodeRef) {
	return &reach{met: map[peer.ID]*relayMeeting{}, punched: map[string]bool{}, now: time.Now}, &nodeRef{ready: make(chan struct{})}
}

// nodeRef hands a Node to what the libp2p host starts before the Node
// exists: autorelay may ask its peer source for relays while libp2p.New
// runs.
type nodeRef struct {
	ready chan struct{}
	n     *Node
}

// set makes n the node; once only.
func (r *nodeRef) set(n *Node) {
	r.n = n
	close(r.ready)
}

// wait returns the node once set, or nil when ctx ends first.
func (r *nodeRef) wait(ctx context.Context) *Node {
	select {
	case <-r.ready:
		return r.n
	case <-ctx.Done():
		return nil
	}
}

// reachOptions are the libp2p options d turns on.
func reachOptions(d Discovery, r *reach, self *nodeRef) ([]libp2p.Option, error) {
	if !d.on() {
		return nil, nil
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	opts := []libp2p.Option{
		libp2p.EnableRelay(),
		libp2p.EnableHolePunching(holepunch.WithTracer(r)),
		libp2p.EnableAutoNATv2(),
		// AutoNAT v1's service too: the DHT's client/server switch and
		// autorelay follow the reachability it reports.
		libp2p.EnableNATService(),
	}
	switch d.Reachability {
	case "public":
		opts = append(opts, libp2p.ForceReachabilityPublic())
	case "private":
		opts = append(opts, libp2p.ForceReachabilityPrivate())
	}
	ar := []autorelay.Option{autorelay.WithBootDelay(0), autorelay.WithMinCandidates(1), autorelay.WithBackoff(30 * time.Second)}
	if static := addrInfos(d.Relays); len(static) > 0 {
		opts = append(opts, libp2p.EnableAutoRelayWithStaticRelays(static, ar...))
	} else if !d.Server {
		// Autorelay asks again only after its minimum interval (30 s) when
		// an answer gave it no relay, so the source waits for the node
		// rather than answer nothing before it exists.
		source := func(ctx context.Context, num int) <-chan peer.AddrInfo {
			if n := self.wait(ctx); n != nil {
				return n.relayCandidates(ctx, num)
			}
			ch := make(chan peer.AddrInfo)
			close(ch)
			return ch
		}
		opts = append(opts, libp2p.EnableAutoRelayWithPeerSource(source, ar...))
	}
	return opts, nil
}

// startReach follows AutoNAT's findings and starts discovery.
func (n *Node) startReach(ctx context.Context) error {
	if !n.cfg.Discovery.on() {
		return nil
	}
	n.host.Network().Notify(&network.NotifyBundle{ConnectedF: n.reach.connected, DisconnectedF: n.reach.disconnected})
	if err := n.watchReachability(); err != nil {
		return err
	}
	if err := n.watchHolePunch(); err != nil {
		return err
	}
	return n.startDiscovery(ctx)
}

// relayCandidates is autorelay's peer source: the bootstrap peers, then the
// peers of the DHT's routing table. Autorelay keeps those that speak the
// relay protocol.
func (n *Node) relayCandidates(ctx context.Context, num int) <-chan peer.AddrInfo {
	ch := make(chan peer.AddrInfo, num)
	go func() {
		defer close(ch)
		var ids []peer.ID
		for _, pi := range addrInfos(n.cfg.Discovery.Bootstrap) {
			n.host.Peerstore().AddAddrs(pi.ID, pi.Addrs, time.Hour)
			ids = append(ids, pi.ID)
		}
		if kad := n.dhtReady.Load(); kad != nil {
			ids = append(ids, kad.RoutingTable().ListPeers()...)
		}
		seen := map[peer.ID]bool{}
		for _, id := range ids {
			if seen[id] || len(seen) >= num {
				continue
			}
			seen[id] = true
			select {
			case ch <- n.host.Peerstore().PeerInfo(id):
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// knownRelays are the relays the node may reach a peer through: its static
// relays, else its bootstrap peers.
func (n *Node) knownRelays() []peer.ID {
	var out []peer.ID
	for _, pi := range addrInfos(n.cfg.Discovery.Relays) {
		out = append(out, pi.ID)
	}
	if len(out) == 0 {
		for _, pi := range addrInfos(n.cfg.Discovery.Bootstrap) {
			out = append(out, pi.ID)
		}
	}
	return out
}

// watchReachability records what AutoNAT reports.
func (n *Node) watchReachability() error {
	sub, err := n.host.EventBus().Subscribe(new(event.EvtLocalReachabilityChanged))
	if err != nil {
		return fmt.Errorf("sync: reachability events: %w", err)
	}
	n.onEvents(sub, func(e any) {
		if ev, ok := e.(event.EvtLocalReachabilityChanged); ok {
			n.reach.mu.Lock()
			n.reach.reachability = ev.Reachability
			n.reach.mu.Unlock()
			n.log.Debug("reachability", "now", ev.Reachability)
		}
	})
	return nil
}

// onEvents calls fn with each event of sub, one at a time on a goroutine
// of the node's, until the node closes or sub ends; sub is closed then.
// fn must not block for long: the event bus drops nothing, so a slow
// consumer holds up the events' emitters.
func (n *Node) onEvents(sub event.Subscription, fn func(any)) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer sub.Close()
		for {
			select {
			case <-n.ctx.Done():
				return
			case e, ok := <-sub.Out():
				if !ok {
					return
				}
				fn(e)
			}
		}
	}()
}

// Reachability returns what AutoNAT found: "public", "private" or
// "unknown" (always "unknown" without Discovery).
func (n *Node) Reachability() string {
	n.reach.mu.Lock()
	defer n.reach.mu.Unlock()
	switch n.reach.reachability {
	case network.ReachabilityPublic:
		return "public"
	case network.ReachabilityPrivate:
		return "private"
	}
	return "unknown"
}

// RelayAddrs returns the node's relayed addresses (with /p2p-circuit), each
// with its /p2p/ part: those a peer behind another NAT dials.
func (n *Node) RelayAddrs() []string {
	var out []string
	for _, a := range n.Addrs() {
		m, err := ma.NewMultiaddr(a)
		if err != nil {
			continue
		}
		if _, err := m.ValueForProtocol(ma.P_CIRCUIT); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// Conns returns how p is connected now: one ConnInfo per connection,
// oldest first.
func (n *Node) Conns(p peer.ID) []ConnInfo {
	var out []ConnInfo
	for _, c := range n.host.Network().ConnsToPeer(p) {
		st := c.Stat()
		ci := ConnInfo{Kind: ConnDirect, Addr: c.RemoteMultiaddr().String(), Direction: st.Direction.String(),
			Since: st.Opened, Limited: st.Limited}
		if relay, ok := relayOf(c.RemoteMultiaddr()); ok {
			ci.Kind, ci.Relay = ConnRelayed, relay
		} else if n.reach.isPunched(c) {
			ci.Kind = ConnHolePunched
		}
		out = append(out, ci)
	}
	slices.SortFunc(out, func(a, b ConnInfo) int { return a.Since.Compare(b.Since) })
	return out
}

// isPunched reports whether the direct connection c was labelled an
// upgrade when it opened.
func (r *reach) isPunched(c network.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.punched[c.ID()]
}

// relayOf returns the relay's peer id of a /p2p-circuit address.
func relayOf(a ma.Multiaddr) (string, bool) {
	relay := ""
	circuit := false
	ma.ForEach(a, func(c ma.Component) bool {
		switch c.Protocol().Code {
		case ma.P_P2P:
			if !circuit {
				relay = c.Value()
			}
		case ma.P_CIRCUIT:
			circuit = true
		}
		return true
	})
	return relay, circuit
}

// onlyLimited reports whether every connection to p is limited (a relayed
// one the relay bounds).
func (n *Node) onlyLimited(p peer.ID) bool {
	cs := n.host.Network().ConnsToPeer(p)
	if len(cs) == 0 {
		return false
	}
	for _, c := range cs {
		if !c.Stat().Limited {
			return false
		}
	}
	return true
}

// openSync opens a sync stream to p. When p is reachable only through a
// relay that bounds the connection, it first waits up to DirectWait for
// hole punching to give a direct connection when both sides speak DCUtR
// (holepunch.go; the pull then runs there, none of it through the
// relay); failing that, or without DCUtR, it runs over the relayed
// connection (network.WithAllowLimitedConn). A relay that cuts the
// connection at its limit cuts the pull, which keeps every batch it
// ingested: the next pull (on reconnection, or the periodic one) resumes
// where it stopped (docs/sync-protocol.md, "Resume").
func (n *Node) openSync(ctx context.Context, p peer.ID) (network.Stream, error) {
	if !n.cfg.Discovery.on() {
		return n.host.NewStream(ctx, p, n.syncProtocols()...)
	}
	if n.host.Network().Connectedness(p) != network.Connected {
		// Dial first: the connection may come through a relay, and then
		// the choice below applies.
		if err := n.host.Connect(ctx, peer.AddrInfo{ID: p}); err != nil {
			return nil, err
		}
	}
	if !n.onlyLimited(p) {
		return n.host.NewStream(ctx, p, n.syncProtocols()...)
	}
	var err error
	wait := n.cfg.Discovery.withDefaults().DirectWait
	// A relayed connection that a peer opened to this host before it
	// spoke DCUtR is never hole-punched (the accepting side tries once,
	// when it opens): wait for this host to speak it when it will (a peer
	// observed it at a public address), and renewRelayed then makes the
	// connection again, this host dialling.
	n.awaitHolePunch(ctx, wait)
	if n.canHolePunch(p) {
		n.renewRelayed(ctx, p)
		s, err := n.host.NewStream(network.WithDialPeerTimeout(ctx, wait), p, n.syncProtocols()...)
		if err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if !errors.Is(err, network.ErrLimitedConn) && !errors.Is(err, context.DeadlineExceeded) && !n.onlyLimited(p) {
			return nil, err
		}
	}
	n.log.Debug("sync over relay", "peer", p)
	// A relayed connection the relay has just cut can look open for a
	// while: give the stream a short time, and on failure close the
	// relayed connections so that the next pull dials a fresh one.
	sctx, cancel := context.WithTimeout(ctx, relayStreamTimeout)
	defer cancel()
	s, err := n.host.NewStream(network.WithAllowLimitedConn(sctx, "witan sync"), p, n.syncProtocols()...)
	if err != nil {
		for _, c := range n.host.Network().ConnsToPeer(p) {
			if c.Stat().Limited {
				c.Close()
			}
		}
	}
	return s, err
}

// relayStreamTimeout bounds opening a sync stream over a relayed
// connection.
const relayStreamTimeout = 3 * time.Second

// pullRelayed schedules a pull of every joined space from each peer
// connected only through a relay: gossipsub waits for a direct connection
// before it carries announcements, so over a relay only these periodic
// pulls bring new entries.
func (n *Node) pullRelayed() {
	if !n.cfg.Discovery.on() {
		return
	}
	for _, p := range n.host.Network().Peers() {
		if n.onlyLimited(p) {
			for _, s := range n.Spaces() {
				n.schedule(p, s)
			}
		}
	}
}

// dhtPtr holds the DHT once it runs (autorelay's peer source starts
// before it).
type dhtPtr = atomic.Pointer[dht.IpfsDHT]
