package sync

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
)

// fakeConn is the part of a libp2p connection reach reads: its id, peer
// and remote address.
type fakeConn struct {
	network.Conn
	id   string
	p    peer.ID
	addr ma.Multiaddr
}

func (c *fakeConn) ID() string                    { return c.id }
func (c *fakeConn) RemotePeer() peer.ID           { return c.p }
func (c *fakeConn) RemoteMultiaddr() ma.Multiaddr { return c.addr }

// A direct connection is labelled hole-punched when it opens while the
// peer is connected through a relay, or within metGrace of its last
// relayed connection or hole punch — also when every connection closed
// for a moment in between — and plain direct otherwise.
func TestReachLabelsEachDirectConnection(t *testing.T) {
	r, _ := newReach()
	clock := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	const a, b = peer.ID("peer-a"), peer.ID("peer-b")
	relayed := ma.StringCast("/ip4/1.2.0.1/udp/4001/quic-v1/p2p/12D3KooWM8CjbndAhQe11JE2hT8pGcj7e93mrYkUPcMg4eef3BKG/p2p-circuit")
	direct := ma.StringCast("/ip4/2.2.0.1/udp/8000/quic-v1")
	conn := func(id string, p peer.ID, addr ma.Multiaddr) *fakeConn {
		c := &fakeConn{id: id, p: p, addr: addr}
		r.connected(nil, c)
		return c
	}

	// b was never met through a relay: its direct connection is plain.
	if bd := conn("b1", b, direct); r.isPunched(bd) {
		t.Error("a direct connection to a peer never met through a relay labelled hole-punched")
	}

	// a: relayed, then a direct one while it is open.
	ra := conn("r1", a, relayed)
	d1 := conn("d1", a, direct)
	if !r.isPunched(d1) {
		t.Error("a direct connection opened beside a relayed one not labelled hole-punched")
	}
	// Every connection closes for a moment; the one that follows, within
	// the grace, is the punch's still.
	r.disconnected(nil, ra)
	r.disconnected(nil, d1)
	if r.isPunched(d1) {
		t.Error("a closed connection kept its label")
	}
	clock = clock.Add(10 * time.Second)
	if d2 := conn("d2", a, direct); !r.isPunched(d2) {
		t.Error("a direct connection 10 s after the relayed one closed not labelled hole-punched")
	} else {
		r.disconnected(nil, d2)
	}
	// Past the grace, a direct connection is a plain one again.
	clock = clock.Add(metGrace + time.Second)
	if d3 := conn("d3", a, direct); r.isPunched(d3) {
		t.Error("a direct connection long after the last relayed one labelled hole-punched")
	} else {
		r.disconnected(nil, d3)
	}
	// A hole punch counts as a meeting too: a direct connection within
	// the grace of one is the punch's, with no relayed one left.
	r.Trace(&holepunch.Event{Remote: a, Evt: &holepunch.EndHolePunchEvt{Success: true}})
	clock = clock.Add(30 * time.Second)
	if d4 := conn("d4", a, direct); !r.isPunched(d4) {
		t.Error("a direct connection 30 s after a hole punch not labelled hole-punched")
	}
	// Peers with no connection past their grace are forgotten once the
	// map is full; the others stay.
	for i := range maxMet + 10 {
		p := peer.ID(string(rune('A'+i%26)) + time.Duration(i).String())
		r.disconnected(nil, conn("x", p, relayed))
		clock = clock.Add(time.Second)
	}
	if len(r.met) > maxMet {
		t.Errorf("%d peers remembered, at most %d", len(r.met), maxMet)
	}
}
