package sync

// Discovery beyond the LAN: a Kademlia DHT of witan nodes only (its own
// protocol prefix), provider records on a key derived from each space id,
// and the reachability parts of libp2p (reach.go) that let two peers
// behind NATs meet. docs/networking.md explains the whole; docs/security.md
// what an observer of the DHT learns.

import (
	"context"
	"fmt"
	"slices"
	gosync "sync"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	ma "github.com/multiformats/go-multiaddr"
)

// DHTPrefix is the protocol prefix of witan's DHT: its protocol is
// /witan/kad/1.0.0, so witan nodes form a DHT of their own and never join
// IPFS's.
const DHTPrefix = "/witan"

// SpaceNamespace is the prefix of the discovery namespace of a space: the
// DHT key of space s is the SHA-256 of SpaceNamespace+s (as libp2p's
// routing discovery turns a namespace into a CID), so the id itself is
// never stored in the DHT, only its hash.
const SpaceNamespace = "witan/space/1/"

// Defaults of Discovery.
const (
	DefaultFindEvery  = time.Minute
	DefaultDirectWait = 10 * time.Second
)

// Discovery configures finding peers beyond the LAN and reaching them
// behind NATs. The zero value is off: the node then behaves as on a LAN
// (configured peers and mDNS only), with none of the parts below.
type Discovery struct {
	// Bootstrap are multiaddrs with a /p2p/ part of witan DHT nodes (such
	// as a witan relay). Any turns the DHT on. None is built in.
	Bootstrap []string
	// Relays are circuit relay v2 relays (multiaddrs with a /p2p/ part)
	// the node reserves a slot on when AutoNAT finds it private. Empty:
	// relays are found among the DHT's peers (the bootstrap nodes first).
	// Relays alone, without Bootstrap, turn on the reachability parts but
	// no DHT.
	Relays []string
	// Space decides which joined spaces are advertised as provider
	// records and looked up in the DHT; it is asked again on every round
	// (FindEvery), so its answer may change as a space's state arrives.
	// Nil: no space, the DHT then only serves routing and relays. The
	// caller decides the policy (replica/node: off for education sessions
	// and memory spaces unless the user names them).
	Space func(space string) bool
	// Server makes the node a DHT server whatever AutoNAT says (a node on
	// a public address, as witan relay). Otherwise AutoNAT decides: a
	// private node is a DHT client and serves nothing.
	Server bool
	// FindEvery is how often each discovered space's providers are
	// looked up and the unconnected ones dialled (DefaultFindEvery);
	// while some space has none connected, after 1 s, 2 s, 4 s… up to
	// FindEvery.
	// Provider records are re-published as libp2p's routing discovery
	// advises (every 7/8 of its 3 h TTL), whatever FindEvery is.
	FindEvery time.Duration
	// DirectWait is how long a pull from a peer connected only through a
	// relay waits for hole punching to give a direct connection before
	// it runs over the relayed one (DefaultDirectWait).
	DirectWait time.Duration
	// Reachability forces what AutoNAT would find: "public" or "private"
	// (for a node that knows it is behind a NAT with too few AutoNAT
	// servers around to tell); empty lets AutoNAT decide.
	Reachability string

	// advertiseOnly keeps the node from looking up providers: it only
	// advertises (set by the tests, through export_test.go, to tell which
	// of two nodes dialled).
	advertiseOnly bool
}

func (d Discovery) on() bool { return len(d.Bootstrap) > 0 || len(d.Relays) > 0 }

func (d Discovery) withDefaults() Discovery {
	if d.FindEvery <= 0 {
		d.FindEvery = DefaultFindEvery
	}
	if d.DirectWait <= 0 {
		d.DirectWait = DefaultDirectWait
	}
	return d
}

// check reports a malformed address in d.
func (d Discovery) check() error {
	for _, a := range append(slices.Clone(d.Bootstrap), d.Relays...) {
		if err := CheckPeerAddr(a); err != nil {
			return err
		}
	}
	switch d.Reachability {
	case "", "public", "private":
	default:
		return fmt.Errorf("sync: reachability %q is neither public nor private", d.Reachability)
	}
	return nil
}

func addrInfos(addrs []string) []peer.AddrInfo {
	var out []peer.AddrInfo
	at := map[peer.ID]int{}
	for _, a := range addrs {
		pi, err := peer.AddrInfoFromString(a)
		if err != nil {
			continue
		}
		if i, ok := at[pi.ID]; ok {
			out[i].Addrs = append(out[i].Addrs, pi.Addrs...)
			continue
		}
		at[pi.ID] = len(out)
		out = append(out, *pi)
	}
	return out
}

// discovery is a node's DHT and the loops that advertise and look up
// spaces.
type discovery struct {
	n   *Node
	cfg Discovery
	dht *dht.IpfsDHT
	rd  *drouting.RoutingDiscovery

	mu         gosync.Mutex
	advertised map[string]context.CancelFunc
	found      map[string][]peer.ID // providers last found per space, for Found
}

// startDiscovery starts the DHT, when there are bootstrap peers, and its
// loop.
func (n *Node) startDiscovery(ctx context.Context) error {
	cfg := n.cfg.Discovery.withDefaults()
	if len(cfg.Bootstrap) == 0 {
		return nil
	}
	boot := addrInfos(cfg.Bootstrap)
	mode := dht.ModeAuto
	if cfg.Server {
		mode = dht.ModeServer
	}
	kad, err := dht.New(n.host, dht.ProtocolPrefix(DHTPrefix), dht.Mode(mode), dht.DisableValues(),
		dht.BootstrapPeers(boot...))
	if err != nil {
		return fmt.Errorf("sync: dht: %w", err)
	}
	d := &discovery{n: n, cfg: cfg, dht: kad, rd: drouting.NewRoutingDiscovery(kad),
		advertised: map[string]context.CancelFunc{}, found: map[string][]peer.ID{}}
	n.disc = d
	n.dhtReady.Store(kad)
	for _, pi := range boot {
		if err := n.host.Connect(ctx, pi); err != nil {
			n.log.Debug("bootstrap", "peer", pi.ID, "err", err)
		}
	}
	if err := kad.Bootstrap(n.ctx); err != nil {
		n.log.Debug("dht bootstrap", "err", err)
	}
	n.wg.Add(1)
	go d.loop()
	return nil
}

// loop advertises and looks up every space Space allows, once the routing
// table has a peer, and then every FindEvery (sooner while a space has no
// provider connected).
func (d *discovery) loop() {
	defer d.n.wg.Done()
	// A lookup before the routing table holds a peer finds nothing: wait
	// a little for the bootstrap peers' identify.
	for i := 0; i < 50 && d.dht.RoutingTable().Size() == 0; i++ {
		select {
		case <-d.n.ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	wait, lonelyWait := time.Duration(0), time.Second
	for {
		select {
		case <-d.n.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = d.cfg.FindEvery
		if d.round() {
			// Some space has no provider connected yet: look again
			// soon, backing off to FindEvery.
			wait, lonelyWait = min(wait, lonelyWait), min(2*lonelyWait, time.Minute)
		} else {
			lonelyWait = time.Second
		}
	}
}

// round advertises the allowed spaces not yet advertised, stops those no
// longer allowed, and looks up providers of each, dialling those not
// connected. It reports whether some allowed space has no connected
// provider.
func (d *discovery) round() (lonely bool) {
	allowed := map[string]bool{}
	if d.cfg.Space != nil {
		for _, s := range d.n.Spaces() {
			if d.cfg.Space(s) {
				allowed[s] = true
			}
		}
	}
	d.mu.Lock()
	for s, stop := range d.advertised {
		if !allowed[s] {
			stop()
			delete(d.advertised, s)
		}
	}
	for s := range allowed {
		if _, ok := d.advertised[s]; !ok {
			ctx, stop := context.WithCancel(d.n.ctx)
			d.advertised[s] = stop
			d.n.wg.Add(1)
			go d.advertise(ctx, s)
		}
	}
	d.mu.Unlock()
	if d.cfg.advertiseOnly {
		return false
	}
	for s := range allowed {
		if !d.find(s) {
			lonely = true
		}
	}
	return lonely
}

// advertise publishes the node as a provider of space and re-publishes it
// at 7/8 of the TTL routing discovery answers (as libp2p's
// discovery/util.Advertise does), retrying soon while the DHT has no peer.
func (d *discovery) advertise(ctx context.Context, space string) {
	defer d.n.wg.Done()
	retry := time.Second
	for {
		ttl, err := d.rd.Advertise(ctx, SpaceNamespace+space)
		wait := 7 * ttl / 8
		if err != nil {
			d.n.log.Debug("dht advertise", "space", space, "err", err)
			wait, retry = retry, min(2*retry, time.Minute)
		} else {
			retry = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// find looks up space's providers and dials those not connected, directly
// or, failing that, through each known relay. It reports whether some
// provider is connected at the end.
func (d *discovery) find(space string) bool {
	n := d.n
	ctx, cancel := context.WithTimeout(n.ctx, 30*time.Second)
	defer cancel()
	ch, err := d.rd.FindPeers(ctx, SpaceNamespace+space)
	if err != nil {
		n.log.Debug("dht find", "space", space, "err", err)
		return false
	}
	var ids []peer.ID
	connected := false
	for pi := range ch {
		if pi.ID == n.host.ID() || pi.ID == "" {
			continue
		}
		ids = append(ids, pi.ID)
		if n.host.Network().Connectedness(pi.ID) == network.Connected {
			connected = true
			continue
		}
		if n.dialFound(ctx, pi) {
			connected = true
			for _, s := range n.Spaces() {
				n.schedule(pi.ID, s)
			}
		}
	}
	d.mu.Lock()
	d.found[space] = ids
	d.mu.Unlock()
	return connected
}

// dialFound connects to a peer found in the DHT: at the addresses its
// record carries, else through each relay the node knows. Either may give
// a relayed connection, which hole punching upgrades only if this host
// already speaks DCUtR when it is made: a host a peer has observed at a
// public address first waits (up to DirectWait) until it does
// (holepunch.go).
func (n *Node) dialFound(ctx context.Context, pi peer.AddrInfo) bool {
	n.awaitHolePunch(ctx, n.cfg.Discovery.withDefaults().DirectWait)
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := n.host.Connect(dctx, pi)
	cancel()
	if err == nil {
		return true
	}
	n.log.Debug("dial found", "peer", pi.ID, "err", err)
	for _, r := range n.knownRelays() {
		a, err := ma.NewMultiaddr(fmt.Sprintf("/p2p/%s/p2p-circuit/p2p/%s", r, pi.ID))
		if err != nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = n.host.Connect(rctx, peer.AddrInfo{ID: pi.ID, Addrs: []ma.Multiaddr{a}})
		cancel()
		if err == nil {
			return true
		}
		n.log.Debug("dial via relay", "peer", pi.ID, "relay", r, "err", err)
	}
	return false
}

// Found returns the providers the DHT gave for space at the last lookup
// (none when the DHT is off or the space is not discovered).
func (n *Node) Found(space string) []peer.ID {
	if n.disc == nil {
		return nil
	}
	n.disc.mu.Lock()
	defer n.disc.mu.Unlock()
	return slices.Clone(n.disc.found[space])
}

// DHTMode returns "server" or "client" as the node's DHT runs now, or ""
// when it has none.
func (n *Node) DHTMode() string {
	if n.disc == nil {
		return ""
	}
	if n.disc.dht.Mode() == dht.ModeServer {
		return "server"
	}
	return "client"
}

func (d *discovery) close() error {
	return d.dht.Close()
}
