package sync

// Relay: what `witan relay` runs on a public address for a class or a
// fleet of agents: a circuit relay v2 service with limits sized for sync,
// a server of witan's DHT for nodes to bootstrap from, and AutoNAT
// services so the nodes behind NATs learn that they are. It holds no
// replica. docs/networking.md.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
)

// Defaults of RelayConfig: room for a large space's first pull over the
// relay where hole punching fails,
// for a class behind one school NAT.
const (
	DefaultRelayDuration     = 30 * time.Minute
	DefaultRelayData         = 1 << 30
	DefaultRelayReservations = 512
	DefaultRelayPerIP        = 128
	DefaultRelayCircuits     = 32
)

// RelayConfig configures a Relay. Zero fields take their defaults.
type RelayConfig struct {
	// ListenAddrs default to every interface, TCP and QUIC, port 4001.
	ListenAddrs []string
	// Identity is the relay's libp2p key; keep it so that the address
	// nodes are given stays valid. Random if nil.
	Identity crypto.PrivKey
	// Bootstrap are other witan DHT nodes (multiaddrs with /p2p/).
	Bootstrap []string
	// Duration and Data bound each relayed connection (Data in bytes, each
	// way); past either the relay resets it. libp2p's defaults (2 min,
	// 128 KiB) suit only hole punching's rendezvous; a pull that does not
	// fit resumes on the next connection.
	Duration time.Duration
	Data     int64
	// Reservations bounds the nodes holding a slot at once, PerIP those
	// behind one address (a classroom's NAT), Circuits the relayed
	// connections to one node.
	Reservations, PerIP, Circuits int
	// HostOptions are more libp2p options, applied last (tests).
	HostOptions []libp2p.Option
}

// Relay is a running relay and DHT bootstrap node. Close it when done.
type Relay struct {
	host host.Host
	dht  *dht.IpfsDHT
}

// NewRelay starts a relay.
func NewRelay(ctx context.Context, cfg RelayConfig) (*Relay, error) {
	if cfg.Duration <= 0 {
		cfg.Duration = DefaultRelayDuration
	}
	if cfg.Data <= 0 {
		cfg.Data = DefaultRelayData
	}
	if cfg.Reservations <= 0 {
		cfg.Reservations = DefaultRelayReservations
	}
	if cfg.PerIP <= 0 {
		cfg.PerIP = DefaultRelayPerIP
	}
	if cfg.Circuits <= 0 {
		cfg.Circuits = DefaultRelayCircuits
	}
	if len(cfg.ListenAddrs) == 0 {
		cfg.ListenAddrs = []string{"/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"}
	}
	for _, a := range cfg.Bootstrap {
		if err := CheckPeerAddr(a); err != nil {
			return nil, err
		}
	}
	res := relayv2.DefaultResources()
	res.Limit = &relayv2.RelayLimit{Duration: cfg.Duration, Data: cfg.Data}
	res.MaxReservations = cfg.Reservations
	res.MaxReservationsPerIP = cfg.PerIP
	res.MaxReservationsPerASN = cfg.Reservations
	res.MaxCircuits = cfg.Circuits
	res.BufferSize = 64 << 10
	rm, err := resourceManager(Limits{})
	if err != nil {
		return nil, fmt.Errorf("sync: resource manager: %w", err)
	}
	opts := []libp2p.Option{
		libp2p.ListenAddrStrings(cfg.ListenAddrs...),
		libp2p.ResourceManager(rm),
		libp2p.ForceReachabilityPublic(),
		libp2p.EnableRelayService(relayv2.WithResources(res)),
		libp2p.EnableNATService(),
		libp2p.EnableAutoNATv2(),
	}
	if cfg.Identity != nil {
		opts = append(opts, libp2p.Identity(cfg.Identity))
	}
	h, err := libp2p.New(append(opts, cfg.HostOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("sync: libp2p host: %w", err)
	}
	kad, err := dht.New(h, dht.ProtocolPrefix(DHTPrefix), dht.Mode(dht.ModeServer), dht.DisableValues(),
		dht.BootstrapPeers(addrInfos(cfg.Bootstrap)...))
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("sync: dht: %w", err)
	}
	for _, pi := range addrInfos(cfg.Bootstrap) {
		h.Connect(ctx, pi) //nolint:errcheck // the DHT retries its bootstrap peers
	}
	if err := kad.Bootstrap(ctx); err != nil {
		kad.Close()
		h.Close()
		return nil, fmt.Errorf("sync: dht bootstrap: %w", err)
	}
	return &Relay{host: h, dht: kad}, nil
}

// Host returns the relay's libp2p host.
func (r *Relay) Host() host.Host { return r.host }

// Addrs returns the relay's addresses, each with its /p2p/ part: what
// nodes are given as -bootstrap.
func (r *Relay) Addrs() []string {
	var out []string
	for _, a := range r.host.Addrs() {
		out = append(out, fmt.Sprintf("%s/p2p/%s", a, r.host.ID()))
	}
	return out
}

// Close stops the relay.
func (r *Relay) Close() error {
	return errors.Join(r.dht.Close(), r.host.Close())
}
