package sync_test

import (
	"context"
	"fmt"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// waitFor re-checks cond until it holds or the deadline passes. It is how
// tests wait for convergence: on a condition, never on a fixed sleep.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("no %s within %s", what, d)
		case <-tick.C:
		}
	}
}

// partition decides which peers may talk: peers in different groups may
// not. Group 0 talks to everyone.
type partition struct {
	mu    gosync.Mutex
	group map[peer.ID]int
}

func (p *partition) set(g map[peer.ID]int) { p.mu.Lock(); p.group = g; p.mu.Unlock() }
func (p *partition) allow(a, b peer.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ga, gb := p.group[a], p.group[b]
	return ga == 0 || gb == 0 || ga == gb
}

type cluster struct {
	nodes    []*ws.Node
	replicas []*synctest.Replica
	ids      []peer.ID
	part     *partition
	space    string
}

// newCluster starts n nodes on loopback (TCP for even ones, QUIC for odd
// ones), each configured with the addresses of the two before it, all in
// one space whose root replica 0 holds.
func newCluster(t testing.TB, n int) *cluster { return newClusterWith(t, n, nil) }

// newClusterWith is newCluster with tune applied to every node's Config.
func newClusterWith(t testing.TB, n int, tune func(*ws.Config)) *cluster {
	t.Helper()
	ctx := context.Background()
	c := &cluster{part: &partition{}}
	root := synctest.NewAuthor(200)
	space, data, _ := root.Session("cluster")
	c.space = space
	keys := make([]crypto.PrivKey, n)
	for i := range keys {
		k, _, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
		id, _ := peer.IDFromPrivateKey(k)
		c.ids = append(c.ids, id)
	}
	for i := 0; i < n; i++ {
		r := synctest.NewMem(synctest.Options{})
		if i == 0 {
			if _, err := r.Submit(ctx, data); err != nil {
				t.Fatal(err)
			}
		}
		listen := "/ip4/127.0.0.1/tcp/0"
		if i%2 == 1 {
			listen = "/ip4/127.0.0.1/udp/0/quic-v1"
		}
		var peers []string
		for j := max(0, i-2); j < i; j++ {
			peers = append(peers, c.nodes[j].Addrs()[0])
		}
		self := c.ids[i]
		cfg := ws.Config{
			ListenAddrs: []string{listen},
			Identity:    keys[i],
			Peers:       peers,
			Spaces:      []string{space},
			Debounce:    20 * time.Millisecond,
			Interval:    300 * time.Millisecond,
			Allow:       func(p peer.ID) bool { return c.part.allow(self, p) },
		}
		if tune != nil {
			tune(&cfg)
		}
		node, err := ws.NewNode(ctx, r, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { node.Close() })
		c.nodes = append(c.nodes, node)
		c.replicas = append(c.replicas, r)
	}
	return c
}

func (c *cluster) converged(t testing.TB, idx ...int) bool {
	rs := c.replicas
	if len(idx) > 0 {
		rs = nil
		for _, i := range idx {
			rs = append(rs, c.replicas[i])
		}
	}
	return sameHeads(t, c.space, rs...) && slices.Equal(logSet(t, rs[0], c.space), logSet(t, rs[len(rs)-1], c.space))
}

func logSet(t testing.TB, r *synctest.Replica, space string) []string {
	ids, err := r.Log(context.Background(), space, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	slices.Sort(out)
	return out
}

func TestNodesConvergeOverLibp2p(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	c := newCluster(t, 5)
	waitFor(t, 20*time.Second, "root everywhere", func() bool { return c.converged(t) })
	// Everyone writes at once, on its own heads.
	var wg gosync.WaitGroup
	for i, r := range c.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := synctest.NewAuthor(byte(i + 1))
			if _, err := a.Write(context.Background(), r, c.space, 30); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waitFor(t, 30*time.Second, "convergence", func() bool {
		return c.converged(t) && count(t, c.replicas[0], c.space) == 1+5*30
	})
	// A node may send nothing itself: when peers pulled its writes
	// before its debounce ended and announced them, its own announcement
	// would repeat theirs and is skipped (Announcer.Derived). The cluster
	// as a whole announced, and nobody dropped an announcement.
	sent := uint64(0)
	for _, n := range c.nodes {
		st := n.Stats()
		sent += st.Sent
		if st.Dropped != 0 {
			t.Errorf("gossip stats %+v", st)
		}
	}
	if sent == 0 {
		t.Error("no node sent an announcement")
	}
}

func TestPartitionAndHeal(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	c := newCluster(t, 6)
	waitFor(t, 20*time.Second, "root everywhere", func() bool { return c.converged(t) })
	groups := map[peer.ID]int{}
	for i, id := range c.ids {
		groups[id] = 1 + i/3 // {0,1,2} | {3,4,5}
	}
	c.part.set(groups)
	for i, n := range c.nodes {
		for j, id := range c.ids {
			if i/3 != j/3 {
				n.Disconnect(id)
			}
		}
	}
	ctx := context.Background()
	for i, r := range c.replicas {
		if _, err := synctest.NewAuthor(byte(i+1)).Write(ctx, r, c.space, 10); err != nil {
			t.Fatal(err)
		}
	}
	// Each side converges on its own; the sides differ.
	waitFor(t, 20*time.Second, "convergence within the sides", func() bool {
		return c.converged(t, 0, 1, 2) && c.converged(t, 3, 4, 5)
	})
	if c.converged(t) {
		t.Fatal("the partition leaked")
	}
	c.part.set(nil)
	// Healing needs nothing but the configured peers being redialled.
	waitFor(t, 30*time.Second, "convergence after healing", func() bool {
		return c.converged(t) && count(t, c.replicas[0], c.space) == 1+6*10
	})
}

func ExampleNode() {
	ctx := context.Background()
	author := synctest.NewAuthor(1)
	space, root, _ := author.Session("example")

	alice := synctest.NewMem(synctest.Options{})
	alice.Submit(ctx, root)
	author.Write(ctx, alice, space, 100)
	a, err := ws.NewNode(ctx, alice, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		panic(err)
	}
	defer a.Close()

	bob := synctest.NewMem(synctest.Options{})
	// Bob joins no space yet, so connecting starts no pull of its own.
	b, err := ws.NewNode(ctx, bob, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	if err := b.Connect(ctx, a.Addrs()[0]); err != nil {
		panic(err)
	}
	st, err := b.SyncWith(ctx, a.ID(), space)
	if err != nil {
		panic(err)
	}
	fmt.Println("round trips:", st.Rounds, "entries:", st.Accepted)
	// Output: round trips: 1 entries: 101
}

// BenchmarkHealTenReplicas: ten replicas split in two halves, each half
// writing 10 entries per replica; the time from healing (every replica
// redials its configured peers at once) to identical heads everywhere.
func BenchmarkHealTenReplicas(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := newCluster(b, 10)
		waitFor(b, 30*time.Second, "root everywhere", func() bool { return c.converged(b) })
		groups := map[peer.ID]int{}
		for j, id := range c.ids {
			groups[id] = 1 + j/5
		}
		c.part.set(groups)
		for j, n := range c.nodes {
			for k, id := range c.ids {
				if j/5 != k/5 {
					n.Disconnect(id)
				}
			}
		}
		for j, r := range c.replicas {
			if _, err := synctest.NewAuthor(byte(j+1)).Write(context.Background(), r, c.space, 10); err != nil {
				b.Fatal(err)
			}
		}
		waitFor(b, 30*time.Second, "convergence within the halves", func() bool {
			return c.converged(b, 0, 1, 2, 3, 4) && c.converged(b, 5, 6, 7, 8, 9)
		})
		b.StartTimer()
		c.part.set(nil)
		c.nodes[5].Connect(context.Background(), c.nodes[4].Addrs()[0])
		c.nodes[6].Connect(context.Background(), c.nodes[4].Addrs()[0])
		waitFor(b, 60*time.Second, "convergence after healing", func() bool {
			return c.converged(b) && count(b, c.replicas[0], c.space) == 101
		})
		b.StopTimer()
		for _, n := range c.nodes {
			n.Close()
		}
	}
}
