package sync

// Stream slots: the inbound /witan/sync/2 streams a node serves at once
// (Limits). Any number of peer ids can open streams; the slots keep a
// peer that holds none from being shut out by them.

import (
	gosync "sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// slots holds the inbound sync streams being served, per peer in the
// order they were taken.
type slots struct {
	perPeer, total int

	mu   gosync.Mutex
	held map[peer.ID][]*slot
	n    int

	busy, evicted atomic.Uint64
}

type slot struct {
	p peer.ID
	s network.Stream
}

func newSlots(l Limits) *slots {
	return &slots{perPeer: l.StreamsPerPeer, total: l.Streams, held: map[peer.ID][]*slot{}}
}

// take gives s, from p, a slot, or returns nil when p holds its
// StreamsPerPeer already, or every slot is taken and no peer holds more
// than one slot above p. When every slot is taken and some peer holds
// more, the oldest stream of the peer holding most is reset and its slot
// goes to s: the slots tend to equal shares, and a peer with no stream
// always gets one while some peer holds two.
func (sl *slots) take(p peer.ID, s network.Stream) *slot {
	sl.mu.Lock()
	mine := len(sl.held[p])
	if mine >= sl.perPeer {
		sl.mu.Unlock()
		sl.busy.Add(1)
		return nil
	}
	var victim *slot
	if sl.n >= sl.total {
		var most peer.ID
		for q, ss := range sl.held {
			if len(ss) > len(sl.held[most]) {
				most = q
			}
		}
		if len(sl.held[most]) <= mine+1 {
			sl.mu.Unlock()
			sl.busy.Add(1)
			return nil
		}
		victim = sl.held[most][0]
		sl.drop(victim)
	}
	x := &slot{p: p, s: s}
	sl.held[p] = append(sl.held[p], x)
	sl.n++
	sl.mu.Unlock()
	if victim != nil {
		sl.evicted.Add(1)
		victim.s.Reset()
	}
	return x
}

// release frees x's slot, unless it was taken from it already.
func (sl *slots) release(x *slot) {
	sl.mu.Lock()
	sl.drop(x)
	sl.mu.Unlock()
}

func (sl *slots) drop(x *slot) {
	ss := sl.held[x.p]
	for i, y := range ss {
		if y == x {
			ss = append(ss[:i:i], ss[i+1:]...)
			sl.n--
			if len(ss) == 0 {
				delete(sl.held, x.p)
			} else {
				sl.held[x.p] = ss
			}
			return
		}
	}
}
