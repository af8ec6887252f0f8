package sync

// Gossip bounds: what one connected peer can make this node's gossipsub
// and announcement handling hold (docs/security.md). gossipsub keeps a
// topic table of every subscription it admits and, for two minutes, the
// id of every message it has seen; the node keeps the last announcement
// per sender. Each is bounded here.

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"strings"
	gosync "sync"
	"time"
	"unicode/utf8"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
)

// Gossip limits.
const (
	// MaxGossipMessage bounds one gossipsub RPC, read or sent
	// (pubsub.WithMaxMessageSize). An announcement is at most about
	// 2.2 KiB; the largest honest RPC is a peer's subscriptions when it
	// connects, at most MaxSubscriptionsPerRPC topic names.
	MaxGossipMessage = 256 << 10
	// MaxSubscriptionsPerRPC bounds the subscriptions of one RPC
	// (pubsub.WrapLimitSubscriptionFilter): an RPC with more is dropped
	// whole. Those admitted are only to topics of spaces this node
	// joined or among the peer's MaxOffersPerPeer offers, so a peer
	// holds at most one entry per joined space plus MaxOffersPerPeer in
	// gossipsub's topic table however many it sends (topicFilter).
	MaxSubscriptionsPerRPC = 1024
	// GossipRate and GossipBurst bound the messages one connected peer
	// may send (its own announcements and those it relays): a token
	// bucket of GossipBurst refilled at GossipRate per second. An RPC
	// whose messages do not fit is dropped whole before gossipsub checks
	// their signatures or remembers their ids, and counted against the
	// peer's score (AnnounceStats.Flooded).
	GossipRate  = 256
	GossipBurst = 2048
	// maxSeen bounds the last announcements remembered per (sender,
	// space), least recently heard forgotten first.
	maxSeen = 4096
)

var errFlood = errors.New("sync: gossip over the peer's rate")

// contentID names a gossip message by the SHA-256 of its data, under
// Config.ContentIDs. An announcement's data is the space and its heads, so
// every peer that announces the same heads publishes the same message:
// gossipsub delivers and forwards the first copy a node sees and drops the
// others, its own publishes included, for its seen-messages period (set to
// Config.Interval). The periodic re-announcement that gets through is the
// first made after that period ends, by whichever peer; one of heads that
// changed gets through at once. Signatures are checked before an id is
// marked seen, so a forged copy cannot suppress the real ones; a peer's
// own copy of the same heads can, until the period ends, unless it then
// fails to serve them (pullElsewhere).
func contentID(m *pb.Message) string {
	d := sha256.Sum256(m.Data)
	return string(d[:])
}

// joinedTopics is the set of topics this node joined, read by the
// subscription filter from gossipsub's loop (so under its own lock, not
// Node.mu, which is held while joining).
type joinedTopics struct {
	mu gosync.RWMutex
	m  map[string]bool
}

func (j *joinedTopics) add(topic string) {
	j.mu.Lock()
	j.m[topic] = true
	j.mu.Unlock()
}

func (j *joinedTopics) has(topic string) bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.m[topic]
}

// topicFilter admits, of a peer's subscriptions, those to spaces this
// node joined and those the RPC inspector recorded among the peer's
// offers (at most MaxOffersPerPeer, available.go), and every
// unsubscription (it only removes). A peer thus holds at most one entry
// per joined space plus MaxOffersPerPeer in gossipsub's topic table,
// however many it sends; and a peer already subscribed to a space when
// this node joins it is in the topic table from the start, so this
// node's first announcements reach it (gossipsub sends a peer's
// subscriptions once, when it connects or subscribes; one filtered out
// then is never sent again). This node may itself subscribe to any
// well-formed space topic.
type topicFilter struct {
	joined  *joinedTopics
	offered func(peer.ID, string) bool
}

func (f topicFilter) CanSubscribe(topic string) bool {
	space, ok := strings.CutPrefix(topic, TopicPrefix)
	return ok && space != "" && len(space) <= dag.MaxSpaceLen && utf8.ValidString(space)
}

func (f topicFilter) FilterIncomingSubscriptions(p peer.ID, subs []*pb.RPC_SubOpts) ([]*pb.RPC_SubOpts, error) {
	admit := map[string]bool{}
	for _, so := range subs {
		t := so.GetTopicid()
		if !so.GetSubscribe() || f.joined.has(t) || f.offered(p, t) {
			admit[t] = true
		}
	}
	return pubsub.FilterSubscriptions(subs, func(t string) bool { return admit[t] }), nil
}

// floodGate is a token bucket per connected peer for gossip messages,
// and the count of RPCs dropped for going over it, which lowers the
// peer's gossipsub score.
type floodGate struct {
	mu    gosync.Mutex
	peers map[peer.ID]*floodBucket
}

type floodBucket struct {
	tokens float64
	last   time.Time
	// dropped counts RPCs dropped, halved each second the peer stays
	// within its rate.
	dropped float64
}

// admit takes n tokens from p's bucket, or counts a drop.
func (g *floodGate) admit(p peer.ID, n int, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.peers[p]
	if b == nil {
		b = &floodBucket{tokens: GossipBurst, last: now}
		g.peers[p] = b
	}
	el := now.Sub(b.last).Seconds()
	b.tokens = min(GossipBurst, b.tokens+el*GossipRate)
	b.last = now
	if b.tokens < float64(n) {
		b.dropped++
		return false
	}
	b.tokens -= float64(n)
	for ; el >= 1 && b.dropped > 0; el-- {
		b.dropped /= 2
	}
	return true
}

// penalty is p's app-specific score: minus the RPCs it had dropped lately.
func (g *floodGate) penalty(p peer.ID) float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.peers[p]; b != nil {
		return -b.dropped
	}
	return 0
}

func (g *floodGate) forget(p peer.ID) {
	g.mu.Lock()
	delete(g.peers, p)
	g.mu.Unlock()
}

// scoreParams are gossipsub's peer score: no per-topic scoring (head
// announcements carry no value to reward), gossipsub's own penalty for
// broken promises (IWANTs unanswered, GRAFTs in backoff), and the flood
// gate's drops as the app-specific score. A peer that keeps flooding goes
// below the graylist threshold and gossipsub ignores it. IP colocation is
// not scored: a classroom behind one NAT, or nodes on one machine, share
// an address.
func scoreParams(g *floodGate) (*pubsub.PeerScoreParams, *pubsub.PeerScoreThresholds) {
	return &pubsub.PeerScoreParams{
			Topics:                    map[string]*pubsub.TopicScoreParams{},
			AppSpecificScore:          g.penalty,
			AppSpecificWeight:         1,
			BehaviourPenaltyWeight:    -1,
			BehaviourPenaltyThreshold: 6,
			BehaviourPenaltyDecay:     0.9,
			DecayInterval:             time.Second,
			DecayToZero:               0.01,
			RetainScore:               10 * time.Minute,
		}, &pubsub.PeerScoreThresholds{
			GossipThreshold:   -50,
			PublishThreshold:  -100,
			GraylistThreshold: -200,
		}
}

// seenSet remembers the digest of the last announcement per (sender,
// space), at most maxSeen of them, the least recently heard forgotten
// first: fresh signing keys cost nothing once their entry is gone.
type seenSet struct {
	max   int
	order *list.List // of seenItem, most recent first
	m     map[jobKey]*list.Element
}

type seenItem struct {
	k jobKey
	d [32]byte
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, order: list.New(), m: map[jobKey]*list.Element{}}
}

// put records d for k and reports whether it was k's last digest already.
func (s *seenSet) put(k jobKey, d [32]byte) (repeat bool) {
	if e, ok := s.m[k]; ok {
		it := e.Value.(*seenItem)
		repeat = it.d == d
		it.d = d
		s.order.MoveToFront(e)
		return repeat
	}
	if s.order.Len() >= s.max {
		old := s.order.Back()
		delete(s.m, old.Value.(*seenItem).k)
		s.order.Remove(old)
	}
	s.m[k] = s.order.PushFront(&seenItem{k: k, d: d})
	return false
}

func (s *seenSet) len() int { return s.order.Len() }
