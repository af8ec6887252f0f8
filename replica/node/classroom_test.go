package node_test

// The classroom: real nodes (node.Node, gossipsub, /witan/sync/2 over
// QUIC) in one process, on a simulated Wi-Fi (github.com/marcopolo/simnet's
// packet connections behind a router of our own): every packet takes a
// latency of its pair of laptops (20–80 ms one way), may be lost, and
// takes its turn on one shared channel of a given rate, twice (to the
// access point and from it). TestClassroom checks, at a small size, that
// the class converges; TestClassroomScale (WITAN_CLASSROOM=30) measures.

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/marcopolo/simnet"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// wifi is the classroom's air: a router that loses, delays and
// serialises packets.
type wifi struct {
	router simnet.VariableLatencyRouter
	wg     gosync.WaitGroup
	stop   chan struct{}

	mu     gosync.Mutex
	rng    *rand.Rand
	loss   float64
	bps    float64       // the channel's rate, bits per second
	minLat time.Duration // one way
	maxLat time.Duration
	free   time.Time // when the channel is next free
	sent   map[string]int64
	recv   map[string]int64 // by destination
	lost   int64
	// backlog is the longest the channel's queue was, in time on the
	// air, since it was last read (maxBacklog).
	backlog time.Duration
	// cut, if set, drops every packet between two laptops it names (by
	// IP): a partition of the room.
	cut func(from, to string) bool
}

func newWiFi(seed uint64, loss float64, mbps float64) *wifi {
	w := &wifi{stop: make(chan struct{}), rng: rand.New(rand.NewPCG(seed, 1)), loss: loss, bps: mbps * 1e6,
		minLat: 20 * time.Millisecond, maxLat: 80 * time.Millisecond, sent: map[string]int64{}, recv: map[string]int64{}}
	w.router.CloseSignal = w.stop
	w.router.LatencyFunc = w.latency
	w.router.Start(&w.wg)
	return w
}

func (w *wifi) close() {
	close(w.stop)
	w.wg.Wait()
}

func ipOf(a net.Addr) string {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.IP.String()
	}
	return a.String()
}

// RecvPacket takes a packet a laptop sends: counted, perhaps lost, else
// routed after its latency.
func (w *wifi) RecvPacket(p *simnet.Packet) {
	w.mu.Lock()
	w.sent[ipOf(p.From)] += int64(simPacketLen(p) + wifiHeader)
	w.recv[ipOf(p.To)] += int64(simPacketLen(p) + wifiHeader)
	drop := w.rng.Float64() < w.loss || (w.cut != nil && w.cut(ipOf(p.From), ipOf(p.To)))
	if drop {
		w.lost++
	}
	w.mu.Unlock()
	if !drop {
		w.router.RecvPacket(p)
	}
}

// simPacketLen is the datagram's size. simnet keeps a packet's bytes
// unexported; reflection reads their length (the version is go.mod's).
func simPacketLen(p *simnet.Packet) int {
	return reflect.ValueOf(p).Elem().FieldByName("buf").Len()
}

func (w *wifi) pairLatency(a, b net.Addr) time.Duration {
	x, y := ipOf(a), ipOf(b)
	if x > y {
		x, y = y, x
	}
	h := fnv.New64a()
	h.Write([]byte(x + "|" + y))
	span := int64(w.maxLat - w.minLat)
	return w.minLat + time.Duration(int64(h.Sum64()%uint64(span+1)))
}

func (w *wifi) latency(p *simnet.Packet) time.Duration {
	size := simPacketLen(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	start := now
	if w.free.After(start) {
		start = w.free
	}
	// Twice on the air: to the access point, and from it.
	air := time.Duration(float64(2*(size+wifiHeader)*8) / w.bps * float64(time.Second))
	w.free = start.Add(air)
	w.backlog = max(w.backlog, w.free.Sub(now))
	return w.free.Sub(now) + w.pairLatency(p.From, p.To)
}

// wifiHeader is what 802.11, IP and UDP add to each datagram.
const wifiHeader = 60

// maxBacklog returns the longest queue since the last call, in time on
// the air, and starts again.
func (w *wifi) maxBacklog() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.backlog
	w.backlog = 0
	return b
}

func (w *wifi) bytesSent() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps(w.sent)
}

func maps(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fixedSrc answers quicreuse's question "which local IP reaches this
// destination" with the laptop's one address.
type fixedSrc struct{ ip net.IP }

func (f fixedSrc) PreferredSourceIPForDestination(*net.UDPAddr) (net.IP, error) { return f.ip, nil }

func (w *wifi) option(addr *net.UDPAddr) libp2p.Option {
	return libp2p.QUICReuse(quicreuse.NewConnManager,
		quicreuse.OverrideSourceIPSelector(func() (quicreuse.SourceIPSelector, error) {
			return fixedSrc{addr.IP}, nil
		}),
		quicreuse.OverrideListenUDP(func(_ string, a *net.UDPAddr) (net.PacketConn, error) {
			c := simnet.NewSimConn(a)
			c.SetUpPacketReceiver(w)
			w.router.AddNode(a, c)
			return c, nil
		}))
}

// laptop is one student's node.
type laptop struct {
	n    *node.Node
	ip   net.IP
	id   peer.ID
	addr string
}

type classroom struct {
	t       testing.TB
	air     *wifi
	laptops []*laptop
	// bw counts every laptop's stream bytes by protocol (no transport
	// overhead): what the air's bytes are made of.
	bw *metrics.BandwidthCounter
	// tune, if set, changes each laptop's options.
	tune func(*node.Options)
}

func (c *classroom) open(ctx context.Context, i int, dial []*laptop) *laptop {
	c.t.Helper()
	ip := net.IPv4(10, 1, byte(i/200), byte(i%200+1))
	key, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		c.t.Fatal(err)
	}
	id, _ := peer.IDFromPrivateKey(key)
	listen := fmt.Sprintf("/ip4/%s/udp/4001/quic-v1", ip)
	var peers []string
	for _, l := range dial {
		peers = append(peers, l.addr)
	}
	cfg := sync.Config{ListenAddrs: []string{listen}, Identity: key, Peers: peers,
		HostOptions: []libp2p.Option{c.air.option(&net.UDPAddr{IP: ip, Port: 4001}), libp2p.BandwidthReporter(c.bw)}}
	o := node.Options{InMemory: true, Sync: &cfg}
	if c.tune != nil {
		c.tune(&o)
	}
	n, err := node.Open(ctx, o)
	if err != nil {
		c.t.Fatal(err)
	}
	l := &laptop{n: n, ip: ip, id: id, addr: listen + "/p2p/" + id.String()}
	c.laptops = append(c.laptops, l)
	return l
}

func (c *classroom) close() {
	var wg gosync.WaitGroup
	for _, l := range c.laptops {
		wg.Add(1)
		go func() { defer wg.Done(); l.n.Close() }()
	}
	wg.Wait()
	c.air.close()
}

// arrivals records when each of a set of entries reached each laptop.
type arrivals struct {
	mu    gosync.Mutex
	start map[dag.ID]time.Time
	got   map[dag.ID]map[int]time.Duration
	left  atomic.Int64
	done  chan struct{}
	laps  []*laptop
}

func newArrivals(laps []*laptop) *arrivals {
	a := &arrivals{start: map[dag.ID]time.Time{}, got: map[dag.ID]map[int]time.Duration{}, done: make(chan struct{}), laps: laps}
	return a
}

// watch subscribes to every laptop's changes; each change looks for the
// awaited entries the laptop now holds.
func (a *arrivals) watch(ctx context.Context) (cancel func()) {
	var cancels []func()
	for i, l := range a.laps {
		cancels = append(cancels, l.n.Subscribe(func(string) { a.check(ctx, i) }))
	}
	return func() {
		for _, c := range cancels {
			c()
		}
	}
}

func (a *arrivals) expect(id dag.ID, at time.Time) {
	a.mu.Lock()
	a.start[id] = at
	a.got[id] = map[int]time.Duration{}
	a.mu.Unlock()
	a.left.Add(int64(len(a.laps)))
}

func (a *arrivals) check(ctx context.Context, i int) {
	now := time.Now()
	a.mu.Lock()
	var want []dag.ID
	for id, m := range a.got {
		if _, ok := m[i]; !ok {
			want = append(want, id)
		}
	}
	a.mu.Unlock()
	for _, id := range want {
		st, err := a.laps[i].n.Has(ctx, id)
		if err != nil || st == dag.Absent {
			continue
		}
		a.mu.Lock()
		if _, ok := a.got[id][i]; !ok {
			a.got[id][i] = now.Sub(a.start[id])
			if a.left.Add(-1) == 0 {
				close(a.done)
			}
		}
		a.mu.Unlock()
	}
}

// latencies returns, for each awaited entry, when the last laptop had it.
func (a *arrivals) latencies() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []time.Duration
	for _, m := range a.got {
		var worst time.Duration
		for _, d := range m {
			worst = max(worst, d)
		}
		out = append(out, worst)
	}
	slices.Sort(out)
	return out
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, (len(ds)*p+99)/100-1)]
}

// classSession is the teacher's session: a roster of every student, and
// rounds MRs open at once on the root branch.
type classSession struct {
	b     *ht.Builder
	txs   []ht.Tx
	mrs   []dag.ID
	opens []dag.ID
}

func newClassSession(students, rounds int) *classSession {
	s := &classSession{b: ht.New(ht.Options{Label: "classroom"})}
	roster := s.b.GroupCreate(ht.Member(0), "roster", ht.Members(0, students), ht.Members(0, 1), s.b.Create.ID)
	s.txs = []ht.Tx{s.b.Create, roster}
	for r := range rounds {
		open, mr := s.b.Open(ht.Member(0), ht.MR{Source: house.RootBranch, SourceHead: s.b.Genesis, TargetHead: s.b.Genesis,
			Members: ht.Members(0, students), Rule: ht.Majority(house.MinRootNotice), Summary: fmt.Sprintf("question %d", r)}, roster.ID)
		s.txs = append(s.txs, open)
		s.mrs = append(s.mrs, mr)
		s.opens = append(s.opens, open.ID)
	}
	return s
}

type classFigures struct {
	Laptops      int
	Ballots      int
	P50, P99     time.Duration
	Max          time.Duration
	IdleBytesSec float64 // per laptop
	// Heal is the time from the end of a cut (class.cut) until every
	// laptop held every ballot cast during it.
	Heal        time.Duration
	LateEntries int
	LateCatchUp time.Duration
	LateP50     time.Duration
	LateP99     time.Duration
	Lost        int64
	// VoteCPU is the process's CPU time over the voting rounds (all
	// laptops together, one process on the test machine's cores).
	VoteCPU time.Duration
	// IdleCPU is the process's CPU time over the idle window.
	IdleCPU time.Duration
}

// idleSettle is how long the class is left before its idle traffic is
// measured.
const idleSettle = 10 * time.Second

// class is what runClassroom runs: n laptops, the session on the
// teacher's (laptop 0), rounds of everyone voting at once; then idle for
// idle; then, if late > 0, a late laptop joins a session of late entries
// that the teacher and two more hold while the class votes another round.
// tune, if set, changes every laptop's options.
type class struct {
	n, rounds int
	idle      time.Duration
	late      int
	tune      func(*node.Options)
	// cut, if > 0: after the idle time, the room is cut in two halves
	// for this long while everyone votes; then it heals (heal).
	cut time.Duration
}

func runClassroom(ctx context.Context, t testing.TB, cl class) classFigures {
	n, rounds, idle, late := cl.n, cl.rounds, cl.idle, cl.late
	fig := classFigures{Laptops: n}
	c := &classroom{t: t, air: newWiFi(1, 0.02, 30), bw: metrics.NewBandwidthCounter(), tune: cl.tune}
	defer c.close()
	for i := range n {
		c.open(ctx, i, slices.Clone(c.laptops))
	}
	sess := newClassSession(n, rounds+2)
	space := sess.b.Session.String()
	for _, tx := range sess.txs {
		submit(t, c.laptops[0].n, tx)
	}
	// The students join the class by its session id.
	for _, l := range c.laptops[1:] {
		if err := l.n.Join(ctx, space); err != nil {
			t.Fatal(err)
		}
	}
	waitConverged(ctx, t, c.laptops, space)
	t.Logf("%d laptops hold the class session", n)
	memStage(t, "joined")

	vote := func(r int, laps []*laptop) []time.Duration {
		a := newArrivals(laps)
		stop := a.watch(ctx)
		defer stop()
		var ballots []ht.Tx
		for i := range laps {
			ballots = append(ballots, sess.b.Ballot(ht.Member(i), sess.mrs[r], "approve", dag.ID{}, sess.opens[r]))
		}
		var wg gosync.WaitGroup
		for i, l := range laps {
			a.expect(ballots[i].ID, time.Now())
			wg.Add(1)
			go func() {
				defer wg.Done()
				rc, err := l.n.Submit(ctx, ballots[i].Bytes, ballots[i].Attach)
				if err != nil || rc.Err() != nil {
					t.Errorf("ballot %d: %v %v", i, err, rc.Err())
				}
			}()
		}
		wg.Wait()
		for i := range laps {
			a.check(ctx, i)
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			t.Fatalf("round %d: ballots did not reach every laptop: %v", r, ctx.Err())
		}
		return a.latencies()
	}
	// gossip sums every laptop's announcement counters.
	gossip := func() (st sync.AnnounceStats) {
		for _, l := range c.laptops {
			g := l.n.Sync().Stats()
			st.Sent += g.Sent
			st.Received += g.Received
			st.Suppressed += g.Suppressed
			st.Triggered += g.Triggered
			st.InSync += g.InSync
			st.Replies += g.Replies
			st.DigestPulls += g.DigestPulls
			st.Redundant += g.Redundant
		}
		return st
	}
	var all []time.Duration
	cpu0 := cpuTime()
	for r := range rounds {
		g0 := gossip()
		lat := vote(r, c.laptops)
		g1 := gossip()
		t.Logf("round %d: %d ballots, slowest %v, p50 %v; announcements published %d, delivered %d, pulls triggered %d (for a digest %d)",
			r, len(lat), lat[len(lat)-1], pct(lat, 50), g1.Sent-g0.Sent, g1.Received-g0.Received, g1.Triggered-g0.Triggered, g1.DigestPulls-g0.DigestPulls)
		all = append(all, lat...)
	}
	fig.VoteCPU = cpuTime() - cpu0
	memStage(t, "voted")
	t.Logf("air: longest queue while voting %v", c.air.maxBacklog())
	slices.Sort(all)
	fig.Ballots, fig.P50, fig.P99, fig.Max = len(all), pct(all, 50), pct(all, 99), all[len(all)-1]

	if idle > 0 {
		// The pulls and announcements the last round set off end first.
		time.Sleep(idleSettle)
		before, cpu0, protoBefore, g0 := c.air.bytesSent(), cpuTime(), c.bw.GetBandwidthByProtocol(), gossip()
		time.Sleep(idle)
		g1 := gossip()
		t.Logf("idle: announcements published %d, delivered %d (in sync %d, answered %d), suppressed %d (redundant %d), pulls triggered %d (for a digest %d) (all laptops)",
			g1.Sent-g0.Sent, g1.Received-g0.Received, g1.InSync-g0.InSync, g1.Replies-g0.Replies, g1.Suppressed-g0.Suppressed,
			g1.Redundant-g0.Redundant, g1.Triggered-g0.Triggered, g1.DigestPulls-g0.DigestPulls)
		after := c.air.bytesSent()
		for p, st := range c.bw.GetBandwidthByProtocol() {
			if d := st.TotalOut - protoBefore[p].TotalOut; d > 0 {
				t.Logf("idle: %s sends %.0f B/s per laptop (stream bytes)", p, float64(d)/float64(n)/idle.Seconds())
			}
		}
		fig.IdleCPU = cpuTime() - cpu0
		var total int64
		for k, v := range after {
			total += v - before[k]
		}
		fig.IdleBytesSec = float64(total) / float64(n) / idle.Seconds()
		memStage(t, "idle")
	}

	if cl.cut > 0 {
		fig.Heal = heal(ctx, t, c, cl.cut, func() { vote(rounds+1, c.laptops) })
	}

	if late > 0 {
		big := ht.New(ht.Options{Label: "last term"})
		broster := big.GroupCreate(ht.Member(0), "roster", ht.Members(0, 10), ht.Members(0, 1), big.Create.ID)
		txs := []ht.Tx{big.Create, broster}
		for len(txs) < late {
			txs = append(txs, big.KeyRegister(ht.Member(1000+len(txs)), txs[len(txs)-1].ID))
		}
		bspace := big.Session.String()
		// The teacher and two students hold it.
		for _, l := range c.laptops[:min(3, n)] {
			for k := 0; k < len(txs); k += 1000 {
				var items []sync.Item
				for _, tx := range txs[k:min(k+1000, len(txs))] {
					items = append(items, sync.Item{Data: tx.Bytes, Objects: objectsOf(tx)})
				}
				res, err := l.n.Ingest(ctx, bspace, items)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range res.Items {
					if it.Outcome != sync.Accepted {
						t.Fatalf("last term's entry %s: %v %s %s", it.ID, it.Outcome, it.Code, it.Reason)
					}
				}
			}
		}
		fig.LateEntries = len(txs)
		t.Logf("last term's session (%d entries) on the teacher's laptop and two more", len(txs))
		// Each holder joined the session as it took its copy, and pulled
		// it from the holders before it: those pulls (of entries it was
		// taking anyway) are of the test's making, and would share the
		// air with the late laptop's catch-up. A class's holders had the
		// session long before.
		settle := time.Now()
		for busy := true; busy; time.Sleep(100 * time.Millisecond) {
			busy = false
			for _, l := range c.laptops {
				for _, p := range l.n.Pulls() {
					busy = busy || p.Space == bspace
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("the holders' pulls of last term's session did not end: %v", ctx.Err())
			}
		}
		t.Logf("the holders' own pulls of it ended after %v", time.Since(settle).Round(time.Millisecond))
		joiner := c.open(ctx, n, slices.Clone(c.laptops))
		// The student picks the session from those the class offers
		// (witan sessions -available, then witan join).
		for offered := false; !offered; time.Sleep(20 * time.Millisecond) {
			for _, o := range joiner.n.Available() {
				offered = offered || (o.Space == bspace && len(o.Peers) >= min(3, n))
			}
			if ctx.Err() != nil {
				t.Fatalf("the late laptop never saw last term's session offered: %v", ctx.Err())
			}
		}
		sentBefore, protoBefore := c.air.bytesSent(), c.bw.GetBandwidthByProtocol()
		c.air.mu.Lock()
		recvBefore := c.air.recv[joiner.ip.String()]
		c.air.mu.Unlock()
		start := time.Now()
		if err := joiner.n.Join(ctx, bspace); err != nil {
			t.Fatal(err)
		}
		caught := make(chan time.Duration, 1)
		watching := make(chan struct{})
		go func() {
			// Every 10 s: how far the late laptop is, its pulls, the
			// air's queue and the memory, so that a stall shows.
			tick := time.NewTicker(10 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-watching:
					return
				case <-tick.C:
				}
				var pulls []string
				for _, p := range joiner.n.Pulls() {
					pulls = append(pulls, fmt.Sprintf("%s…:%d/%d round %d", p.Peer[len(p.Peer)-6:], p.EntriesDone, p.EntriesExpected, p.Round))
				}
				t.Logf("late laptop at %v: holds %d of %d; pulls %v; longest queue on the air %v",
					time.Since(start).Round(time.Second), logLen(ctx, joiner.n, bspace), len(txs), pulls, c.air.maxBacklog())
				memStage(t, "late")
			}
		}()
		defer close(watching)
		go func() {
			want, _ := c.laptops[0].n.Heads(ctx, bspace)
			for ctx.Err() == nil {
				hs, _ := joiner.n.Heads(ctx, bspace)
				if len(hs) > 0 && slices.Equal(hs, want) {
					caught <- time.Since(start)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		lat := vote(rounds, c.laptops[:n])
		fig.LateP50, fig.LateP99 = pct(lat, 50), pct(lat, 99)
		select {
		case d := <-caught:
			fig.LateCatchUp = d
			sent := c.air.bytesSent()
			var holders []string
			var total int64
			for i, l := range c.laptops[:n] {
				d := sent[l.ip.String()] - sentBefore[l.ip.String()]
				total += d
				if i < 3 {
					holders = append(holders, fmt.Sprintf("%.1f MB", float64(d)/1e6))
				}
			}
			c.air.mu.Lock()
			got := c.air.recv[joiner.ip.String()] - recvBefore
			c.air.mu.Unlock()
			t.Logf("late laptop caught up in %v, receiving %.1f MB; the air carried %.1f MB from the class meanwhile (the three holders: %v)",
				d.Round(time.Millisecond), float64(got)/1e6, float64(total)/1e6, holders)
			for p, st := range c.bw.GetBandwidthByProtocol() {
				if d := st.TotalOut - protoBefore[p].TotalOut; d > 100_000 {
					t.Logf("while the late laptop caught up: %s streams carried %.1f MB (all laptops)", p, float64(d)/1e6)
				}
			}
		case <-ctx.Done():
			t.Fatalf("the late laptop did not catch up: %v", ctx.Err())
		}
	}
	memStage(t, "end")
	c.air.mu.Lock()
	fig.Lost = c.air.lost
	c.air.mu.Unlock()
	return fig
}

// heal cuts the room in two halves (odd and even laptops) for cut while
// vote runs (everyone casting a ballot), then heals it, and returns the
// time from the heal until vote has seen every ballot on every laptop.
func heal(ctx context.Context, t testing.TB, c *classroom, cut time.Duration, vote func()) time.Duration {
	side := map[string]int{}
	for i, l := range c.laptops {
		side[l.ip.String()] = i % 2
	}
	c.air.mu.Lock()
	c.air.cut = func(from, to string) bool { return side[from] != side[to] }
	c.air.mu.Unlock()
	done := make(chan struct{})
	go func() { defer close(done); vote() }()
	select {
	case <-time.After(cut):
	case <-done:
		t.Fatalf("every ballot reached every laptop through a cut room")
	}
	c.air.mu.Lock()
	c.air.cut = nil
	c.air.mu.Unlock()
	healed := time.Now()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the room did not heal: %v", ctx.Err())
	}
	d := time.Since(healed)
	t.Logf("cut for %v while voting; every ballot everywhere %v after the heal", cut, d.Round(time.Millisecond))
	return d
}

// memStage logs the process's memory at a stage of the run (all laptops
// together), and writes a heap profile there when WITAN_CLASSROOM_HEAP
// names a directory.
func memStage(t testing.TB, stage string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("memory %s: rss=%d MiB peak_rss=%d MiB heap_inuse=%d MiB heap_sys=%d MiB goroutines=%d",
		stage, procStatusKiB("VmRSS")>>10, procStatusKiB("VmHWM")>>10, ms.HeapInuse>>20, ms.HeapSys>>20, runtime.NumGoroutine())
	if dir := os.Getenv("WITAN_CLASSROOM_HEAP"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "heap-"+stage+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// procStatusKiB reads a field of /proc/self/status in KiB (0 where there
// is none).
func procStatusKiB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// logLen counts a space's log entries on n.
func logLen(ctx context.Context, n *node.Node, space string) int {
	total := 0
	for {
		ids, err := n.Log(ctx, space, uint64(total), 4096)
		total += len(ids)
		if err != nil || len(ids) < 4096 {
			return total
		}
	}
}

func waitConverged(ctx context.Context, t testing.TB, laps []*laptop, space string) {
	t.Helper()
	for {
		want, _ := laps[0].n.Heads(ctx, space)
		same := len(want) > 0
		for _, l := range laps[1:] {
			hs, _ := l.n.Heads(ctx, space)
			if !slices.Equal(hs, want) {
				same = false
				break
			}
		}
		if same {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the class did not converge on %s: %v", space, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (f classFigures) String() string {
	return fmt.Sprintf("classroom laptops=%d ballots=%d ballot_p50=%v ballot_p99=%v ballot_max=%v idle_bytes_laptop_sec=%.0f heal=%v late_entries=%d late_catchup=%v late_ballot_p50=%v late_ballot_p99=%v packets_lost=%d vote_cpu=%v idle_cpu=%v",
		f.Laptops, f.Ballots, f.P50.Round(time.Millisecond), f.P99.Round(time.Millisecond), f.Max.Round(time.Millisecond), f.IdleBytesSec,
		f.Heal.Round(time.Millisecond), f.LateEntries, f.LateCatchUp.Round(time.Millisecond), f.LateP50.Round(time.Millisecond), f.LateP99.Round(time.Millisecond), f.Lost,
		f.VoteCPU.Round(time.Millisecond), f.IdleCPU.Round(time.Millisecond))
}

// TestClassroom: six laptops on the simulated Wi-Fi vote at once, twice;
// every ballot reaches every laptop; a late laptop catches up on a
// session of 500 entries while the others vote again. Nothing is timed
// against a bound (a loaded machine slows every part): the deadline is
// only the test's.
func TestClassroom(t *testing.T) {
	if testing.Short() {
		t.Skip("real QUIC over a simulated Wi-Fi: not under the race detector")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fig := runClassroom(ctx, t, class{n: 6, rounds: 2, late: 500})
	if fig.Ballots != 12 || fig.LateEntries != 500 {
		t.Fatalf("%v", fig)
	}
	t.Log(fig)
}

// TestClassroomScale is the classroom benchmark: WITAN_CLASSROOM=30 runs
// 30 laptops, WITAN_CLASSROOM_ROUNDS rounds of votes (5), an idle minute
// (WITAN_CLASSROOM_IDLE) and a late laptop catching up on
// WITAN_CLASSROOM_LATE entries (100000), all within
// WITAN_CLASSROOM_DEADLINE (30m); WITAN_CLASSROOM_CUT cuts the room in
// two for that long after the idle time while everyone votes, and
// measures the heal; classTune reads the other knobs.
// WITAN_CLASSROOM_HEAP=DIR writes heap profiles at each stage there.
func TestClassroomScale(t *testing.T) {
	s := os.Getenv("WITAN_CLASSROOM")
	if s == "" {
		t.Skip("WITAN_CLASSROOM=30 runs the classroom benchmark")
	}
	n, _ := strconv.Atoi(s)
	rounds, late := 5, 100000
	if v, err := strconv.Atoi(os.Getenv("WITAN_CLASSROOM_ROUNDS")); err == nil {
		rounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("WITAN_CLASSROOM_LATE")); err == nil {
		late = v
	}
	idle := time.Minute
	if v, err := time.ParseDuration(os.Getenv("WITAN_CLASSROOM_IDLE")); err == nil {
		idle = v
	}
	deadline := 30 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("WITAN_CLASSROOM_DEADLINE")); err == nil {
		deadline = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cl := class{n: n, rounds: rounds, idle: idle, late: late, tune: classTune()}
	if v, err := time.ParseDuration(os.Getenv("WITAN_CLASSROOM_CUT")); err == nil {
		cl.cut = v
	}
	fig := runClassroom(ctx, t, cl)
	fmt.Println(fig)
}

// classTune reads the knobs of a comparison from the environment:
// WITAN_CLASSROOM_IDS=content names announcements by their content
// (sync.Config.ContentIDs), WITAN_CLASSROOM_WITNESS=off turns the periodic
// witness round off (node.Options.WitnessEvery < 0), and
// WITAN_CLASSROOM_DEFLATE=off sends plain batches (PlainBatches), and
// WITAN_CLASSROOM_CATCHUP=serial has the late laptop pull the session
// from one holder at a time (SerialCatchUp) instead of ranges of it from
// the three at once.
func classTune() func(*node.Options) {
	return func(o *node.Options) {
		if os.Getenv("WITAN_CLASSROOM_IDS") == "content" {
			o.Sync.ContentIDs = true
		}
		if os.Getenv("WITAN_CLASSROOM_WITNESS") == "off" {
			o.WitnessEvery = -1
		}
		if os.Getenv("WITAN_CLASSROOM_DEFLATE") == "off" {
			o.Sync.PlainBatches = true
		}
		if os.Getenv("WITAN_CLASSROOM_CATCHUP") == "serial" {
			o.Sync.SerialCatchUp = true
		}
	}
}

func objectsOf(tx ht.Tx) []dag.Object {
	var out []dag.Object
	for _, a := range tx.Attach {
		out = append(out, dag.Object{ID: dag.Sum(a), Data: a})
	}
	return out
}
