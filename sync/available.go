package sync

// Available spaces: what the connected peers offer. A node joins the
// gossip topic of every space it holds (and of every space it was told to
// join), and gossipsub tells each connected peer its topics in
// SUBSCRIBE messages, so a peer's subscriptions under TopicPrefix are the
// spaces it announces. The node keeps them per peer, bounded, from the
// RPCs gossipsub receives, and forgets a peer when it disconnects. No new
// message: nodes of every version since /witan/heads/1 send them.

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
)

// MaxOffersPerPeer bounds the spaces remembered per connected peer; a
// peer's further subscriptions are ignored (counted in
// AnnounceStats.OffersIgnored) until some of its earlier ones end.
const MaxOffersPerPeer = 256

// Offer is a space that connected peers announce.
type Offer struct {
	Space string
	// Peers are the connected peers that announce it, sorted.
	Peers []peer.ID
	// Joined is whether this node has joined the space (it then holds it
	// or is pulling it).
	Joined bool
}

// inspect is gossipsub's RPC inspector: it drops an RPC whose messages
// put its sender over GossipRate (gossip.go), and records the peer's topic
// subscriptions. It runs in gossipsub's event loop, so it must not call
// into gossipsub.
func (n *Node) inspect(from peer.ID, rpc *pubsub.RPC) error {
	if k := len(rpc.GetPublish()); k > 0 && !n.flood.admit(from, k, time.Now()) {
		n.flooded.Add(1)
		return errFlood
	}
	subs := rpc.GetSubscriptions()
	if len(subs) == 0 {
		return nil
	}
	n.omu.Lock()
	defer n.omu.Unlock()
	for _, so := range subs {
		space, ok := strings.CutPrefix(so.GetTopicid(), TopicPrefix)
		if !ok || space == "" || len(space) > dag.MaxSpaceLen || !utf8.ValidString(space) {
			continue
		}
		set := n.offers[from]
		if !so.GetSubscribe() {
			delete(set, space)
			if len(set) == 0 {
				delete(n.offers, from)
			}
			continue
		}
		if set == nil {
			set = map[string]bool{}
			n.offers[from] = set
		}
		if !set[space] && len(set) >= MaxOffersPerPeer {
			n.offersIgnored.Add(1)
			continue
		}
		set[space] = true
	}
	return nil
}

// offered reports whether p's subscription to topic is among its offers
// (the inspector records them before the subscription filter runs).
func (n *Node) offered(p peer.ID, topic string) bool {
	space, ok := strings.CutPrefix(topic, TopicPrefix)
	if !ok {
		return false
	}
	n.omu.Lock()
	defer n.omu.Unlock()
	return n.offers[p][space]
}

// forgetOffers drops what a peer offered once it has no connection left.
func (n *Node) forgetOffers(_ network.Network, c network.Conn) {
	p := c.RemotePeer()
	if n.host.Network().Connectedness(p) == network.Connected {
		return
	}
	n.omu.Lock()
	delete(n.offers, p)
	n.omu.Unlock()
	n.flood.forget(p)
}

// Available returns the spaces the connected peers announce, sorted by
// name, with the peers announcing each and whether this node joined it.
// Only a peer's word: a space listed may hold nothing yet (the peer may
// itself be waiting for it), and nothing in it is believed before a pull
// checks it.
func (n *Node) Available() []Offer {
	byName := map[string][]peer.ID{}
	n.omu.Lock()
	for p, set := range n.offers {
		if n.host.Network().Connectedness(p) != network.Connected {
			continue // its disconnection is on its way
		}
		for s := range set {
			byName[s] = append(byName[s], p)
		}
	}
	n.omu.Unlock()
	n.mu.Lock()
	out := make([]Offer, 0, len(byName))
	for s, ps := range byName {
		slices.Sort(ps)
		_, joined := n.spaces[s]
		out = append(out, Offer{Space: s, Peers: ps, Joined: joined})
	}
	n.mu.Unlock()
	slices.SortFunc(out, func(a, b Offer) int { return strings.Compare(a.Space, b.Space) })
	return out
}
