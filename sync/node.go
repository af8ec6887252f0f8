package sync

// Node: the libp2p shell around an Engine. One host per replica, gossip
// topics per space for head announcements, the /witan/sync/2 stream
// handler, and the scheduler that decides whom to pull from.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"

	"github.com/witan-dev/witan/dag"
)

// Defaults of Config.
const (
	DefaultDebounce      = 250 * time.Millisecond
	DefaultInterval      = 30 * time.Second
	DefaultStreamTimeout = 30 * time.Second
	DefaultMDNSTag       = "witan"
)

// Loopback and AllInterfaces are listen addresses for Config.ListenAddrs:
// TCP and QUIC on random ports, on loopback (the default: nothing off this
// machine can reach the node) or on every interface (a classroom's LAN;
// witan up's default).
var (
	Loopback      = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	AllInterfaces = []string{"/ip4/0.0.0.0/tcp/0", "/ip4/0.0.0.0/udp/0/quic-v1"}
)

// Config configures a Node. The zero value listens on loopback only, over
// TCP and QUIC, with no configured peers and mDNS off: a node is opened
// to the network by naming its addresses (ListenAddrs: AllInterfaces, or
// one interface's).
type Config struct {
	// ListenAddrs are multiaddrs to listen on; Loopback when empty.
	ListenAddrs []string
	// Identity is the libp2p key (not an envelope key); random if nil.
	Identity crypto.PrivKey
	// Peers are multiaddrs with a /p2p/ part, dialled at start and
	// redialled every Interval while not connected.
	Peers []string
	// MDNS turns on LAN discovery under MDNSTag (DefaultMDNSTag if empty).
	MDNS    bool
	MDNSTag string
	// Spaces are joined at start, besides every space Local holds.
	Spaces []string
	// Debounce delays an announcement after a change so that a burst of
	// entries makes one announcement (DefaultDebounce).
	Debounce time.Duration
	// Interval is the period of re-announcement and redialling, spread by
	// up to a quarter either way (DefaultInterval).
	Interval time.Duration
	// ContentIDs names each announcement by its content (the SHA-256 of
	// its bytes, which gossipsub remembers for Interval and up to a
	// minute more: it sweeps its cache once a minute) instead of by its
	// sender and sequence number, gossipsub's default. The same heads
	// announced by many peers are then one message, which each node
	// forwards once. (Re-announcements of heads already announced in
	// the period are skipped with either kind of id: Announcer.)
	// Not the default: in a partition test (TestPartitionAndHeal) the
	// nodes of one side stopped receiving each other's announcements
	// under content ids, for a cause not yet found (docs/sync-protocol.md,
	// "Message ids"). Nodes of either kind interoperate.
	ContentIDs bool
	// StreamTimeout bounds each frame of a sync stream (and each message
	// of a checkpoint stream): it must arrive, or be sent, whole within
	// this long from when it is due. A peer that trickles a byte now and
	// then does not push the deadline back.
	StreamTimeout time.Duration
	// Allow, if set, is asked before any connection to or from a peer;
	// false refuses it. Tests cut partitions with it.
	Allow func(peer.ID) bool
	// Manual turns off every automatic pull (on connection and on
	// announcements) and joins only Spaces: the program calls SyncWith
	// itself, as a one-shot "sync now" command does. Announcements are
	// still sent.
	Manual bool
	// Limits bound what peers may hold open on this node (streams and the
	// memory of frames still arriving), through libp2p's resource manager.
	// Zero fields take their defaults.
	Limits Limits
	// AfterPull, if set, is called after each automatic pull of a space
	// from a peer that ended without error, on the pull's goroutine (the
	// next pull of the pair waits for it): replica/node checks the peer's
	// checkpoint there (/witan/checkpoint/1). Its ctx ends when the node
	// closes.
	AfterPull func(ctx context.Context, p peer.ID, space string)
	// PlainBatches speaks only ProtocolID: the node neither asks for nor
	// serves deflated batches (ProtocolDeflateID), as a node before them
	// did. For comparisons and tests.
	PlainBatches bool
	// DeflateLoopback deflates batches for a requester on a loopback
	// address too. By default a responder sends such a requester plain
	// batches even over ProtocolDeflateID: there is no link whose bytes
	// compression saves, and deflating and inflating cost the two sides
	// about 2 µs of CPU an envelope between them (docs/sync-protocol.md,
	// "Deflate, not on loopback"). For tests of the deflated path.
	DeflateLoopback bool
	// SerialCatchUp pulls a space this node holds nothing of from one
	// peer that offers it at a time (freshGate), as nodes did before the
	// ranged catch-up, instead of disjoint runs of its log from up to
	// four such peers at once (multipull.go). For comparisons and tests.
	SerialCatchUp bool
	// Engine configures the protocol engine.
	Engine Options
	// Discovery finds peers beyond the LAN (a witan DHT) and reaches them
	// behind NATs (AutoNAT, relays, hole punching): discovery.go,
	// reach.go, docs/networking.md. The zero value is off.
	Discovery Discovery
	// HostOptions are more libp2p options for the host, applied last
	// (tests give simulated transports).
	HostOptions []libp2p.Option
	// Logger receives debug lines; discarded if nil.
	Logger *slog.Logger
}

// Limits bound the /witan/sync/2 streams other peers may open to a node
// and the memory their frames take while they arrive (docs/security.md).
//
// Streams are served in slots: at most StreamsPerPeer per peer and
// Streams in all. When every slot is taken, a peer holding fewer than the
// peer holding the most takes the oldest slot of that one (its stream is
// reset), so any number of peer ids cannot keep a peer with no stream
// out; otherwise the stream is answered busy (CodeBusy) and closed. A
// slot is lost when a frame does not arrive whole within StreamTimeout.
// libp2p's resource manager holds twice as many streams (a stream past a
// slot limit must reach the node to be told it is busy), and the memory
// limits; the rest of the host keeps go-libp2p's defaults, scaled to the
// machine. A frame whose memory does not fit ends its stream, charged to
// nobody.
type Limits struct {
	// StreamsPerPeer bounds the inbound sync streams one peer may have
	// served at once (default 16).
	StreamsPerPeer int
	// Streams bounds the inbound sync streams of all peers served at once
	// (default 256).
	Streams int
	// MemoryPerPeer bounds, in bytes, the frames arriving from one peer
	// on sync streams (default 32 MiB: a few frames of MaxFrame).
	MemoryPerPeer int64
	// Memory bounds it for all peers together (default 256 MiB).
	Memory int64
}

// Defaults of Limits.
const (
	DefaultStreamsPerPeer = 16
	DefaultStreams        = 256
	DefaultMemoryPerPeer  = 32 << 20
	DefaultMemory         = 256 << 20
)

func (l Limits) withDefaults() Limits {
	if l.StreamsPerPeer <= 0 {
		l.StreamsPerPeer = DefaultStreamsPerPeer
	}
	if l.Streams <= 0 {
		l.Streams = DefaultStreams
	}
	if l.MemoryPerPeer <= 0 {
		l.MemoryPerPeer = DefaultMemoryPerPeer
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	return l
}

// resourceManager returns go-libp2p's resource manager with its default
// limits, scaled to the machine, and l on the sync protocol.
func resourceManager(l Limits) (network.ResourceManager, error) {
	l = l.withDefaults()
	cfg := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&cfg)
	// Twice the slots: a stream past a slot limit must reach the handler
	// to be answered busy (or to take a slot of the peer holding most).
	// The same limits for each of the three sync protocols: a peer's
	// streams are of one of them (and n.slots counts them together).
	for _, id := range []protocol.ID{ProtocolID, ProtocolDeflateID, ProtocolRangesID} {
		cfg.AddProtocolLimit(id, rcmgr.BaseLimit{
			StreamsInbound: 2 * l.Streams, StreamsOutbound: 4 * l.Streams, Streams: 6 * l.Streams, Memory: l.Memory,
		}, rcmgr.BaseLimitIncrease{})
		cfg.AddProtocolPeerLimit(id, rcmgr.BaseLimit{
			StreamsInbound: 2 * l.StreamsPerPeer, StreamsOutbound: 4 * l.StreamsPerPeer, Streams: 6 * l.StreamsPerPeer, Memory: l.MemoryPerPeer,
		}, rcmgr.BaseLimitIncrease{})
	}
	// /witan/checkpoint/1 carries one message of at most 64 KiB each way
	// per stream.
	cfg.AddProtocolLimit(protocol.ID(CheckpointProtocolID), rcmgr.BaseLimit{
		StreamsInbound: l.Streams, StreamsOutbound: l.Streams, Streams: 2 * l.Streams, Memory: 4 << 20,
	}, rcmgr.BaseLimitIncrease{})
	cfg.AddProtocolPeerLimit(protocol.ID(CheckpointProtocolID), rcmgr.BaseLimit{
		StreamsInbound: 4, StreamsOutbound: 4, Streams: 8, Memory: 1 << 20,
	}, rcmgr.BaseLimitIncrease{})
	return rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(cfg.AutoScale()))
}

// AnnounceStats counts gossip traffic.
type AnnounceStats struct {
	Sent, Suppressed, Received, Repeats, Dropped, Triggered uint64
	// InSync counts announcements received that asked for nothing (the
	// sender's heads are this node's, or held, or a pull for the digest
	// runs); Replies those that showed the sender behind (this node
	// announces soon); DigestPulls the pulls set off for a digest
	// (counted in Triggered too); Redundant the announcements this node
	// skipped because a peer announced the same heads in the period
	// (counted in Suppressed too).
	InSync, Replies, DigestPulls, Redundant uint64
	// OffersIgnored counts peers' space subscriptions past
	// MaxOffersPerPeer, not listed by Available.
	OffersIgnored uint64
	// Busy counts inbound sync streams answered busy (no slot free);
	// Evicted those whose slot a peer holding fewer took.
	Busy, Evicted uint64
	// Flooded counts gossip RPCs dropped because their sender was over
	// GossipRate.
	Flooded uint64
}

// Node is a replica's presence on the network. Close it when done.
type Node struct {
	local  Local
	engine *Engine
	cfg    Config
	host   host.Host
	ps     *pubsub.PubSub
	mdns   mdns.Service
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     gosync.WaitGroup
	unsub  func()

	reach    *reach     // reach.go
	punch    punchState // holepunch.go
	disc     *discovery // discovery.go; nil without bootstrap peers
	dhtReady dhtPtr

	mu     gosync.Mutex
	closed bool // set by Close before it waits: no goroutine starts after
	spaces map[string]*spaceState
	jobs   map[jobKey]*job
	seen   *seenSet // last announcement digest per (sender, space), bounded
	// ann holds the announcement rules' memory (trickle.go).
	ann *Announcer
	// digestPulls holds, for each (peer, space), the digests whose pull
	// (WantDigest) waits for the next pull of the pair to end.
	digestPulls map[jobKey][]digestPull
	// claimed holds the heads a peer announced itself, until a pull from
	// it has been tried: heads it then fails to produce are charged to it.
	claimed map[jobKey]claim
	claims  uint64 // sequence of claims
	// relayed holds the heads of an announcement whose announcer is not
	// connected, for the pull from the peer that relayed it (relayRetry).
	relayed map[jobKey]relayedWant
	// pulling holds, for each (peer, space) pulled now, a channel closed
	// when that pull ends: pulls of one space from one peer run one at a
	// time (see SyncWith).
	pulling map[jobKey]chan struct{}
	// fresh holds, for each space this node holds nothing of and pulls
	// now from a peer that offers it, a channel closed when that pull
	// ends (freshGate).
	fresh map[string]chan struct{}
	// catchups holds the ranged catch-up running for each space
	// (multipull.go); catchStall is its stall rule's period.
	catchups   map[string]*catchUp
	catchStall time.Duration

	sent, suppressed, received, repeats, dropped, triggered atomic.Uint64
	inSync, replies, digestPulled, redundant                atomic.Uint64

	slots   *slots // inbound sync streams served now (slots.go)
	joined  *joinedTopics
	flood   *floodGate
	flooded atomic.Uint64

	// offers are the spaces each connected peer announces (available.go).
	omu           gosync.Mutex
	offers        map[peer.ID]map[string]bool
	offersIgnored atomic.Uint64
}

type spaceState struct {
	topic *pubsub.Topic
	sub   *pubsub.Subscription
	timer *time.Timer // the debounce of a change
	// soon is a deferred announcement (announceSoon), a reply to a peer
	// that is behind, of the heads whose digest is soonOf.
	soon   *time.Timer
	soonOf [32]byte
	// last is the digest of the heads last announced (or heard announced
	// by another peer in place of this node's), lastHeads those heads.
	last      [32]byte
	lastHeads []dag.ID
	lastSent  time.Time
	// derived: since the last periodic re-announcement the heads
	// changed, only by Derived changes (none announced).
	derived bool
	// ready: a publish on the topic has waited for a mesh peer once
	// (publish).
	ready atomic.Bool
}

// digestPull is the digest of an announcement that set off a pull,
// waiting for a pull that began after seq: inflight, a pull for the
// digest (WantDigest); direct, from the announcer itself (its end then
// covers the digest, Announcer.PullDone).
type digestPull struct {
	d        [32]byte
	heads    []dag.ID // the heads the announcement named
	seq      uint64
	inflight bool
	direct   bool
}

// announceKind is why announce runs.
type announceKind uint8

const (
	kindChange   announceKind = iota // the heads changed, after the debounce
	kindSoon                         // a deferred announcement (announceSoon)
	kindPeriodic                     // the periodic re-announcement
)

type jobKey struct {
	peer  peer.ID
	space string
}

type job struct{ again bool }

// claim is heads a peer announced, numbered so that only a pull that began
// after the announcement is held against it.
type claim struct {
	heads []dag.ID
	seq   uint64
}

// gater refuses peers that Config.Allow refuses.
type gater struct{ allow func(peer.ID) bool }

func (g gater) InterceptPeerDial(p peer.ID) bool                 { return g.allow(p) }
func (g gater) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return g.allow(p) }
func (g gater) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (g gater) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.allow(p)
}
func (g gater) InterceptUpgraded(c network.Conn) (bool, control.DisconnectReason) {
	return g.allow(c.RemotePeer()), 0
}

// NewNode starts a node for local. ctx bounds only the start; the node runs
// until Close.
func NewNode(ctx context.Context, local Local, cfg Config) (*Node, error) {
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.StreamTimeout <= 0 {
		cfg.StreamTimeout = DefaultStreamTimeout
	}
	if cfg.MDNSTag == "" {
		cfg.MDNSTag = DefaultMDNSTag
	}
	if len(cfg.ListenAddrs) == 0 {
		cfg.ListenAddrs = Loopback
	}
	for _, a := range cfg.Peers {
		if err := CheckPeerAddr(a); err != nil {
			return nil, err
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rm, err := resourceManager(cfg.Limits)
	if err != nil {
		return nil, fmt.Errorf("sync: resource manager: %w", err)
	}
	opts := []libp2p.Option{libp2p.ListenAddrStrings(cfg.ListenAddrs...), libp2p.ResourceManager(rm)}
	if cfg.Identity != nil {
		opts = append(opts, libp2p.Identity(cfg.Identity))
	}
	if cfg.Allow != nil {
		opts = append(opts, libp2p.ConnectionGater(gater{cfg.Allow}))
	}
	r, self := newReach()
	ropts, err := reachOptions(cfg.Discovery, r, self)
	if err != nil {
		return nil, err
	}
	opts = append(append(opts, ropts...), cfg.HostOptions...)
	h, err := libp2p.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("sync: libp2p host: %w", err)
	}
	nctx, cancel := context.WithCancel(context.Background())
	n := &Node{
		local:       local,
		cfg:         cfg,
		host:        h,
		log:         log,
		ctx:         nctx,
		cancel:      cancel,
		spaces:      map[string]*spaceState{},
		jobs:        map[jobKey]*job{},
		seen:        newSeenSet(maxSeen),
		ann:         NewAnnouncer(),
		digestPulls: map[jobKey][]digestPull{},
		claimed:     map[jobKey]claim{},
		relayed:     map[jobKey]relayedWant{},
		pulling:     map[jobKey]chan struct{}{},
		fresh:       map[string]chan struct{}{},
		catchups:    map[string]*catchUp{},
		catchStall:  catchStall,
		offers:      map[peer.ID]map[string]bool{},
		slots:       newSlots(cfg.Limits.withDefaults()),
		joined:      &joinedTopics{m: map[string]bool{}},
		flood:       &floodGate{peers: map[peer.ID]*floodBucket{}},
		reach:       r,
	}
	self.set(n)
	n.engine = NewEngine(local, cfg.Engine)
	score, thresholds := scoreParams(n.flood)
	psOpts := []pubsub.Option{
		pubsub.WithAppSpecificRpcInspector(n.inspect),
		pubsub.WithSubscriptionFilter(pubsub.WrapLimitSubscriptionFilter(topicFilter{n.joined, n.offered}, MaxSubscriptionsPerRPC)),
		pubsub.WithMaxMessageSize(MaxGossipMessage),
		pubsub.WithPeerScore(score, thresholds)}
	if cfg.ContentIDs {
		psOpts = append(psOpts, pubsub.WithMessageIdFn(contentID), pubsub.WithSeenMessagesTTL(cfg.Interval))
	}
	n.ps, err = pubsub.NewGossipSub(nctx, h, psOpts...)
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("sync: gossipsub: %w", err)
	}
	h.SetStreamHandler(protocol.ID(ProtocolID), n.handle)
	if !cfg.PlainBatches {
		h.SetStreamHandler(protocol.ID(ProtocolDeflateID), n.handle)
		h.SetStreamHandler(protocol.ID(ProtocolRangesID), n.handle)
	}
	if _, ok := local.(CheckpointServer); ok {
		h.SetStreamHandler(protocol.ID(CheckpointProtocolID), n.handleCheckpoint)
	}
	h.Network().Notify(&network.NotifyBundle{ConnectedF: func(_ network.Network, c network.Conn) {
		p := c.RemotePeer()
		n.engine.emit(Event{Kind: EventPeerConnected, Peer: p.String()})
		for _, s := range n.Spaces() {
			n.schedule(p, s)
		}
	}, DisconnectedF: n.forgetOffers})
	n.unsub = local.Subscribe(n.changed)
	spaces, err := local.Spaces(ctx)
	if err != nil {
		n.Close()
		return nil, err
	}
	if cfg.Manual {
		spaces = nil
	}
	for _, s := range append(spaces, cfg.Spaces...) {
		if err := n.Join(s); err != nil {
			n.Close()
			return nil, err
		}
	}
	if cfg.MDNS {
		n.mdns = mdns.NewMdnsService(h, cfg.MDNSTag, notifee{n})
		if err := n.mdns.Start(); err != nil {
			n.Close()
			return nil, fmt.Errorf("sync: mdns: %w", err)
		}
	}
	if err := n.startReach(ctx); err != nil {
		n.Close()
		return nil, err
	}
	n.dialPeers(ctx)
	n.wg.Add(1)
	go n.periodic()
	return n, nil
}

type notifee struct{ n *Node }

func (f notifee) HandlePeerFound(pi peer.AddrInfo) {
	if pi.ID == f.n.host.ID() {
		return
	}
	ctx, cancel := context.WithTimeout(f.n.ctx, f.n.cfg.StreamTimeout)
	defer cancel()
	if err := f.n.host.Connect(ctx, pi); err != nil {
		f.n.log.Debug("mdns connect", "peer", pi.ID, "err", err)
	}
}

// Engine returns the node's protocol engine (for Progress and Banned).
func (n *Node) Engine() *Engine { return n.engine }

// Progress returns the progress of the pulls running now.
func (n *Node) Progress() []Progress { return n.engine.Progress() }

// ID returns the node's libp2p peer id.
func (n *Node) ID() peer.ID { return n.host.ID() }

// Host returns the libp2p host.
func (n *Node) Host() host.Host { return n.host }

// Addrs returns the node's dialable multiaddrs, each with its /p2p/ part.
func (n *Node) Addrs() []string {
	var out []string
	for _, a := range n.host.Addrs() {
		out = append(out, fmt.Sprintf("%s/p2p/%s", a, n.host.ID()))
	}
	return out
}

// Stats returns the gossip counters.
func (n *Node) Stats() AnnounceStats {
	return AnnounceStats{
		Sent: n.sent.Load(), Suppressed: n.suppressed.Load(), Received: n.received.Load(),
		Repeats: n.repeats.Load(), Dropped: n.dropped.Load(), Triggered: n.triggered.Load(),
		InSync: n.inSync.Load(), Replies: n.replies.Load(), DigestPulls: n.digestPulled.Load(), Redundant: n.redundant.Load(),
		OffersIgnored: n.offersIgnored.Load(),
		Busy:          n.slots.busy.Load(), Evicted: n.slots.evicted.Load(), Flooded: n.flooded.Load(),
	}
}

// CheckPeerAddr checks that addr names a peer as Connect and
// Config.Peers need it: a multiaddr with a /p2p/ part, as a node prints
// its own addresses.
func CheckPeerAddr(addr string) error {
	a, err := ma.NewMultiaddr(addr)
	if err != nil {
		return fmt.Errorf("sync: peer address %q is not a multiaddr (%v); give one as the peer's node prints it, like /ip4/192.168.1.7/tcp/4001/p2p/12D3KooW…", addr, err)
	}
	if _, err := a.ValueForProtocol(ma.P_P2P); err != nil {
		return fmt.Errorf("sync: peer address %q has no /p2p/ part naming the peer; give it as the peer's node prints it, ending in /p2p/12D3KooW…", addr)
	}
	if _, err := peer.AddrInfoFromP2pAddr(a); err != nil {
		return fmt.Errorf("sync: peer address %q: %w", addr, err)
	}
	return nil
}

// Connect dials a peer given as a multiaddr with a /p2p/ part. The
// address itself must answer: libp2p alone would return at once when the
// peer is already connected by another route (mDNS, another address), or
// dial the other addresses it knows for the peer. So a TCP address is
// dialled first on its own; other transports (QUIC) are not checked so.
func (n *Node) Connect(ctx context.Context, addr string) error {
	if err := CheckPeerAddr(addr); err != nil {
		return err
	}
	pi, err := peer.AddrInfoFromString(addr)
	if err != nil {
		return fmt.Errorf("sync: peer address %q: %w", addr, err)
	}
	for _, a := range pi.Addrs {
		if _, err := a.ValueForProtocol(ma.P_TCP); err != nil {
			continue
		}
		c, err := (&manet.Dialer{}).DialContext(ctx, a)
		if err != nil {
			return fmt.Errorf("sync: %s does not answer: %w", a, err)
		}
		c.Close()
	}
	return n.host.Connect(ctx, *pi)
}

// Disconnect closes every connection to p.
func (n *Node) Disconnect(p peer.ID) error { return n.host.Network().ClosePeer(p) }

func (n *Node) dialPeers(ctx context.Context) {
	for _, a := range n.cfg.Peers {
		pi, err := peer.AddrInfoFromString(a)
		if err != nil {
			n.log.Debug("bad peer address", "addr", a, "err", err)
			continue
		}
		if n.host.Network().Connectedness(pi.ID) == network.Connected {
			continue
		}
		if err := n.host.Connect(ctx, *pi); err != nil {
			n.log.Debug("dial", "peer", pi.ID, "err", err)
		}
	}
}

// Spaces returns the joined spaces.
func (n *Node) Spaces() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.spaces))
	for s := range n.spaces {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Join subscribes to space's announcements and pulls it from every
// connected peer. Joining twice is a no-op.
func (n *Node) Join(space string) error {
	n.mu.Lock()
	if _, ok := n.spaces[space]; ok {
		n.mu.Unlock()
		return nil
	}
	name := TopicPrefix + space
	n.joined.add(name) // peers' subscriptions to it are admitted from now
	if err := n.ps.RegisterTopicValidator(name, func(_ context.Context, _ peer.ID, m *pubsub.Message) pubsub.ValidationResult {
		a, err := DecodeAnnouncement(m.Data)
		if err != nil || a.Space != space {
			n.dropped.Add(1)
			n.engine.emit(Event{Kind: EventAnnounceDropped, Peer: m.GetFrom().String(), Space: space, Err: err})
			return pubsub.ValidationReject
		}
		return pubsub.ValidationAccept
	}); err != nil {
		n.mu.Unlock()
		return fmt.Errorf("sync: join %s: %w", space, err)
	}
	t, err := n.ps.Join(name)
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("sync: join %s: %w", space, err)
	}
	sub, err := t.Subscribe()
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("sync: subscribe %s: %w", space, err)
	}
	n.spaces[space] = &spaceState{topic: t, sub: sub}
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.wg.Add(1)
	n.mu.Unlock()
	go n.listen(space, sub)
	for _, p := range n.host.Network().Peers() {
		n.schedule(p, space)
	}
	n.changed(space)
	return nil
}

// Leave undoes Join: the node stops listening to space's announcements
// and leaves its topic, so that gossipsub tells every connected peer it
// no longer subscribes (Available on their side drops it) and no pull of
// it starts any more. A pull already running ends by itself; what it
// brings stays in Local. Leaving a space not joined is a no-op. A space
// Local changes later is joined again by whoever calls Join for it (the
// node does, for every space that changes on it).
func (n *Node) Leave(space string) error {
	n.mu.Lock()
	st, ok := n.spaces[space]
	if !ok {
		n.mu.Unlock()
		return nil
	}
	delete(n.spaces, space)
	if st.timer != nil {
		st.timer.Stop()
	}
	if st.soon != nil {
		st.soon.Stop()
	}
	n.mu.Unlock()
	n.ann.Forget(space)
	st.sub.Cancel() // ends listen
	if err := st.topic.Close(); err != nil {
		return fmt.Errorf("sync: leave %s: %w", space, err)
	}
	if err := n.ps.UnregisterTopicValidator(TopicPrefix + space); err != nil {
		return fmt.Errorf("sync: leave %s: %w", space, err)
	}
	return nil
}

// listen handles space's announcements.
func (n *Node) listen(space string, sub *pubsub.Subscription) {
	defer n.wg.Done()
	for {
		m, err := sub.Next(n.ctx)
		if err != nil {
			return
		}
		from := m.GetFrom()
		if from == n.host.ID() {
			continue
		}
		a, err := DecodeAnnouncement(m.Data)
		if err != nil { // the validator dropped it already
			continue
		}
		n.received.Add(1)
		d := sha256.Sum256(m.Data)
		k := jobKey{from, space}
		n.mu.Lock()
		repeat := n.seen.put(k, d)
		n.mu.Unlock()
		if repeat {
			n.repeats.Add(1)
		}
		connected := n.host.Network().Connectedness(from) == network.Connected
		if connected {
			// Heads of a peer this node can pull from: the next pull
			// names them as Common. An announcer not connected (relayed,
			// or any signing key at all) costs no engine state.
			n.engine.Seen(from.String(), space, a.Heads)
		}
		if n.cfg.Manual {
			continue
		}
		want, err := n.ann.Judge(n.ctx, n.local, a)
		if err != nil {
			n.log.Debug("announcement", "space", space, "err", err)
			continue
		}
		switch want {
		case WantInSync:
			if connected {
				// The peer holds this node's heads: the teacher's page
				// and the next pull's Common see all of them (up to 64),
				// not only the few it named.
				if hs, err := dag.HeadsOf(n.ctx, n.local, space); err == nil {
					n.engine.Seen(from.String(), space, hs)
				}
			}
			n.inSync.Add(1)
			continue
		case WantNothing:
			n.inSync.Add(1)
			continue
		case WantReply:
			// The sender is behind: announce this node's heads soon,
			// unless another peer does first. Only the sender's own
			// peers answer it (a relayed announcement reaches every node
			// of a fleet: all of them answering would flood it).
			if !connected {
				n.inSync.Add(1)
				continue
			}
			n.replies.Add(1)
			n.announceSoon(space)
			continue
		}
		// Pull from the announcer if connected, else from whoever passed
		// the announcement on.
		src := from
		if !connected {
			src = m.ReceivedFrom
		}
		sk := jobKey{src, space}
		n.mu.Lock()
		switch {
		case want == WantDigest:
			// One pull for the digest, from this sender; others that
			// announce it meanwhile set off none (Judge).
			n.digestPulled.Add(1)
		case !connected:
			n.relayed[sk] = relayedWant{heads: a.Heads, seq: n.claims}
		default:
			n.claims++
			n.claimed[k] = claim{heads: a.Heads, seq: n.claims}
		}
		n.claims++
		n.digestPulls[sk] = append(n.digestPulls[sk], digestPull{d: a.Key(), heads: a.Heads, seq: n.claims, inflight: want == WantDigest, direct: connected})
		n.mu.Unlock()
		n.triggered.Add(1)
		n.schedule(src, space)
	}
}

// countUnknown counts the heads neither held nor quarantined.
func (n *Node) countUnknown(heads []dag.ID) (int, error) {
	c := 0
	for _, h := range heads {
		st, err := n.local.Has(n.ctx, h)
		if err != nil {
			return 0, err
		}
		if st != dag.Absent {
			continue
		}
		if _, q, err := n.local.Quarantined(n.ctx, h); err != nil {
			return 0, err
		} else if !q {
			c++
		}
	}
	return c, nil
}

// changed is Local's notification: announce space after the debounce.
func (n *Node) changed(space string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.spaces[space]
	if st == nil || st.timer != nil || n.ctx.Err() != nil {
		return
	}
	st.timer = time.AfterFunc(n.cfg.Debounce, func() {
		n.mu.Lock()
		st.timer = nil
		n.mu.Unlock()
		n.announce(space, kindChange)
	})
}

// announceSoon answers a peer that is behind: it announces space after
// a random pause of one to two trickleMin (a deferred announcement
// already pending keeps its time), unless by then another peer has
// announced the same heads (Redundant) or this node's heads changed (the
// space is busy: the writers' announcements reach the peer). Announcements
// of this node's heads heard before no longer count: the peer showed it
// did not get them (Trickle's inconsistency).
func (n *Node) announceSoon(space string) {
	hs, err := dag.HeadsOf(n.ctx, n.local, space)
	if err != nil || len(hs) == 0 {
		return
	}
	d := HeadsDigest(hs)
	n.ann.Unheard(space, d)
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.spaces[space]
	if st == nil || n.ctx.Err() != nil {
		return
	}
	if st.soon != nil {
		return
	}
	st.soonOf = d
	t := n.trickleMin()
	st.soon = time.AfterFunc(t+time.Duration(rand.Int64N(int64(t)+1)), func() {
		n.mu.Lock()
		st.soon = nil
		n.mu.Unlock()
		n.announce(space, kindSoon)
	})
}

// trickleMin is the shortest pause of a deferred announcement: Interval
// / 30 (1 s by default), at least 50 ms, at most 1 s.
func (n *Node) trickleMin() time.Duration {
	return min(max(n.cfg.Interval/30, 50*time.Millisecond), time.Second)
}

// announce publishes space's heads, as an announcement naming the
// newest NamedHeads of them. A change (kindChange) is not announced when
// the heads are those announced last, nor when every head it adds was
// named by an announcement received or held by a peer pulled from
// (Derived: the peers told the others already). A deferred announcement
// (a reply) and a periodic one are skipped when TrickleK announcements
// of the same heads were heard in the period (Redundant); a reply also
// when the heads changed since it was due; a periodic one
// also when the heads changed in the period only so (a busy space's
// authors announce what is new; the first quiet period re-announces).
// A periodic one then starts the next period.
func (n *Node) announce(space string, kind announceKind) {
	if n.ctx.Err() != nil {
		return
	}
	heads, err := dag.HeadsOf(n.ctx, n.local, space)
	if err != nil || len(heads) == 0 {
		return
	}
	d := n.ann.Own(space, heads)
	if kind == kindPeriodic {
		defer n.ann.Reset(space)
	}
	n.mu.Lock()
	st := n.spaces[space]
	if st == nil {
		n.mu.Unlock()
		return
	}
	if kind != kindPeriodic && st.last == d {
		n.mu.Unlock()
		n.suppressed.Add(1)
		return
	}
	if kind == kindSoon && st.soonOf != d {
		// The heads changed since the peer showed it was behind.
		n.mu.Unlock()
		n.suppressed.Add(1)
		n.redundant.Add(1)
		return
	}
	if kind == kindChange {
		added := AddedHeads(heads, st.lastHeads)
		if n.ann.Derived(space, added) {
			// Peers' announcements named every head added: they told
			// the others already. The periodic re-announcement carries
			// these heads, unless it too is redundant.
			st.derived = true
			n.mu.Unlock()
			n.suppressed.Add(1)
			n.redundant.Add(1)
			return
		}
	}
	derived := st.derived
	if kind == kindPeriodic {
		st.derived = false
	}
	if kind != kindChange && (n.ann.Redundant(space, d) || (kind == kindPeriodic && derived)) {
		// Another peer announced these heads in the period, or every
		// change of them in the period came from peers that announced
		// theirs.
		st.last, st.lastHeads = d, heads
		n.mu.Unlock()
		n.suppressed.Add(1)
		n.redundant.Add(1)
		return
	}
	st.last, st.lastHeads, st.lastSent = d, heads, time.Now()
	st.derived = false
	if kind == kindChange && st.soon != nil {
		// This announcement carries what the deferred one would.
		st.soon.Stop()
		st.soon = nil
	}
	n.mu.Unlock()
	msg := announcementOf(space, heads, Newest(n.ctx, n.local, heads, NamedHeads), d).Encode()
	if err := n.publish(st, msg); err != nil {
		n.log.Debug("publish", "space", space, "err", err)
		return
	}
	n.sent.Add(1)
}

// publish publishes msg on st's topic. The first publish after the topic
// was joined that finds it subscribed by some peer waits, at most
// readyWait, for gossipsub to graft a peer into the topic's mesh, then
// publishes regardless; later publishes do not wait. A topic joined a
// moment ago has no mesh until a heartbeat: a message published then
// was lost to a subscribed peer about one time in four (a late joiner's
// first write never reached the node it joined from). go-libp2p-pubsub's
// WithReadiness is its documented remedy. Waiting once per join keeps a
// topic whose peers never graft (or a periodic re-announcement of many
// spaces) from paying the wait on every publish.
func (n *Node) publish(st *spaceState, msg []byte) error {
	t := st.topic
	if st.ready.Load() || len(t.ListPeers()) == 0 {
		// Waited once already, or nobody subscribes yet: nothing to
		// wait for.
		return t.Publish(n.ctx, msg)
	}
	ctx, cancel := context.WithTimeout(n.ctx, readyWait)
	err := t.Publish(ctx, msg, pubsub.WithReadiness(pubsub.MinTopicSize(1)))
	cancel()
	st.ready.Store(true)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && n.ctx.Err() == nil {
		// No mesh peer yet (alone, or peers still connecting): publish to
		// whoever gossipsub has, as before.
		err = t.Publish(n.ctx, msg)
	}
	return err
}

// readyWait bounds publish's wait for a mesh peer: gossipsub grafts at
// its heartbeat, every second.
const readyWait = 2 * time.Second

// periodic re-announces every space and redials configured peers, every
// Interval spread by up to a quarter either way.
func (n *Node) periodic() {
	defer n.wg.Done()
	for {
		jitter := time.Duration(rand.Int64N(int64(n.cfg.Interval)/2+1)) - n.cfg.Interval/4
		t := time.NewTimer(n.cfg.Interval + jitter)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		n.dialPeers(n.ctx)
		n.pullRelayed()
		for _, s := range n.Spaces() {
			n.announce(s, kindPeriodic)
		}
	}
}

// schedule pulls space from p; a pull already running for the pair runs
// once more when it ends, so a burst of triggers makes at most two pulls.
func (n *Node) schedule(p peer.ID, space string) {
	if p == n.host.ID() || n.ctx.Err() != nil || n.cfg.Manual {
		return
	}
	k := jobKey{p, space}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	if j := n.jobs[k]; j != nil {
		j.again = true
		n.mu.Unlock()
		return
	}
	j := &job{}
	n.jobs[k] = j
	n.wg.Add(1)
	n.mu.Unlock()
	go func() {
		defer n.wg.Done()
		busy := 0
		for {
			n.mu.Lock()
			began := n.claims
			n.mu.Unlock()
			pst, err := n.SyncWith(n.ctx, p, space)
			if CodeOf(err) == CodeBusy && busy < maxBusyRetries {
				// The peer had no slot free: nothing is held against it,
				// and the pull is tried again once its streams may have
				// moved on.
				busy++
				if !sleepCtx(n.ctx, busyBackoff(busy)) {
					n.mu.Lock()
					delete(n.jobs, k)
					n.mu.Unlock()
					return
				}
				continue
			}
			busy = 0
			if err != nil {
				n.log.Debug("pull", "peer", p, "space", space, "err", err)
			} else {
				// What the pull brought is the peer's: a change made of
				// it alone is not announced (Derived).
				n.ann.Heard(space, n.engine.Announced(p.String(), space))
				if n.cfg.AfterPull != nil {
					n.cfg.AfterPull(n.ctx, p, space)
				}
			}
			var claimed []dag.ID
			n.mu.Lock()
			if cl, ok := n.claimed[k]; ok && cl.seq <= began {
				claimed = cl.heads
				delete(n.claimed, k)
			}
			rw, relayed := n.relayed[k]
			if relayed && rw.seq <= began {
				delete(n.relayed, k)
			} else {
				relayed = false
			}
			var done []digestPull
			if l := n.digestPulls[k]; len(l) > 0 {
				rest := l[:0:0]
				for _, dp := range l {
					if dp.seq <= began {
						done = append(done, dp)
					} else {
						rest = append(rest, dp)
					}
				}
				if len(rest) == 0 {
					delete(n.digestPulls, k)
				} else {
					n.digestPulls[k] = rest
				}
			}
			n.mu.Unlock()
			if relayed {
				n.relayRetry(p, space, rw)
			}
			for _, dp := range done {
				// A whole pull from the announcer brought what it
				// announced: the digest is covered, if it brought the
				// heads the announcement named (a peer that announced
				// another's heads and served nothing covers nothing).
				// Otherwise the digest may set off another pull, from the
				// next peer that announces it.
				whole := dp.direct && err == nil && pst.Missing == 0
				if whole {
					missing, uerr := n.countUnknown(dp.heads)
					whole = uerr == nil && missing == 0
				}
				n.ann.PullDone(space, dp.d, whole)
			}
			if err == nil && len(claimed) > 0 {
				// A peer that announced heads and then did not produce
				// them spends its budget for unresolved hashes.
				if missing, uerr := n.countUnknown(claimed); uerr == nil && missing > 0 {
					n.engine.charge(p.String(), chargeUnresolved, missing) //nolint:errcheck // the ban is the effect
					n.pullElsewhere(p, space)
				}
			}
			n.mu.Lock()
			if !j.again || n.ctx.Err() != nil {
				delete(n.jobs, k)
				n.mu.Unlock()
				return
			}
			j.again = false
			n.mu.Unlock()
		}
	}()
}

// pullElsewhere pulls space from up to maxElsewhere other connected peers
// that subscribe to it, after p announced heads and did not produce them.
// With content ids (Config.ContentIDs) the honest peers' copies of
// the same announcement were dropped as already seen, so nothing else
// would make this node pull them before the next period: a peer that
// front-runs others' announcements and then serves nothing delays a
// space by one pull, not by an Interval.
func (n *Node) pullElsewhere(p peer.ID, space string) {
	if !n.cfg.ContentIDs {
		return
	}
	peers := n.ps.ListPeers(TopicPrefix + space)
	rand.Shuffle(len(peers), func(i, j int) { peers[i], peers[j] = peers[j], peers[i] })
	k := 0
	for _, q := range peers {
		if k == maxElsewhere {
			break
		}
		if q == p || n.host.Network().Connectedness(q) != network.Connected {
			continue
		}
		k++
		n.schedule(q, space)
	}
}

// relayedWant is the heads of an announcement a peer relayed.
type relayedWant struct {
	heads []dag.ID
	seq   uint64 // n.claims when it was recorded
	tries int
}

// relayRetry pulls space from p again, after a pause, when the pull that
// an announcement p relayed set off left some of its heads missing, up
// to maxRelayRetries times. gossipsub forwards an announcement as soon as
// it is valid, before the relaying peer has pulled what it announces;
// with content ids (Config.ContentIDs) that peer's own announcement
// of the same heads, once it holds them, is the same message and is not
// delivered again, so without the retry a node that hears of heads only
// through peers that did not hold them yet would wait for the next
// period (a chain of nodes, each connected to its neighbours only).
func (n *Node) relayRetry(p peer.ID, space string, rw relayedWant) {
	if rw.tries >= maxRelayRetries {
		return
	}
	if missing, err := n.countUnknown(rw.heads); err != nil || missing == 0 {
		return
	}
	rw.tries++
	time.AfterFunc(relayBackoff<<(rw.tries-1), func() {
		n.mu.Lock()
		if n.closed {
			n.mu.Unlock()
			return
		}
		rw.seq = n.claims
		n.relayed[jobKey{p, space}] = rw
		n.mu.Unlock()
		n.schedule(p, space)
	})
}

// maxRelayRetries and relayBackoff pace relayRetry: 0.25 s doubling,
// five times (7.75 s in all).
const (
	maxRelayRetries = 5
	relayBackoff    = 250 * time.Millisecond
)

// maxElsewhere bounds the peers pullElsewhere pulls from.
const maxElsewhere = 3

// maxBusyRetries bounds the retries of an automatic pull answered busy;
// the next announcement or re-announcement starts it again.
const maxBusyRetries = 5

// busyBackoff is the wait before the n-th retry of a pull answered busy:
// 0.5 s doubling, spread by up to a half.
func busyBackoff(n int) time.Duration {
	d := 500 * time.Millisecond << (n - 1)
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

// sleepCtx waits d, or less if ctx ends first (reported false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// SyncWith pulls space from peer p now, over a new stream. A pull of the
// same space from the same peer already running (one the node started on
// an announcement or a connection, or another caller's) is waited for
// first: run side by side, the two would fetch, verify and offer to Local
// the same entries twice, and the peer would serve them twice. The pull
// that follows asks only for what is still missing. When this node holds
// nothing of space and p offers it, a catch-up from p and the other peers
// that offer it (multipull.go) runs first, and the pull then asks p only
// for what that left missing.
func (n *Node) SyncWith(ctx context.Context, p peer.ID, space string) (Stats, error) {
	if err := n.engine.refused(p.String()); err != nil {
		return Stats{}, err
	}
	k := jobKey{p, space}
	for {
		n.mu.Lock()
		running := n.pulling[k]
		if running == nil {
			n.pulling[k] = make(chan struct{})
			n.mu.Unlock()
			break
		}
		n.mu.Unlock()
		select {
		case <-running:
		case <-ctx.Done():
			return Stats{}, ctx.Err()
		}
	}
	defer func() {
		n.mu.Lock()
		close(n.pulling[k])
		delete(n.pulling, k)
		n.mu.Unlock()
	}()
	caught, err := n.catchUpFirst(ctx, p, space)
	if err != nil {
		return Stats{}, err
	}
	release, err := n.freshGate(ctx, p, space)
	if err != nil {
		return Stats{}, err
	}
	defer release()
	s, err := n.openSync(ctx, p)
	if err != nil {
		return Stats{}, fmt.Errorf("sync: open stream to %s: %w", p, err)
	}
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	st, err := n.engine.Pull(ctx, p.String(), &deadlined{s: s, d: n.cfg.StreamTimeout}, space)
	st = st.plus(caught)
	if err != nil {
		s.Reset()
		return st, err
	}
	return st, s.Close()
}

// freshGate makes the pulls of a space this node holds nothing of, from
// peers that offer it, run one at a time (after a catch-up from several
// peers that brought nothing, or with Config.SerialCatchUp): each would bring the whole
// space, and side by side they bring it as many times (a late laptop
// joining a session three classmates hold took it three times over the
// one Wi-Fi channel they share). The pull that waited then asks only for
// what the first left missing. It waits only while the running one makes
// progress: one that brings fewer than freshMinEntries in freshStall (a
// peer that trickles) no longer holds the others back. The returned release ends
// this pull's turn.
func (n *Node) freshGate(ctx context.Context, p peer.ID, space string) (release func(), err error) {
	none := func() {}
	if !n.offered(p, TopicPrefix+space) {
		return none, nil
	}
	for {
		hs, err := dag.HeadsOf(ctx, n.local, space)
		if err != nil {
			return nil, err
		}
		if len(hs) > 0 {
			return none, nil
		}
		n.mu.Lock()
		running := n.fresh[space]
		if running == nil {
			ch := make(chan struct{})
			n.fresh[space] = ch
			n.mu.Unlock()
			return func() {
				n.mu.Lock()
				delete(n.fresh, space)
				close(ch)
				n.mu.Unlock()
			}, nil
		}
		n.mu.Unlock()
		for done := n.pulledOf(space); ; {
			t := time.NewTimer(freshStall)
			select {
			case <-running:
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
				now := n.pulledOf(space)
				if now < done+freshMinEntries {
					return none, nil // stalled or trickling: pull alongside it
				}
				done = now
				continue
			}
			t.Stop()
			break
		}
	}
}

// A fresh pull that brings fewer than freshMinEntries entries in
// freshStall no longer holds back the pulls waiting on it (freshGate).
// An honest one brings thousands a second; the first report may wait for
// an Ingest of up to Options.IngestItems entries.
const (
	freshStall      = 10 * time.Second
	freshMinEntries = 256
)

// pulledOf counts the entries the running pulls of space have received.
func (n *Node) pulledOf(space string) uint64 {
	var sum uint64
	for _, g := range n.engine.Progress() {
		if g.Space == space {
			sum += g.EntriesDone
		}
	}
	return sum
}

// handle serves an inbound stream in a slot, or answers it busy.
func (n *Node) handle(s network.Stream) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		s.Reset()
		return
	}
	n.wg.Add(1)
	n.mu.Unlock()
	defer n.wg.Done()
	p := s.Conn().RemotePeer()
	sl := n.slots.take(p, s)
	if sl == nil {
		n.refuseBusy(s)
		return
	}
	defer n.slots.release(sl)
	stop := context.AfterFunc(n.ctx, func() { s.Reset() })
	defer stop()
	ranges := s.Protocol() == ProtocolRangesID
	deflate := (ranges || s.Protocol() == ProtocolDeflateID) && n.deflatesFor(s.Conn().RemoteMultiaddr())
	err := n.engine.Serve(n.ctx, p.String(), &deadlined{s: s, d: n.cfg.StreamTimeout, deflate: deflate, ranges: ranges})
	if err != nil && !errors.Is(err, io.EOF) {
		n.log.Debug("serve", "peer", p, "err", err)
		s.Reset()
		return
	}
	s.Close()
}

// deflatesFor reports whether this node deflates the batches it serves to
// a requester that asked for them from the address a: not over loopback
// unless Config.DeflateLoopback says so. A relayed connection is not a
// loopback one, even through a relay on this machine: its bytes cross the
// relay's link to the peer and count against the relay's limits.
func (n *Node) deflatesFor(a ma.Multiaddr) bool {
	if n.cfg.DeflateLoopback || a == nil {
		return true
	}
	if _, relayed := relayOf(a); relayed {
		return true
	}
	return !manet.IsIPLoopback(a)
}

// refuseBusy answers a stream that got no slot: one error frame, busy,
// then the stream is closed (which frees it at once in libp2p).
func (n *Node) refuseBusy(s network.Stream) {
	s.SetWriteDeadline(time.Now().Add(time.Second)) //nolint:errcheck // best effort
	if WriteFrame(s, EncodeError(CodeBusy, "no stream slot free; retry in a moment")) != nil {
		s.Reset()
		return
	}
	s.Close()
}

// deadlined gives each frame of a stream one deadline, set when the frame
// is due (framer): a peer that trickles a byte now and then loses the
// stream once a frame has taken the timeout.
type deadlined struct {
	s network.Stream
	d time.Duration
	// deflate: the stream is of ProtocolDeflateID or ProtocolRangesID,
	// and this side serves.
	deflate bool
	// ranges: the stream is of ProtocolRangesID, and this side serves.
	ranges bool
}

// DeflateBatches reports whether the requester on the other side takes
// deflated batches.
func (x *deadlined) DeflateBatches() bool { return x.deflate }

// syncProtocols are the protocols a pull asks for, preferred first.
func (n *Node) syncProtocols() []protocol.ID {
	if n.cfg.PlainBatches {
		return []protocol.ID{ProtocolID}
	}
	return []protocol.ID{ProtocolDeflateID, ProtocolID}
}

func (x *deadlined) Read(p []byte) (int, error) { return x.s.Read(p) }

// FrameRead starts the deadline of the next frame to read.
func (x *deadlined) FrameRead() {
	x.s.SetReadDeadline(time.Now().Add(x.d)) //nolint:errcheck // best effort
}

// FrameWrite starts the deadline of the next frame to write.
func (x *deadlined) FrameWrite() {
	x.s.SetWriteDeadline(time.Now().Add(x.d)) //nolint:errcheck // best effort
}

// MemoryScope lets the framing reserve the memory of frames in the
// stream's resource scope.
func (x *deadlined) MemoryScope() memoryScope { return x.s.Scope() }

func (x *deadlined) Write(p []byte) (int, error) { return x.s.Write(p) }

// Close stops the node: its loops, its pulls and its host.
func (n *Node) Close() error {
	n.cancel()
	if n.unsub != nil {
		n.unsub()
	}
	n.mu.Lock()
	n.closed = true
	for _, st := range n.spaces {
		if st.timer != nil {
			st.timer.Stop()
		}
		if st.soon != nil {
			st.soon.Stop()
		}
	}
	n.mu.Unlock()
	var errs []error
	if n.mdns != nil {
		errs = append(errs, n.mdns.Close())
	}
	if n.disc != nil {
		errs = append(errs, n.disc.close())
	}
	errs = append(errs, n.host.Close())
	n.wg.Wait()
	return errors.Join(errs...)
}
