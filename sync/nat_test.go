package sync_test

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/marcopolo/simnet"
	ma "github.com/multiformats/go-multiaddr"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// fixedSource answers quicreuse's question "which local IP reaches this
// destination" with the one address a simulated host has.
type fixedSource struct{ ip net.IP }

func (f fixedSource) PreferredSourceIPForDestination(*net.UDPAddr) (net.IP, error) {
	return f.ip, nil
}

// onSimnet makes a host's QUIC run over simnet's simulated UDP, through
// router, at addr. Public hosts take packets from anyone; the others only
// from addresses they have sent to (simnet's firewall: a NAT's filtering
// without its translation, as go-libp2p's hole punching tests use it).
func onSimnet(router *simnet.SimpleFirewallRouter, addr *net.UDPAddr, public bool) libp2p.Option {
	return libp2p.QUICReuse(quicreuse.NewConnManager,
		quicreuse.OverrideSourceIPSelector(func() (quicreuse.SourceIPSelector, error) {
			return fixedSource{addr.IP}, nil
		}),
		quicreuse.OverrideListenUDP(func(_ string, a *net.UDPAddr) (net.PacketConn, error) {
			if public {
				router.SetAddrPubliclyReachable(a)
			}
			c := simnet.NewSimConn(a)
			c.SetUpPacketReceiver(router)
			router.AddNode(a, c)
			return c, nil
		}))
}

// TestNATPeersMeetBySpaceAndHolePunch: a relay on a public address, two
// nodes behind firewalls that drop unsolicited packets, given only the
// space id and the relay as bootstrap and relay. The one that lacks the
// space finds the other as a provider of the space in the witan DHT,
// connects through the relay, DCUtR upgrades the connection to a direct
// one, and the pull runs there to equal heads. a, which holds the space,
// only advertises it: were it to look for other providers too, it could
// find b and dial it just as b dials it, and simnet's firewall lets that
// simultaneous dial through like a hole punch, without a relay or DCUtR
// (a plain direct connection that proves nothing about hole punching).
func TestNATPeersMeetBySpaceAndHolePunch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	router := &simnet.SimpleFirewallRouter{}
	const n = 1
	relayAddr := &net.UDPAddr{IP: net.IPv4(1, 2, 0, n), Port: 4001}
	relay, err := ws.NewRelay(ctx, ws.RelayConfig{
		ListenAddrs: []string{"/ip4/" + relayAddr.IP.String() + "/udp/4001/quic-v1"},
		HostOptions: []libp2p.Option{onSimnet(router, relayAddr, true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	boot := relay.Addrs()[0]

	src, space := build(t, 300)
	dst := synctest.NewMem(synctest.Options{})
	start := func(r *synctest.Replica, ip net.IP, join []string, disc ws.Discovery, log *slog.Logger) *ws.Node {
		a := &net.UDPAddr{IP: ip, Port: 8000}
		disc.Bootstrap = []string{boot}
		disc.Space = func(string) bool { return true }
		disc.Reachability = "private"
		n, err := ws.NewNode(ctx, r, ws.Config{
			ListenAddrs: []string{"/ip4/" + ip.String() + "/udp/8000/quic-v1"},
			Spaces:      join,
			Interval:    time.Second,
			Logger:      log,
			Discovery:   disc,
			HostOptions: []libp2p.Option{onSimnet(router, a, false)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// a only advertises the space: b is the one that finds and dials.
	// b waits for a direct connection longer than the test runs, so that
	// only a hole-punched connection can bring it the space, and its log
	// shows any sync stream opened through the relay all the same.
	a := start(src, net.IPv4(2, 2, 0, n), nil, ws.AdvertiseOnly(ws.Discovery{}), nil)
	defer a.Close()
	// a's relayed address is what witan up prints and what b dials
	// through; once the hole punch has given a direct connection, a may
	// stop advertising it, and b may have caught up before the probe below
	// is done: it is looked for from a's start until b has caught up.
	// It must come before autorelay's second ask for relays (30 s after
	// the first): a first ask that found none (as when it came before the
	// node existed) left b dialling a in vain for half a minute.
	var relayedAfter atomic.Int64
	startedA := time.Now()
	watch, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watch.Err() == nil {
			if len(a.RelayAddrs()) > 0 {
				relayedAfter.Store(int64(time.Since(startedA)))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	defer func() { stopWatch(); <-watched }()
	bLog := &lineLog{}
	b := start(dst, net.IPv4(3, 3, 0, n), []string{space}, ws.Discovery{FindEvery: time.Second, DirectWait: time.Hour}, slog.New(bLog))
	defer b.Close()

	// A host behind no relay cannot reach a: simnet's firewall drops it.
	probeAddr := &net.UDPAddr{IP: net.IPv4(4, 4, 0, n), Port: 8000}
	probe, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/"+probeAddr.IP.String()+"/udp/8000/quic-v1"), onSimnet(router, probeAddr, false))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	direct := peer.AddrInfo{ID: a.ID()}
	for _, ad := range a.Host().Addrs() {
		if _, err := ad.ValueForProtocol(ma.P_CIRCUIT); err != nil {
			direct.Addrs = append(direct.Addrs, ad)
		}
	}
	err = probe.Connect(dctx, direct)
	dcancel()
	if err == nil {
		t.Fatal("a direct dial through the firewall succeeded; the test would prove nothing")
	}

	began := time.Now()
	for !sameHeads(t, space, src, dst) {
		if ctx.Err() != nil {
			t.Fatalf("not converged: found %v, conns %+v; b's log:\n%s", b.Found(space), b.Conns(a.ID()), bLog)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopWatch()
	<-watched
	// A pull over the relayed connection starts only after DirectWait
	// (an hour for b) without a direct one, and says so in b's log:
	// converging within the test, with no such line, means the entries
	// came over the direct connection. (Timing the convergence against
	// DirectWait instead failed on a loaded machine, where discovery, the
	// hole punch and the pull can take longer than DefaultDirectWait.)
	if bLog.has("sync over relay") {
		t.Fatal("b opened a sync stream through the relay: the pull waited for no direct connection")
	}
	t.Logf("converged %v after the probe", time.Since(began).Round(time.Millisecond))
	if n := count(t, dst, space); n != 301 {
		t.Fatalf("dst holds %d entries, want 301", n)
	}
	if !slices.Contains(b.Found(space), a.ID()) {
		t.Fatalf("b did not find a in the DHT: found %v", b.Found(space))
	}
	if found := a.Found(space); len(found) > 0 {
		t.Fatalf("a, which only advertises, found %v", found)
	}
	// The connection that stays is a hole-punched one; the relayed one
	// may still be open beside it.
	var kinds []string
	for _, c := range b.Conns(a.ID()) {
		kinds = append(kinds, c.Kind)
	}
	if !slices.Contains(kinds, ws.ConnHolePunched) {
		t.Fatalf("b's connections to a: %+v, want one DCUtR made; a's to b: %+v", b.Conns(a.ID()), a.Conns(b.ID()))
	}
	t.Logf("b's connections to a: %v", kinds)
	switch after := time.Duration(relayedAfter.Load()); {
	case after == 0 && len(a.RelayAddrs()) == 0:
		t.Fatalf("a had no relayed address (what witan up prints) while b caught up: %v", a.Addrs())
	case after > 20*time.Second:
		t.Fatalf("a had a relayed address only %v after its start", after)
	}
	if b.DHTMode() != "client" || a.Reachability() != "private" {
		t.Fatalf("dht mode %q, reachability %q: want client, private", b.DHTMode(), a.Reachability())
	}
}

// lineLog is a slog.Handler that keeps the message of every record, so
// that a test can tell which way a node went, and a line with its time
// and attributes for a failure's report.
type lineLog struct {
	mu    gosync.Mutex
	msgs  []string
	lines []string
}

func (l *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *lineLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	line := r.Time.Format("15:04:05.000") + " " + r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	l.lines = append(l.lines, line)
	return nil
}
func (l *lineLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lineLog) WithGroup(string) slog.Handler      { return l }

// String is the log's records, one a line, with their times and attributes.
func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *lineLog) has(msg string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.msgs, msg)
}

// relayOnly refuses every connection between two peers that is not
// relayed: their NATs are symmetric, so hole punching fails and the relay
// is all they have.
type relayOnly struct{ a, b *peer.ID }

func (g relayOnly) pair(p peer.ID) bool            { return p == *g.a || p == *g.b }
func (g relayOnly) InterceptPeerDial(peer.ID) bool { return true }
func (g relayOnly) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return !g.pair(p) || err == nil
}
func (g relayOnly) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g relayOnly) InterceptSecured(_ network.Direction, p peer.ID, c network.ConnMultiaddrs) bool {
	_, err := c.RemoteMultiaddr().ValueForProtocol(ma.P_CIRCUIT)
	return !g.pair(p) || err == nil
}
func (g relayOnly) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

// TestRelayLimitCutsResume: two peers that only a relay joins, and a relay
// that resets each relayed connection after 64 KiB each way, far less than
// the space. Pulls run over the relayed connection after waiting in vain
// for a direct one; each cut keeps what it ingested, and the next pull, on
// the next relayed connection, resumes there: the replicas converge, with
// no peer banned for the cuts.
func TestRelayLimitCutsResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	router := &simnet.SimpleFirewallRouter{}
	relayAddr := &net.UDPAddr{IP: net.IPv4(1, 2, 0, 1), Port: 4001}
	relay, err := ws.NewRelay(ctx, ws.RelayConfig{
		ListenAddrs: []string{"/ip4/1.2.0.1/udp/4001/quic-v1"},
		Data:        64 << 10,
		HostOptions: []libp2p.Option{onSimnet(router, relayAddr, true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	boot := relay.Addrs()[0]

	src, space := build(t, 800)
	dst := synctest.NewMem(synctest.Options{})
	var idA, idB peer.ID
	gate := relayOnly{&idA, &idB}
	var mu gosync.Mutex
	cut, done := 0, 0
	onEvent := func(e ws.Event) {
		if e.Kind != ws.EventSyncDone {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Err != nil {
			cut++
		} else {
			done++
		}
	}
	start := func(r *synctest.Replica, ip net.IP, join []string, key crypto.PrivKey, eo ws.Options) *ws.Node {
		a := &net.UDPAddr{IP: ip, Port: 8000}
		n, err := ws.NewNode(ctx, r, ws.Config{
			ListenAddrs: []string{"/ip4/" + ip.String() + "/udp/8000/quic-v1"},
			Identity:    key,
			Engine:      eo,
			Spaces:      join,
			Interval:    time.Second,
			Discovery: ws.Discovery{
				Bootstrap:    []string{boot},
				Space:        func(string) bool { return true },
				FindEvery:    time.Second,
				DirectWait:   300 * time.Millisecond,
				Reachability: "private",
			},
			HostOptions: []libp2p.Option{onSimnet(router, a, false), libp2p.ConnectionGater(gate)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	keyA, _, _ := crypto.GenerateEd25519Key(nil)
	keyB, _, _ := crypto.GenerateEd25519Key(nil)
	idA, _ = peer.IDFromPrivateKey(keyA)
	idB, _ = peer.IDFromPrivateKey(keyB)
	// a answers in batches of 8 KiB, so that each relayed connection
	// carries a few before the relay cuts it (a batch larger than the
	// relay's limit would never get through: witan relay's limit is far
	// above the 1 MiB default batch).
	a := start(src, net.IPv4(2, 2, 0, 1), nil, keyA, ws.Options{MaxBatchBytes: 8 << 10})
	defer a.Close()
	b := start(dst, net.IPv4(3, 3, 0, 1), []string{space}, keyB, ws.Options{OnEvent: onEvent})
	defer b.Close()
	// Every connection b opens to a, as the transport has it: the sync
	// may converge between two looks at b.Conns below, so those looks
	// alone cannot prove that a relayed connection carried it.
	var circuits, direct int
	b.Host().Network().Notify(&network.NotifyBundle{ConnectedF: func(_ network.Network, c network.Conn) {
		if c.RemotePeer() != a.ID() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := c.RemoteMultiaddr().ValueForProtocol(ma.P_CIRCUIT); err == nil {
			circuits++
		} else {
			direct++
		}
	}})

	for !sameHeads(t, space, src, dst) {
		if ctx.Err() != nil {
			t.Fatalf("not converged: %d of 801 entries, conns %+v", count(t, dst, space), b.Conns(a.ID()))
		}
		for _, c := range b.Conns(a.ID()) {
			if c.Kind != ws.ConnRelayed {
				t.Fatalf("a connection that is not relayed: %+v", c)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := count(t, dst, space); n != 801 {
		t.Fatalf("dst holds %d entries, want 801", n)
	}
	if banned, _ := b.Engine().Banned(a.ID().String()); banned {
		t.Fatal("a was banned for the relay's cuts")
	}
	mu.Lock()
	defer mu.Unlock()
	if circuits == 0 || direct > 0 {
		t.Fatalf("b's connections to a: %d relayed, %d direct; want relayed ones only", circuits, direct)
	}
	if cut == 0 {
		t.Fatal("no pull was cut: the relay's limit was never reached, the test proves nothing")
	}
	t.Logf("%d pulls cut by the relay's limit, then %d completed", cut, done)
}
