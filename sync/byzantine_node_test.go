package sync_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
	ws "github.com/witan-dev/witan/sync"
	"github.com/witan-dev/witan/sync/synctest"
)

// TestByzantineNodeOverLibp2p: a hostile libp2p peer joins the space's
// topic, publishes malformed announcements and announcements of heads that
// do not exist, and answers every pull with forged entries. The honest
// replicas drop and count the junk, cut the liar off, and still converge.
func TestByzantineNodeOverLibp2p(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newCluster(t, 3)
	waitFor(t, 20*time.Second, "root everywhere", func() bool { return c.converged(t) })

	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hs := heads(t, c.replicas[0], c.space)
	junk := forged(t, c.space, hs, 200)
	h.SetStreamHandler(ws.ProtocolID, func(s network.Stream) {
		defer s.Close()
		br := bufio.NewReader(s)
		for {
			n, err := binary.ReadUvarint(br)
			if err != nil {
				return
			}
			if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
				return
			}
			respondWith(junk, nil)(s, nil)
		}
	})
	ps, err := pubsub.NewGossipSub(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := ps.Join(ws.TopicPrefix + c.space)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if err := h.Connect(ctx, peer.AddrInfo{ID: n.ID(), Addrs: n.Host().Addrs()}); err != nil {
			t.Fatal(err)
		}
	}
	fake := ws.Announcement{Space: c.space, Heads: []dag.ID{dag.Sum([]byte("no such entry"))}}.Encode()
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			topic.Publish(ctx, []byte("\x01garbage"))
			topic.Publish(ctx, fake)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	// Meanwhile the honest replicas keep writing.
	for i, r := range c.replicas {
		if _, err := synctest.NewAuthor(byte(i+1)).Write(ctx, r, c.space, 10); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "convergence despite the liar, the liar cut off and junk dropped", func() bool {
		if !c.converged(t) || count(t, c.replicas[0], c.space) != 31 {
			return false
		}
		for _, n := range c.nodes {
			if banned, _ := n.Engine().Banned(h.ID().String()); !banned || n.Stats().Dropped == 0 {
				return false
			}
		}
		return true
	})
	for _, r := range c.replicas {
		if len(r.Refused()) == 0 {
			t.Fatal("forged entries not quarantined")
		}
	}
}

// TestBraggartIsCutOff: a peer that answers correctly but keeps announcing
// heads it cannot produce spends its budget for unresolved hashes.
func TestBraggartIsCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("libp2p cluster")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClusterWith(t, 1, func(cfg *ws.Config) { cfg.Engine.Budget.Unresolved = 3 })
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.SetStreamHandler(ws.ProtocolID, func(s network.Stream) {
		defer s.Close()
		br := bufio.NewReader(s)
		for {
			n, err := binary.ReadUvarint(br)
			if err != nil {
				return
			}
			if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
				return
			}
			respondWith(nil, nil)(s, nil) // nothing, politely
		}
	})
	ps, err := pubsub.NewGossipSub(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := ps.Join(ws.TopicPrefix + c.space)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Connect(ctx, peer.AddrInfo{ID: c.nodes[0].ID(), Addrs: c.nodes[0].Host().Addrs()}); err != nil {
		t.Fatal(err)
	}
	go func() {
		tick := time.NewTicker(30 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			fake := ws.Announcement{Space: c.space, Heads: []dag.ID{dag.Sum([]byte{byte(i), byte(i >> 8)})}}.Encode()
			topic.Publish(ctx, fake)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	waitFor(t, 20*time.Second, "the braggart cut off", func() bool {
		banned, _ := c.nodes[0].Engine().Banned(h.ID().String())
		return banned
	})
}
