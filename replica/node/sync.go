package node

// This file is the node's wiring to sync: it starts a sync.Node on itself
// (the node is the sync.Local), joins each space that changes here so that
// peers hear of it, answers who its peers are, and stops sync first on
// Close. Neither replica nor sync imports the other; this package imports
// both.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/sync"
)

// ErrNoSync is returned by the peer methods of a node that runs without
// sync (no Options.Sync, no StartSync).
var ErrNoSync = errors.New("node: this node runs without sync")

// Peer is one connected sync peer.
type Peer struct {
	ID    string   `json:"id"`
	Addrs []string `json:"addrs"`
	// Conns says how the peer is connected, one item per connection:
	// direct, hole-punched or relayed (via which relay), since when.
	Conns []sync.ConnInfo `json:"conns"`
}

// Pull is the progress of one running pull.
type Pull struct {
	Peer            string `json:"peer"`
	Space           string `json:"space"`
	Round           int    `json:"round"`
	EntriesDone     uint64 `json:"entries_done"`
	EntriesExpected uint64 `json:"entries_expected"`
	BytesDone       uint64 `json:"bytes_done"`
	BytesExpected   uint64 `json:"bytes_expected"`
}

// Offer is a space that connected peers announce (their gossip
// subscriptions): a session id or mem:NAME, the peers, and whether this
// node joined it. Only the peers' word until a pull checks what they send.
type Offer struct {
	Space  string   `json:"space"`
	Peers  []string `json:"peers"`
	Joined bool     `json:"joined"`
}

// SyncResult is what one pull of one space from a peer did.
type SyncResult struct {
	Space    string `json:"space"`
	Received int    `json:"received"`
	Accepted int    `json:"accepted"`
	// Duplicate counts entries already held (another pull, started by the
	// connection itself, may have brought them first).
	Duplicate int `json:"duplicate"`
	Rejected  int `json:"quarantined"`
	Rounds    int `json:"rounds"`
	// HeldBefore and HeldAfter count the space's log entries on this node
	// when the call began and when it ended: HeldAfter-HeldBefore is what
	// the node stored meanwhile, by this pull or by another one running at
	// the same time (which Accepted alone does not show).
	HeldBefore int `json:"held_before"`
	HeldAfter  int `json:"held_after"`
	// For a session pulled without error: what the check of the peer's
	// checkpoint found and what became of this node's cosignature of it
	// (p2pcheck.go); a fork_detected also sets Error.
	Checkpoint string `json:"checkpoint,omitempty"`
	ForkDetail string `json:"fork_detail,omitempty"`
	Witness    string `json:"witness,omitempty"`
	Error      string `json:"error,omitempty"`
}

// logSize counts a space's log entries (0 for a space without a log). Log
// positions are 1, 2, 3, … with no gaps (dag.Index.Position), and the
// entry last in the log is a head (a child is applied after its
// parents): the count is the highest position of a head, read in a few
// lookups rather than by paging through every id of the log (Connect
// counts before and after its pulls).
func (n *Node) logSize(ctx context.Context, space string) int {
	heads, err := n.Heads(ctx, space)
	if err != nil {
		return 0
	}
	var last uint64
	for _, h := range heads {
		if p, err := n.Position(ctx, h); err == nil {
			last = max(last, p)
		}
	}
	return int(last)
}

// syncState is the node's running sync, if any.
type syncState struct {
	mu     gosync.Mutex
	sn     *sync.Node
	unsub  func()
	joined map[string]bool
	// stopWitness stops the witness loop (p2pcheck.go) and waits for it.
	stopWitness func()
}

// StartSync starts sync over libp2p on this node with cfg (Options.Sync
// does it at Open). Besides cfg.Spaces and every space the node holds, the
// node joins each space that changes on it later (a session created here,
// a memory space written), so peers hear of it, unless cfg.Manual. ctx
// bounds only the start; sync runs until Close. A node runs one sync.
func (n *Node) StartSync(ctx context.Context, cfg sync.Config) (*sync.Node, error) {
	n.sync.mu.Lock()
	defer n.sync.mu.Unlock()
	if n.sync.sn != nil {
		return nil, errors.New("node: sync is already running")
	}
	if cfg.Logger == nil {
		cfg.Logger = n.log
	}
	// After each automatic pull the peer's checkpoint is checked and
	// co-signed (p2pcheck.go), then the caller's hook runs, if any.
	if then := cfg.AfterPull; then != nil {
		cfg.AfterPull = func(ctx context.Context, p peer.ID, space string) {
			n.afterPull(ctx, p, space)
			then(ctx, p, space)
		}
	} else {
		cfg.AfterPull = n.afterPull
	}
	sn, err := sync.NewNode(ctx, n, cfg)
	if err != nil {
		return nil, fmt.Errorf("node: start sync: %w", err)
	}
	n.sync.sn = sn
	if !cfg.Manual {
		n.sync.joined = map[string]bool{}
		for _, s := range sn.Spaces() {
			n.sync.joined[s] = true
		}
		n.sync.unsub = n.Subscribe(n.joinChanged)
		if n.witnessEvery > 0 {
			n.sync.stopWitness = n.startWitnessLoop(sn, n.witnessEvery)
		}
	}
	return sn, nil
}

// Join joins a space (a session id, or mem:NAME) without naming a peer:
// the node subscribes to its announcements and pulls it from whichever
// connected peer announces it (30k §4: spaces are agreed out of band).
func (n *Node) Join(ctx context.Context, space string) error {
	if err := CheckSpace(space); err != nil {
		return err
	}
	n.sync.mu.Lock()
	sn := n.sync.sn
	if sn != nil {
		n.sync.joined[space] = true
	}
	n.sync.mu.Unlock()
	if sn == nil {
		return ErrNoSync
	}
	return sn.Join(space)
}

// ErrHeld is returned by Leave for a space this node holds entries of.
var ErrHeld = errors.New("node: this node holds entries of the space")

// Joined reports whether the node's sync has joined space (at start, by
// Join, or because it changed here).
func (n *Node) Joined(space string) bool {
	sn := n.Sync()
	return sn != nil && slices.Contains(sn.Spaces(), space)
}

// Leave undoes Join for a space this node holds nothing of (a join that
// brought nothing): sync stops pulling it and tells the peers it no
// longer subscribes, so they stop listing it as this node's. A space the
// node holds entries of is refused (ErrHeld): leaving would only stop
// its sync until the next change or restart joins it again. Leaving a
// space not joined is a no-op.
func (n *Node) Leave(ctx context.Context, space string) error {
	if _, err := dag.ParseID(space); err != nil && !strings.HasPrefix(space, MemoryPrefix) {
		return fmt.Errorf("node: %q is neither a session id nor %sNAME", space, MemoryPrefix)
	}
	n.sync.mu.Lock()
	defer n.sync.mu.Unlock()
	sn := n.sync.sn
	if sn == nil {
		return ErrNoSync
	}
	heads, err := dag.HeadsOf(ctx, n, space)
	if err != nil {
		return err
	}
	if len(heads) > 0 {
		return fmt.Errorf("%w: %s", ErrHeld, space)
	}
	delete(n.sync.joined, space)
	return sn.Leave(space)
}

// joinChanged joins space once, off the notifying goroutine (Subscribe's
// callbacks must not block).
func (n *Node) joinChanged(space string) {
	n.sync.mu.Lock()
	defer n.sync.mu.Unlock()
	if n.sync.sn == nil || n.sync.joined[space] {
		return
	}
	n.sync.joined[space] = true
	go n.sync.sn.Join(space)
}

// Sync returns the running sync node, or nil.
func (n *Node) Sync() *sync.Node {
	n.sync.mu.Lock()
	defer n.sync.mu.Unlock()
	return n.sync.sn
}

// stopSync stops sync, if it runs.
func (n *Node) stopSync() error {
	n.sync.mu.Lock()
	sn, unsub, stopWitness := n.sync.sn, n.sync.unsub, n.sync.stopWitness
	n.sync.sn, n.sync.unsub, n.sync.stopWitness = nil, nil, nil
	n.sync.mu.Unlock()
	if unsub != nil {
		unsub()
	}
	if stopWitness != nil {
		stopWitness()
	}
	if sn == nil {
		return nil
	}
	return sn.Close()
}

// Peers returns the connected sync peers (none without sync).
func (n *Node) Peers() []Peer {
	sn := n.Sync()
	if sn == nil {
		return nil
	}
	h := sn.Host()
	var out []Peer
	for _, id := range h.Network().Peers() {
		pe := Peer{ID: id.String(), Addrs: []string{}, Conns: sn.Conns(id)}
		for _, c := range h.Network().ConnsToPeer(id) {
			pe.Addrs = append(pe.Addrs, c.RemoteMultiaddr().String())
		}
		if pe.Conns == nil {
			pe.Conns = []sync.ConnInfo{}
		}
		out = append(out, pe)
	}
	return out
}

// Available lists the sessions and memory spaces the connected peers
// announce, sorted, with the peers announcing each; names that are
// neither a session id nor mem:NAME are left out. None without sync.
func (n *Node) Available() []Offer {
	sn := n.Sync()
	if sn == nil {
		return nil
	}
	var out []Offer
	for _, o := range sn.Available() {
		if _, err := dag.ParseID(o.Space); err != nil && !strings.HasPrefix(o.Space, MemoryPrefix) {
			continue
		}
		ps := make([]string, len(o.Peers))
		for i, p := range o.Peers {
			ps[i] = p.String()
		}
		out = append(out, Offer{Space: o.Space, Peers: ps, Joined: o.Joined})
	}
	return out
}

// WithPullProgress returns a ctx under which the pulls Connect runs report
// to fn as their transfer moves (sync.WithProgress): after the peer's
// header of each round, after each batch ingested, and with done at the
// end. Only the pulls of the call made with this ctx report, not those
// the node starts by itself. fn must not block.
func WithPullProgress(ctx context.Context, fn func(p Pull, done bool)) context.Context {
	return sync.WithProgress(ctx, func(g sync.Progress, done bool) { fn(pullOf(g), done) })
}

// WatchPulls calls fn with every progress report of the pulls of space
// from any peer (the ones the node starts itself included) until cancel
// is called. fn must not block. Without sync nothing is reported.
func (n *Node) WatchPulls(space string, fn func(p Pull, done bool)) (cancel func()) {
	sn := n.Sync()
	if sn == nil {
		return func() {}
	}
	return sn.Engine().WatchProgress(func(g sync.Progress, done bool) {
		if g.Space == space {
			fn(pullOf(g), done)
		}
	})
}

func pullOf(g sync.Progress) Pull {
	return Pull{Peer: g.Peer, Space: g.Space, Round: g.Round, EntriesDone: g.EntriesDone,
		EntriesExpected: g.EntriesExpected, BytesDone: g.BytesDone, BytesExpected: g.BytesExpected}
}

// Pulls reports the pulls running now, for progress bars.
func (n *Node) Pulls() []Pull {
	sn := n.Sync()
	if sn == nil {
		return nil
	}
	var out []Pull
	for _, g := range sn.Engine().Progress() {
		out = append(out, pullOf(g))
	}
	return out
}

// Connect dials addr (a multiaddr with a /p2p/ part), joins spaces
// (spaces are agreed out of band, 30k §4) and pulls each from the peer
// now. A space that fails is reported in its result, not as the error.
func (n *Node) Connect(ctx context.Context, addr string, spaces []string) ([]SyncResult, error) {
	sn := n.Sync()
	if sn == nil {
		return nil, ErrNoSync
	}
	for _, s := range spaces {
		if err := CheckSpace(s); err != nil {
			return nil, err
		}
	}
	ai, err := peer.AddrInfoFromString(addr)
	if err != nil {
		return nil, err
	}
	// Counted before dialling: the connection itself starts pulls.
	before := make([]int, len(spaces))
	for i, s := range spaces {
		before[i] = n.logSize(ctx, s)
	}
	if err := sn.Connect(ctx, addr); err != nil {
		return nil, err
	}
	out := []SyncResult{}
	for i, s := range spaces {
		r := SyncResult{Space: s, HeldBefore: before[i]}
		if err := sn.Join(s); err != nil {
			r.Error = err.Error()
			out = append(out, r)
			continue
		}
		st, err := sn.SyncWith(ctx, ai.ID, s)
		r.Received, r.Accepted, r.Duplicate, r.Rejected, r.Rounds = st.Received, st.Accepted, st.Duplicate, st.Quarantined, st.Rounds
		if err == nil {
			var pc PeerCheck
			pc, err = n.checkPeer(ctx, sn, ai.ID, s)
			r.Checkpoint, r.ForkDetail, r.Witness = pc.Checkpoint, pc.ForkDetail, pc.Witness
		}
		if err != nil {
			r.Error = err.Error()
		}
		out = append(out, r)
	}
	for i := range out {
		out[i].HeldAfter = n.logSize(ctx, out[i].Space)
	}
	return out, nil
}
