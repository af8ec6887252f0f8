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
	"reflect"
	"slices"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
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
	lost   int64
}

func newWiFi(seed uint64, loss float64, mbps float64) *wifi {
	w := &wifi{stop: make(chan struct{}), rng: rand.New(rand.NewPCG(seed, 1)), loss: loss, bps: mbps * 1e6,
		minLat: 20 * time.Millisecond, maxLat: 80 * time.Millisecond, sent: map[string]int64{}}
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
	drop := w.rng.Float64() < w.loss
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
	return w.free.Sub(now) + w.pairLatency(p.From, p.To)
}

// wifiHeader is what 802.11, IP and UDP add to each datagram.
const wifiHeader = 60

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
		HostOptions: []libp2p.Option{c.air.option(&net.UDPAddr{IP: ip, Port: 4001})}}
	n, err := node.Open(ctx, node.Options{InMemory: true, Sync: &cfg})
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
	LateEntries  int
	LateCatchUp  time.Duration
	LateP50      time.Duration
	LateP99      time.Duration
	Lost         int64
	// VoteCPU is the process's CPU time over the voting rounds (all
	// laptops together, one process on the test machine's cores).
	VoteCPU time.Duration
	// IdleCPU is the process's CPU time over the idle window.
	IdleCPU time.Duration
}

// runClassroom: n laptops, the session on the teacher's (laptop 0),
// rounds of everyone voting at once; then idle for idle; then, if late
// > 0, a late laptop joins a session of late entries that the teacher
// and two more hold while the class votes another round.
func runClassroom(ctx context.Context, t testing.TB, n, rounds int, idle time.Duration, late int) classFigures {
	fig := classFigures{Laptops: n}
	c := &classroom{t: t, air: newWiFi(1, 0.02, 30)}
	defer c.close()
	for i := range n {
		c.open(ctx, i, slices.Clone(c.laptops))
	}
	sess := newClassSession(n, rounds+1)
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
	var all []time.Duration
	cpu0 := cpuTime()
	for r := range rounds {
		lat := vote(r, c.laptops)
		t.Logf("round %d: %d ballots, slowest %v", r, len(lat), lat[len(lat)-1])
		all = append(all, lat...)
	}
	fig.VoteCPU = cpuTime() - cpu0
	slices.Sort(all)
	fig.Ballots, fig.P50, fig.P99, fig.Max = len(all), pct(all, 50), pct(all, 99), all[len(all)-1]

	if idle > 0 {
		before, cpu0 := c.air.bytesSent(), cpuTime()
		time.Sleep(idle)
		after := c.air.bytesSent()
		fig.IdleCPU = cpuTime() - cpu0
		var total int64
		for k, v := range after {
			total += v - before[k]
		}
		fig.IdleBytesSec = float64(total) / float64(n) / idle.Seconds()
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
		joiner := c.open(ctx, n, slices.Clone(c.laptops))
		start := time.Now()
		if err := joiner.n.Join(ctx, bspace); err != nil {
			t.Fatal(err)
		}
		caught := make(chan time.Duration, 1)
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
		case <-ctx.Done():
			t.Fatalf("the late laptop did not catch up: %v", ctx.Err())
		}
	}
	c.air.mu.Lock()
	fig.Lost = c.air.lost
	c.air.mu.Unlock()
	return fig
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
	return fmt.Sprintf("classroom laptops=%d ballots=%d ballot_p50=%v ballot_p99=%v ballot_max=%v idle_bytes_laptop_sec=%.0f late_entries=%d late_catchup=%v late_ballot_p50=%v late_ballot_p99=%v packets_lost=%d vote_cpu=%v idle_cpu=%v",
		f.Laptops, f.Ballots, f.P50.Round(time.Millisecond), f.P99.Round(time.Millisecond), f.Max.Round(time.Millisecond), f.IdleBytesSec,
		f.LateEntries, f.LateCatchUp.Round(time.Millisecond), f.LateP50.Round(time.Millisecond), f.LateP99.Round(time.Millisecond), f.Lost,
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
	fig := runClassroom(ctx, t, 6, 2, 0, 500)
	if fig.Ballots != 12 || fig.LateEntries != 500 {
		t.Fatalf("%v", fig)
	}
	t.Log(fig)
}

// TestClassroomScale is the classroom benchmark: WITAN_CLASSROOM=30 runs
// 30 laptops, WITAN_CLASSROOM_ROUNDS rounds of votes (5), an idle minute
// and a late laptop catching up on WITAN_CLASSROOM_LATE entries (100000).
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	fig := runClassroom(ctx, t, n, rounds, idle, late)
	fmt.Println(fig)
}

func objectsOf(tx ht.Tx) []dag.Object {
	var out []dag.Object
	for _, a := range tx.Attach {
		out = append(out, dag.Object{ID: dag.Sum(a), Data: a})
	}
	return out
}
