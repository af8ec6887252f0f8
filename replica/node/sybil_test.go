package node_test

import (
	"context"
	"crypto/rand"
	"io"
	"runtime"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	ht "github.com/witan-dev/witan/replica/house/housetest"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// sybil starts a libp2p host that answers every /witan/sync/2 request
// with items (validly signed entries whose parents nobody has), then
// connects to the victim, which pulls from it. It returns the host's id.
func sybil(t testing.TB, victim *sync.Node, items []sync.Item) peer.ID {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.SetStreamHandler(protocol.ID(sync.ProtocolID), func(s network.Stream) {
		defer s.Close()
		buf := make([]byte, 64<<10)
		s.SetReadDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck
		if _, err := s.Read(buf); err != nil && err != io.EOF {
			return
		}
		frames := [][]byte{sync.Header{Entries: uint64(len(items))}.Encode()}
		for i := 0; i < len(items); i += 1000 {
			frames = append(frames, sync.EncodeBatch(items[i:min(i+1000, len(items))]))
		}
		frames = append(frames, sync.End{}.Encode())
		for _, f := range frames {
			if sync.WriteFrame(s, f) != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Connect(ctx, peer.AddrInfo{ID: victim.ID(), Addrs: victim.Host().Addrs()}); err != nil {
		t.Fatal(err)
	}
	return h.ID()
}

func randomID() dag.ID {
	var d [32]byte
	rand.Read(d[:]) //nolint:errcheck // never fails
	return dag.IDFromDigest(d)
}

// TestSybilOrphansBounded: many peer ids each send entries of the
// victim's session whose parents nobody has. The entries pending at the
// victim stay within its bounds (the oldest removed from the store), and
// an honest peer's pull, during and after the flood, takes one round
// trip: pending entries are not in the victim's filter, and it asks a
// peer only for the parents of what that peer sent. On 9f8fa68 every
// orphan stayed, entered every filter, and the honest pull took
// MaxRounds (8) rounds asking for the orphans' parents.
func TestSybilOrphansBounded(t *testing.T) {
	sybils, per := 12, 400
	if testing.Short() {
		sybils, per = 6, 300
	}
	const perSpace = 1000
	ctx := context.Background()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	space := b.Session.String()

	victimNode, err := node.Open(ctx, node.Options{InMemory: true, Replica: replica.Options{PendingPerSpace: perSpace}})
	if err != nil {
		t.Fatal(err)
	}
	defer victimNode.Close()
	honestNode, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer honestNode.Close()
	for _, tx := range []ht.Tx{b.Create, roster} {
		for _, n := range []*node.Node{victimNode, honestNode} {
			if rc, err := n.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
				t.Fatalf("setup: %+v %v", rc, err)
			}
		}
	}
	var mu gosync.Mutex
	done := map[string][]sync.Stats{} // pulls the victim finished, per peer
	onEvent := func(ev sync.Event) {
		if ev.Kind == sync.EventSyncDone {
			mu.Lock()
			done[ev.Peer] = append(done[ev.Peer], ev.Stats)
			mu.Unlock()
		}
	}
	pulls := func(p peer.ID) []sync.Stats {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(done[p.String()])
	}
	victim, err := sync.NewNode(ctx, victimNode, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space},
		Engine: sync.Options{OnEvent: onEvent}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	honest, err := sync.NewNode(ctx, honestNode, sync.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Manual: true, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer honest.Close()

	// The orphans: key.registers by roster members, each naming a parent
	// nobody has.
	for range sybils {
		items := make([]sync.Item, per)
		for k := range items {
			tx := b.KeyRegister(ht.Member(k%4), randomID())
			items[k] = sync.Item{Data: tx.Bytes}
		}
		sybil(t, victim, items)
	}
	rep := victimNode.Replica()
	waitFor(t, 60*time.Second, "the victim's pulls from every sybil", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(done) >= sybils
	})
	ps := rep.PendingStats()
	stored, err := victimNode.Pending(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sybils × %d orphans: %d pending charged (%d sources), %d evicted, %d in the store", sybils, per, ps.Held, ps.Sources, ps.Evicted, len(stored))
	if ps.Held > perSpace || len(stored) > perSpace {
		t.Fatalf("%d pending charged, %d stored; the bound is %d per space", ps.Held, len(stored), perSpace)
	}
	if ps.Evicted == 0 {
		t.Fatalf("no orphan was evicted: the flood did not reach the bound (%+v)", ps)
	}

	// The honest peer writes 20 new entries; the victim pulls them.
	var last dag.ID = roster.ID
	for i := range 20 {
		tx := b.KeyRegister(ht.Member(10+i), last)
		if rc, err := honestNode.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("honest entry: %+v %v", rc, err)
		}
		last = tx.ID
	}
	// The victim pulls from the honest peer when it connects.
	start := time.Now()
	if err := victim.Connect(ctx, honest.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the honest entries at the victim", func() bool {
		_, err := rep.Finality(ctx, b.Session, last)
		return err == nil && len(pulls(honest.ID())) > 0
	})
	took := time.Since(start)
	for _, st := range pulls(honest.ID()) {
		t.Logf("honest pull after the flood: %d round trips, %d accepted, %d request bytes, %d response bytes; head applied %s after connecting",
			st.Rounds, st.Accepted, st.BytesOut, st.BytesIn, took)
		if st.Rounds != 1 {
			t.Fatalf("honest pull took %d round trips, want 1: %+v", st.Rounds, st)
		}
	}
}

// waitFor re-checks cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The entries a peer sends arrive as slices of one frame (up to
// sync.MaxFrame); the node keeps what it keeps of them (the replica's cache
// of pending envelopes) in copies of their own, so that a cached orphan
// does not keep its whole frame alive: orphans one to a frame, cached,
// would otherwise each hold up to a MaxFrame of heap.
func TestIngestKeepsNoFrame(t *testing.T) {
	ctx := context.Background()
	b := ht.New(ht.Options{})
	roster := b.GroupCreate(ht.Member(0), "roster", ht.Members(0, 4), ht.Members(0, 1), b.Create.ID)
	n, err := node.Open(ctx, node.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, tx := range []ht.Tx{b.Create, roster} {
		if rc, err := n.Submit(ctx, tx.Bytes, tx.Attach); err != nil || rc.Status != "accepted" {
			t.Fatalf("setup: %+v %v", rc, err)
		}
	}
	// A "frame": one allocation holding ten orphans.
	frame := new([1 << 20]byte)
	var items []sync.Item
	off := 0
	for range 10 {
		raw := b.KeyRegister(ht.Member(1), randomID()).Bytes
		copy(frame[off:], raw)
		items = append(items, sync.Item{Data: frame[off : off+len(raw) : off+len(raw)]})
		off += len(raw)
	}
	freed := make(chan struct{})
	runtime.SetFinalizer(frame, func(*[1 << 20]byte) { close(freed) })
	res, err := n.Ingest(dag.WithSource(ctx, "peer:x"), b.Session.String(), items)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Items {
		if o.Outcome != sync.Pending {
			t.Fatalf("orphan: %+v, want pending", o)
		}
	}
	frame, items = nil, nil //nolint:ineffassign,wastedassign // drop the test's references
	for range 50 {
		runtime.GC()
		select {
		case <-freed:
			if ps := n.Replica().PendingStats(); ps.Held != 10 {
				t.Fatalf("PendingStats %+v, want the 10 orphans held", ps)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the frame the orphans came in is still reachable after the Ingest")
}
