package sync

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
)

// Clock is the time sync reads. Tests inject a fake one so that budgets and
// bans need no sleeps.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Budget bounds what one peer may cost before it is cut off for Ban.
// Counters start again after a ban.
type Budget struct {
	// Invalid is how many quarantined entries a peer may send (default 64).
	Invalid int
	// Unresolved is how many parents a peer may leave missing, having sent
	// entries that need them and then failed to produce them (default 256).
	Unresolved int
	// Malformed is how many malformed streams a peer may open (default 4).
	Malformed int
	// Ban is how long a peer over budget is refused (default 10 minutes).
	Ban time.Duration
	// Requests is how many requests a peer may send per minute before
	// further ones are answered refused until the minute is over (default
	// 600). It bounds the walks a requester can make a responder do.
	Requests int
}

// Defaults of Options.
const (
	DefaultMaxBatchBytes    = 1 << 20
	DefaultMaxBatchItems    = 1024
	DefaultMaxRounds        = 8
	DefaultMaxFilterEntries = 1 << 16
	DefaultMaxWalk          = 1 << 22
	DefaultIngestItems      = 4096
	// BitsPerID sizes filters: about 1 % false positives.
	BitsPerID = 10
	// MaxFilterIDs is the most ids a filter is sized for.
	MaxFilterIDs = heads.MaxBloomBits / BitsPerID
)

// Options configure an Engine. The zero value works.
type Options struct {
	// Clock is read for bans; the system clock if nil.
	Clock Clock
	// Rand salts the filters; crypto/rand if nil.
	Rand io.Reader
	// Budget bounds each peer; zero fields take their defaults.
	Budget Budget
	// MaxBatchBytes and MaxBatchItems bound the batches a responder sends.
	MaxBatchBytes, MaxBatchItems int
	// MaxRounds bounds the requests of one Pull (the first, then asks for
	// missing parents by id).
	MaxRounds int
	// MaxFilterEntries bounds the ids a requester puts in its filter.
	MaxFilterEntries int
	// MaxWalk bounds the entries a responder walks to answer one request.
	MaxWalk int
	// IngestItems bounds the entries a requester hands Local.Ingest in one
	// call (default DefaultIngestItems). Batches already received go
	// together, up to this many: each call ends with a store write that
	// nothing overlaps, so fewer, larger calls keep the cores busier.
	// Progress is reported after each call.
	IngestItems int
	// OnEvent, if set, is called for every Event. It must not block.
	OnEvent func(Event)
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Budget.Invalid <= 0 {
		o.Budget.Invalid = 64
	}
	if o.Budget.Unresolved <= 0 {
		o.Budget.Unresolved = 256
	}
	if o.Budget.Malformed <= 0 {
		o.Budget.Malformed = 4
	}
	if o.Budget.Ban <= 0 {
		o.Budget.Ban = 10 * time.Minute
	}
	if o.Budget.Requests <= 0 {
		o.Budget.Requests = 600
	}
	if o.MaxBatchBytes <= 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	o.MaxBatchBytes = min(o.MaxBatchBytes, MaxFrame/2)
	if o.MaxBatchItems <= 0 {
		o.MaxBatchItems = DefaultMaxBatchItems
	}
	o.MaxBatchItems = min(o.MaxBatchItems, MaxBatchItems)
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.MaxFilterEntries <= 0 {
		o.MaxFilterEntries = DefaultMaxFilterEntries
	}
	if o.MaxWalk <= 0 {
		o.MaxWalk = DefaultMaxWalk
	}
	if o.IngestItems <= 0 {
		o.IngestItems = DefaultIngestItems
	}
	return o
}

// ErrRefused is wrapped when a peer is cut off (its budget is spent) and
// the engine will neither pull from nor serve it until its ban ends.
var ErrRefused = errors.New("sync: peer is cut off")

// Engine runs the /witan/sync/2 protocol for one local replica over any
// stream: libp2p's (Node), simnet's, or a net.Pipe in a test. It is safe
// for concurrent use.
type Engine struct {
	local Local
	o     Options

	mu       gosync.Mutex
	peers    map[string]*peerState
	progress map[progressKey]*Progress
	watchers map[int]func(Progress, bool) // WatchProgress
	watchSeq int
}

type progressKey struct{ peer, space string }

type peerState struct {
	invalid, unresolved, malformed int
	bannedUntil                    time.Time
	// lastCharge is when a counter last grew: counters older than a ban
	// period are forgotten, so an honest peer's rare mishaps never add
	// up to a ban.
	lastCharge time.Time
	// requests counts the requests served in the minute from window.
	requests int
	window   time.Time
	// seen is the peer's heads per space as it last told them (end frames
	// and announcements): they become Common in the next request.
	seen map[string][]dag.ID
	// common is, per space, the Common of the last request: entries both
	// sides held then, and still hold. It is kept apart from seen so that
	// an announcement of heads not yet held here does not lose what is
	// known to be shared (the next request would then carry no Common,
	// a filter over everything recent, and make the responder walk far).
	common map[string][]dag.ID
}

// NewEngine returns an engine over local.
func NewEngine(local Local, o Options) *Engine {
	return &Engine{
		local:    local,
		o:        o.withDefaults(),
		peers:    make(map[string]*peerState),
		progress: make(map[progressKey]*Progress),
	}
}

// Local returns the replica the engine serves.
func (e *Engine) Local() Local { return e.local }

func (e *Engine) emit(ev Event) {
	if e.o.OnEvent != nil {
		e.o.OnEvent(ev)
	}
}

// maxPeers bounds the peers an engine keeps state for; past it, the state
// of a peer that is not cut off is dropped to make room (it only loses its
// counters and the heads last seen from it).
const maxPeers = 4096

func (e *Engine) peer(p string) *peerState {
	ps := e.peers[p]
	if ps == nil {
		if len(e.peers) >= maxPeers {
			now := e.o.Clock.Now()
			for k, old := range e.peers {
				if !now.Before(old.bannedUntil) {
					delete(e.peers, k)
					break
				}
			}
		}
		ps = &peerState{seen: map[string][]dag.ID{}, common: map[string][]dag.ID{}}
		e.peers[p] = ps
	}
	return ps
}

// Banned reports whether peer is cut off now, and until when.
func (e *Engine) Banned(peer string) (bool, time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.peers[peer]
	if ps == nil {
		return false, time.Time{}
	}
	until := ps.bannedUntil
	return e.o.Clock.Now().Before(until), until
}

func (e *Engine) refused(peer string) error {
	if banned, until := e.Banned(peer); banned {
		return fmt.Errorf("%w: %s until %s", ErrRefused, peer, until.UTC().Format(time.RFC3339))
	}
	return nil
}

// admit counts a request from peer and reports whether it is within the
// peer's rate.
func (e *Engine) admit(peer string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.peer(peer)
	now := e.o.Clock.Now()
	if now.Sub(ps.window) >= time.Minute || now.Before(ps.window) {
		ps.window, ps.requests = now, 0
	}
	ps.requests++
	return ps.requests <= e.o.Budget.Requests
}

type charge uint8

const (
	chargeInvalid charge = iota
	chargeUnresolved
	chargeMalformed
)

// charge adds n to one of peer's counters and cuts it off when it goes
// over budget, returning an error wrapping ErrRefused then.
func (e *Engine) charge(peer string, c charge, n int) error {
	if n <= 0 {
		return nil
	}
	e.mu.Lock()
	ps := e.peer(peer)
	now := e.o.Clock.Now()
	if now.Sub(ps.lastCharge) > e.o.Budget.Ban {
		ps.invalid, ps.unresolved, ps.malformed = 0, 0, 0
	}
	ps.lastCharge = now
	var over bool
	switch c {
	case chargeInvalid:
		ps.invalid += n
		over = ps.invalid > e.o.Budget.Invalid
	case chargeUnresolved:
		ps.unresolved += n
		over = ps.unresolved > e.o.Budget.Unresolved
	case chargeMalformed:
		ps.malformed += n
		over = ps.malformed > e.o.Budget.Malformed
	}
	var until time.Time
	if over {
		until = now.Add(e.o.Budget.Ban)
		ps.bannedUntil = until
		ps.invalid, ps.unresolved, ps.malformed = 0, 0, 0
	}
	e.mu.Unlock()
	if over {
		e.emit(Event{Kind: EventPeerBanned, Peer: peer, Until: until})
		return fmt.Errorf("%w: %s until %s", ErrRefused, peer, until.UTC().Format(time.RFC3339))
	}
	return nil
}

// Seen records heads that peer holds in space: heads it announced, or
// answered a pull with, or that a pull from this node brought it. A
// replica never loses an entry, so what was seen before stays true: the
// new heads come first, then those seen before that are not among them,
// at most 64 in all. Reports arrive out of order (a pull's answer may
// have been written before a pull the other way brought the peer more),
// and a later, older report must not hide what a newer one showed. The
// next Pull from the peer names those this node holds as Common.
func (e *Engine) Seen(peer, space string, heads []dag.ID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.peer(peer)
	old := ps.seen[space]
	merged := make([]dag.ID, 0, min(len(heads)+len(old), maxSeenHeads))
	for _, hs := range [][]dag.ID{heads, old} {
		for _, h := range hs {
			if len(merged) == maxSeenHeads {
				break
			}
			if !slices.Contains(merged, h) {
				merged = append(merged, h)
			}
		}
	}
	ps.seen[space] = merged
}

// maxSeenHeads bounds the heads remembered per peer and space (Seen).
const maxSeenHeads = 64

// Announced returns heads that peer holds in space, as far as this node
// has seen (Seen: announced, answered with, or brought by a pull from
// this node), at most 64, or nil if it knows nothing of the peer's space:
// what a teacher's page compares with its own log to tell how far a peer
// is behind.
func (e *Engine) Announced(peer, space string) []dag.ID {
	seen, _ := e.lastSeen(peer, space)
	return slices.Clone(seen)
}

// lastSeen returns the heads last seen from peer in space and the Common
// of the last request to it.
func (e *Engine) lastSeen(peer, space string) (seen, common []dag.ID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.peers[peer]
	if ps == nil {
		return nil, nil
	}
	return ps.seen[space], ps.common[space]
}

// setCommon records common, held by both sides, for the next request.
func (e *Engine) setCommon(peer, space string, common []dag.ID) {
	if len(common) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.peer(peer).common[space] = slices.Clone(common[:min(len(common), maxCommon)])
}

// maxCommon bounds the ids remembered as common with a peer in a space.
const maxCommon = 64

// Progress returns the progress of the pulls running now.
func (e *Engine) Progress() []Progress {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Progress, 0, len(e.progress))
	for _, p := range e.progress {
		out = append(out, *p)
	}
	return out
}

// progressFuncKey is the context key of WithProgress's function.
type progressFuncKey struct{}

// WithProgress returns a ctx under which every Pull (Engine.Pull,
// Node.SyncWith) calls fn as its progress moves: after the responder's
// header of each round, after each batch is ingested, and once with done
// set when the pull ends. Only the pulls run with this ctx report to fn,
// not the ones a node starts by itself, so a caller sees its own
// transfer. fn runs on the pull's goroutine and must not block.
func WithProgress(ctx context.Context, fn func(p Progress, done bool)) context.Context {
	return context.WithValue(ctx, progressFuncKey{}, fn)
}

// WatchProgress calls fn with every progress report of every pull, as
// WithProgress does for the pulls of one ctx, until cancel is called. fn
// runs on the pulls' goroutines and must not block; a report made as
// cancel runs may still reach it.
func (e *Engine) WatchProgress(fn func(p Progress, done bool)) (cancel func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.watchers == nil {
		e.watchers = map[int]func(Progress, bool){}
	}
	e.watchSeq++
	k := e.watchSeq
	e.watchers[k] = fn
	return func() {
		e.mu.Lock()
		delete(e.watchers, k)
		e.mu.Unlock()
	}
}

func (e *Engine) setProgress(ctx context.Context, p Progress, done bool) {
	if fn, _ := ctx.Value(progressFuncKey{}).(func(Progress, bool)); fn != nil {
		fn(p, done)
	}
	var watchers []func(Progress, bool)
	e.mu.Lock()
	for _, fn := range e.watchers {
		watchers = append(watchers, fn)
	}
	k := progressKey{p.Peer, p.Space}
	if done {
		delete(e.progress, k)
	} else {
		cp := p
		e.progress[k] = &cp
	}
	e.mu.Unlock()
	for _, fn := range watchers {
		fn(p, done)
	}
	e.emit(Event{Kind: EventProgress, Peer: p.Peer, Space: p.Space, Progress: p})
}
