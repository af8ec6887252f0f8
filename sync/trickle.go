package sync

// The announcement rules, shared by Node and the fleet model (sync/simnet):
// what a receiver does with an announcement, and when a sender need not
// announce. docs/sync-protocol.md, "Announcements".

import (
	"context"
	"crypto/sha256"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
)

// Want is what an announcement asks of its receiver (Announcer.Judge).
type Want uint8

const (
	// WantNothing: the sender is behind but was answered in this period,
	// or a pull for its digest is already under way.
	WantNothing Want = iota
	// WantInSync: the sender's heads are the receiver's.
	WantInSync
	// WantReply: the sender is behind (its digest is one the receiver
	// covers, or it named all its heads and the receiver holds each, with
	// more): the receiver announces its own heads soon (AnnounceSoon),
	// unless another peer's announcement of them comes first.
	WantReply
	// WantSender: a named head is neither held nor quarantined: pull
	// from the sender (or the peer that relayed it).
	WantSender
	// WantDigest: every named head is held, but the sender has heads it
	// did not name and its digest is not covered: one pull for the
	// digest, however many peers announce it; PullDone ends it.
	WantDigest
)

func (w Want) String() string {
	return [...]string{"nothing", "in sync", "reply", "sender", "digest"}[w]
}

// Bounds of an Announcer's memory, per space.
const (
	// maxCovered: digests of head sets the receiver holds entirely (its
	// own past head sets, those of announcements fully held, and of pulls
	// that ended with the receiver at them).
	maxCovered = 256
	// maxHeardHeads: heads named by announcements received, for Derived.
	maxHeardHeads = 1024
	// maxHeardDigests: distinct digests counted in one period, for
	// Redundant; past it, further digests are not counted.
	maxHeardDigests = 1024
	// maxDigestPulls: digest pulls under way at once.
	maxDigestPulls = 256
)

// TrickleK is the redundancy constant of the announcement suppression
// (RFC 6206's k): a re-announcement, or an announcement caused only by
// entries that others announced, is not sent when the node has already
// heard TrickleK announcements of the same heads in the period.
const TrickleK = 1

// Announcer holds what a replica knows of the announcements of its
// spaces: the rules of a receiver (Judge, PullDone) and of a sender
// (Own, Derived, Redundant, Reset). Safe for concurrent use; its memory
// is bounded per space (Forget drops a space).
type Announcer struct {
	mu     gosync.Mutex
	spaces map[string]*annSpace
}

type annSpace struct {
	covered    ring[[32]byte]
	heardHeads ring[dag.ID]
	heard      map[[32]byte]int // digest → announcements heard this period
	replied    map[[32]byte]bool
	pulls      map[[32]byte]bool
}

// NewAnnouncer returns an empty Announcer.
func NewAnnouncer() *Announcer { return &Announcer{spaces: map[string]*annSpace{}} }

func (r *Announcer) space(s string) *annSpace {
	sp := r.spaces[s]
	if sp == nil {
		sp = &annSpace{covered: newRing[[32]byte](maxCovered), heardHeads: newRing[dag.ID](maxHeardHeads),
			heard: map[[32]byte]int{}, replied: map[[32]byte]bool{}, pulls: map[[32]byte]bool{}}
		r.spaces[s] = sp
	}
	return sp
}

// Forget drops what r holds of space.
func (r *Announcer) Forget(space string) {
	r.mu.Lock()
	delete(r.spaces, space)
	r.mu.Unlock()
}

// v1FullDomain names a digest of a full version 1 announcement's heads,
// which are not all its sender's: it never equals a heads digest.
const v1FullDomain = "witan/heads-v1-full/1\x00"

// Key is the digest by which the rules know the announcement: Digest,
// or for version 1 that of its heads (when it names all of them) or a
// digest of another domain (a full one: its heads are not all its
// sender's).
func (a Announcement) Key() [32]byte {
	d, _ := digestOf(a)
	return d
}

// digestOf returns the announcement's Key, and whether it names all the
// sender's heads.
func digestOf(a Announcement) (d [32]byte, complete bool) {
	if a.Version != announceV1 {
		return a.Digest, a.Complete()
	}
	if a.Complete() {
		return HeadsDigest(a.Heads), true
	}
	h := sha256.New()
	h.Write([]byte(v1FullDomain))
	for _, id := range a.Heads {
		x := id.Digest()
		h.Write(x[:])
	}
	return [32]byte(h.Sum(nil)), false
}

// Judge applies the receiver's rule to an announcement received in
// a.Space, from another replica, against l:
//
//   - the sender's digest is that of l's heads: WantInSync;
//   - a named head is neither held nor quarantined: WantSender;
//   - the digest is covered (a head set l held entirely), or the
//     announcement names all the sender's heads and l holds each: the
//     sender is behind, WantReply (once per digest and period);
//   - else the sender has heads it did not name: WantDigest, once per
//     (space, digest) until PullDone; WantNothing while one is under way.
//
// A covered digest stays covered while the set holds it (maxCovered per
// space), so a receiver does not pull again for heads it holds.
//
// It also records the named heads (for Derived) and counts the digest as
// heard (for Redundant).
func (r *Announcer) Judge(ctx context.Context, l Local, a Announcement) (Want, error) {
	d, complete := digestOf(a)
	own, err := dag.HeadsOf(ctx, l, a.Space)
	if err != nil {
		return WantNothing, err
	}
	ownD := HeadsDigest(own)
	r.mu.Lock()
	sp := r.space(a.Space)
	for _, h := range a.Heads {
		sp.heardHeads.add(h)
	}
	if _, ok := sp.heard[d]; ok || len(sp.heard) < maxHeardDigests {
		sp.heard[d]++
	}
	if len(own) > 0 {
		sp.covered.add(ownD)
	}
	r.mu.Unlock()
	if len(own) > 0 && d == ownD {
		return WantInSync, nil
	}
	for _, h := range a.Heads {
		st, err := l.Has(ctx, h)
		if err != nil {
			return WantNothing, err
		}
		if st != dag.Absent {
			continue
		}
		if _, q, err := l.Quarantined(ctx, h); err != nil {
			return WantNothing, err
		} else if !q {
			return WantSender, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if complete {
		// Every head of the sender is held (or refused) here.
		sp.covered.add(d)
	}
	if complete || sp.covered.has(d) {
		// The sender is behind. One reply per digest and period: two
		// replicas that stay apart (one holds an entry the other refused)
		// do not answer each other without end.
		if sp.replied[d] || len(sp.replied) >= maxHeardDigests {
			return WantNothing, nil
		}
		sp.replied[d] = true
		return WantReply, nil
	}
	if sp.pulls[d] || len(sp.pulls) >= maxDigestPulls {
		return WantNothing, nil
	}
	sp.pulls[d] = true
	return WantDigest, nil
}

// PullDone ends a pull set off by an announcement of digest d in space:
// a pull for the digest (WantDigest) under way ends, and, when covered,
// d is covered from now on. A pull from the announcer itself that ended
// without error and with nothing missing brought everything the
// announcer held when it ended, which includes the heads it announced
// (heads only grow): the caller passes covered then. A pull from a peer
// that relayed the announcement proves nothing of the announcer's heads.
func (r *Announcer) PullDone(space string, d [32]byte, covered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := r.space(space)
	delete(sp.pulls, d)
	if covered {
		sp.covered.add(d)
	}
}

// Own records heads as l's current heads in space (covered from now on)
// and returns their digest.
func (r *Announcer) Own(space string, heads []dag.ID) [32]byte {
	d := HeadsDigest(heads)
	r.mu.Lock()
	r.space(space).covered.add(d)
	r.mu.Unlock()
	return d
}

// Heard records heads that a peer holds: the heads at the end of a pull
// from it (Engine.Announced). Heads a pull brought are among them, so a
// change made only of them is Derived: the peer's own announcement, or
// its author's, told the others.
func (r *Announcer) Heard(space string, heads []dag.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := r.space(space)
	for _, h := range heads {
		sp.heardHeads.add(h)
	}
}

// Derived reports whether every one of added (heads the node has not
// announced yet) was named by an announcement it received or held by a
// peer it pulled from (Heard): the change came from peers, whose
// announcements told the others already, so it
// is not announced (the periodic re-announcement carries it, unless that
// is Redundant too). A local write is never derived. No heads added is
// not derived.
func (r *Announcer) Derived(space string, added []dag.ID) bool {
	if len(added) == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := r.space(space)
	for _, h := range added {
		if !sp.heardHeads.has(h) {
			return false
		}
	}
	return true
}

// Redundant reports whether TrickleK announcements of digest d were heard
// in space in this period (since Reset, or since Unheard of d).
func (r *Announcer) Redundant(space string, d [32]byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.space(space).heard[d] >= TrickleK
}

// Reset starts a new period in space: no digest heard or replied to yet.
func (r *Announcer) Reset(space string) {
	r.mu.Lock()
	sp := r.space(space)
	clear(sp.heard)
	clear(sp.replied)
	r.mu.Unlock()
}

// Unheard forgets the announcements of d heard in space: a peer showed it
// is behind (Trickle's inconsistency), so the next announcement of d is
// not redundant until someone makes it again.
func (r *Announcer) Unheard(space string, d [32]byte) {
	r.mu.Lock()
	delete(r.space(space).heard, d)
	r.mu.Unlock()
}

// ring is a bounded set, the oldest forgotten first.
type ring[T comparable] struct {
	buf []T
	at  int
	set map[T]struct{}
}

func newRing[T comparable](n int) ring[T] {
	return ring[T]{buf: make([]T, 0, n), set: map[T]struct{}{}}
}

func (r *ring[T]) has(v T) bool {
	_, ok := r.set[v]
	return ok
}

func (r *ring[T]) add(v T) {
	if r.has(v) {
		return
	}
	if len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, v)
	} else {
		delete(r.set, r.buf[r.at])
		r.buf[r.at] = v
		r.at = (r.at + 1) % len(r.buf)
	}
	r.set[v] = struct{}{}
}

// AddedHeads returns those of heads not in last, in heads' order. A set,
// not a scan of last per head: a space's heads can number tens of
// thousands (a fresh pull of a wide session), and a node asks after
// every change.
func AddedHeads(heads, last []dag.ID) []dag.ID {
	in := make(map[dag.ID]struct{}, len(last))
	for _, h := range last {
		in[h] = struct{}{}
	}
	var added []dag.ID
	for _, h := range heads {
		if _, ok := in[h]; !ok {
			added = append(added, h)
		}
	}
	return added
}
