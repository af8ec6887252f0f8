package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"

	ws "github.com/witan-dev/witan/sync"
)

// gossipAttacker is a libp2p host that speaks gossipsub by hand: it takes
// the victim's gossip stream (and reads nothing of it) and writes raw
// RPCs on its own, as a hostile program written against go-libp2p would.
type gossipAttacker struct {
	h host.Host
	s network.Stream
}

func newGossipAttacker(ctx context.Context, t testing.TB, victim *ws.Node) *gossipAttacker {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.SetStreamHandler(pubsub.GossipSubID_v11, func(s network.Stream) { io.Copy(io.Discard, s) }) //nolint:errcheck
	if err := h.Connect(ctx, peer.AddrInfo{ID: victim.ID(), Addrs: victim.Host().Addrs()}); err != nil {
		t.Fatal(err)
	}
	s, err := h.NewStream(ctx, victim.ID(), pubsub.GossipSubID_v11)
	if err != nil {
		t.Fatal(err)
	}
	return &gossipAttacker{h: h, s: s}
}

// send writes one RPC, length-delimited as gossipsub frames them.
func (a *gossipAttacker) send(t testing.TB, rpc *pb.RPC) bool {
	b, err := proto.Marshal(rpc)
	if err != nil {
		t.Fatal(err)
	}
	a.s.SetWriteDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck
	_, err = a.s.Write(append(binary.AppendUvarint(nil, uint64(len(b))), b...))
	return err == nil
}

// signed is a gossip message on topic from a brand-new signing key, signed
// as gossipsub's StrictSign wants (a valid message from a new author).
func signed(t testing.TB, topic string, data []byte, seq uint64) *pb.Message {
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	m := &pb.Message{From: []byte(id), Data: data, Seqno: binary.BigEndian.AppendUint64(nil, seq), Topic: &topic}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Signature, err = priv.Sign(append([]byte(pubsub.SignPrefix), b...)); err != nil {
		t.Fatal(err)
	}
	return m
}

// liveHeap is the heap in use after two forced collections.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// hostileSize is n, or full with WITAN_HOSTILE_FULL set, or n/20 with
// -short: the race run (scripts/test.sh) looks for races on these paths,
// and the heap bound is measured by the plain run, since the race
// detector's own memory would swamp it anyway; n signed announcements
// under the detector on a loaded machine took most of ten minutes.
func hostileSize(n, full int) int {
	if os.Getenv("WITAN_HOSTILE_FULL") != "" {
		return full
	}
	if testing.Short() {
		return n / 20
	}
	return n
}

// One connection sending announcements, each signed by a fresh key,
// leaves the victim's live heap flat (within 16 MiB): the victim drops
// what is over the sender's rate before checking or remembering it, and
// keeps what it remembers of senders bounded. 100,000 announcements
// (WITAN_HOSTILE_FULL=1: 1,000,000).
func TestGossipFromFreshKeysBounded(t *testing.T) {
	total := hostileSize(100_000, 1_000_000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	src, space := build(t, 5)
	// Every announcement carries the same bytes: under content ids
	// (Config.ContentIDs) they would be one message, taken in once. Sender
	// ids, the default, make each one a message of its own author, whose
	// state the victim must bound.
	victim, err := ws.NewNode(ctx, src, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	a := newGossipAttacker(ctx, t, victim)
	// Heads the victim holds: the flood makes it pull nothing.
	data := ws.Announcement{Space: space, Heads: heads(t, src, space)}.Encode()
	topic := ws.TopicPrefix + space
	before := liveHeap()
	const batch = 100
	start := time.Now()
	for sent := 0; sent < total; sent += batch {
		rpc := &pb.RPC{}
		for i := range batch {
			rpc.Publish = append(rpc.Publish, signed(t, topic, data, uint64(sent+i)))
		}
		if !a.send(t, rpc) {
			t.Fatalf("the victim closed the gossip stream after %d announcements", sent)
		}
		// Keep at most a few batches in flight, so that what the victim
		// takes in is not lost to its validation queue (which drops past
		// 32 waiting messages): it then takes in every one it admits.
		for last := -1; ; time.Sleep(10 * time.Millisecond) {
			st := victim.Stats()
			got := int(st.Received) + batch*int(st.Flooded)
			if got >= sent-4*batch || got == last {
				break // caught up, or taking in no more
			}
			last = got
		}
	}
	// Let the victim take in what is still on its way.
	time.Sleep(time.Second)
	after := liveHeap()
	st := victim.Stats()
	grew := int64(after) - int64(before)
	t.Logf("%d announcements from fresh keys in %v: victim received %d, dropped %d RPCs as a flood; live heap %d → %d MiB (%+d KiB)",
		total, time.Since(start).Round(time.Millisecond), st.Received, st.Flooded, before>>20, after>>20, grew>>10)
	if grew > 16<<20 {
		t.Errorf("live heap grew by %d MiB across %d announcements, more than 16 MiB", grew>>20, total)
	}
}

// One peer subscribing to a million gossip topics leaves the victim's
// live heap flat (within 16 MiB): gossipsub admits only subscriptions to
// spaces the victim joined, and at most 1024 in one RPC. 100,000
// subscriptions (WITAN_HOSTILE_FULL=1: 1,000,000), 1000 per RPC.
func TestGossipSubscriptionFloodBounded(t *testing.T) {
	total := hostileSize(100_000, 1_000_000)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src, space := build(t, 5)
	victim, err := ws.NewNode(ctx, src, ws.Config{ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}, Spaces: []string{space}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	a := newGossipAttacker(ctx, t, victim)
	before := liveHeap()
	yes := true
	for sent := 0; sent < total; sent += 1000 {
		rpc := &pb.RPC{}
		for i := range 1000 {
			topic := ws.TopicPrefix + "space-" + strconv.Itoa(sent+i)
			rpc.Subscriptions = append(rpc.Subscriptions, &pb.RPC_SubOpts{Subscribe: &yes, Topicid: &topic})
		}
		if !a.send(t, rpc) {
			t.Fatalf("the victim closed the gossip stream after %d subscriptions", sent)
		}
	}
	time.Sleep(time.Second)
	after := liveHeap()
	grew := int64(after) - int64(before)
	t.Logf("%d topic subscriptions from one peer: live heap %d → %d MiB (%+d KiB); %d listed as offers, %d ignored",
		total, before>>20, after>>20, grew>>10, len(victim.Available()), victim.Stats().OffersIgnored)
	if grew > 16<<20 {
		t.Errorf("live heap grew by %d MiB across %d subscriptions, more than 16 MiB", grew>>20, total)
	}
}
