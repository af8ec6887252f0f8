package sync

import (
	"context"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
)

// LogTail and RegionIDs expose, to the external tests, the two ways the
// requester's filter finds its entries.
var LogTail = logTail

func RegionIDs(ctx context.Context, x Local, starts, known []dag.ID, limit int) ([]dag.ID, error) {
	nodes, err := region(ctx, x, starts, known, limit, false)
	if err != nil {
		return nil, err
	}
	ids := make([]dag.ID, len(nodes))
	for i, n := range nodes {
		ids[i] = n.id
	}
	return ids, nil
}

// SetCatchUpStall sets the period of a node's catch-up stall rule: a peer
// that brings fewer than 256 entries in it is dropped from the catch-up.
func SetCatchUpStall(n *Node, d time.Duration) { n.catchStall = d }

// CatchingUp reports whether a ranged catch-up of space runs on n: once
// it is over, it has sent every event of its workers.
func CatchingUp(n *Node, space string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.catchups[space] != nil
}

// CatchUpSim drives a ranged catch-up's coordinator (multipull.go) with no
// network: the test plays the workers, claiming spans, delivering their
// batches, finishing and dropping them in any order it likes, while the
// coordinator ingests in order of position into a real Local.
type CatchUpSim struct {
	n  *Node
	cu *catchUp
	ws map[string]*cuWorker
}

// NewCatchUpSim starts the coordinator of a catch-up of space into local,
// with a worker for each of names (at most four), as startCatchUp does,
// and spans of at least span entries (firstSpan and minSpan in a node).
func NewCatchUpSim(local Local, space string, span uint64, names ...string) *CatchUpSim {
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{local: local, engine: NewEngine(local, Options{}), log: slog.New(slog.DiscardHandler),
		ctx: ctx, cancel: cancel, catchups: map[string]*catchUp{}}
	cctx, ccancel := context.WithCancel(ctx)
	cu := &catchUp{n: n, space: space, ctx: cctx, cancel: ccancel, done: make(chan struct{}),
		wake: make(chan struct{}), size: span, minSize: span, spans: map[uint64]*cuSpan{}}
	s := &CatchUpSim{n: n, cu: cu, ws: map[string]*cuWorker{}}
	for _, name := range names[:min(len(names), maxCatchUpPeers)] {
		w := &cuWorker{p: peer.ID(name)}
		cu.workers = append(cu.workers, w)
		s.ws[name] = w
	}
	n.catchups[space] = cu
	n.wg.Add(1)
	go cu.run()
	return s
}

// Claim has name claim a span, as its worker does before asking for it.
func (s *CatchUpSim) Claim(name string) (lo, hi uint64, ok bool) {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	w := s.ws[name]
	if len(w.inflight) >= pipelineDepth {
		return 0, 0, false
	}
	sp := s.cu.claim(w, true)
	if sp == nil {
		return 0, 0, false
	}
	w.inflight = append(w.inflight, sp)
	return sp.lo, sp.hi, true
}

// Inflight returns the span name receives now (the first it asked for).
func (s *CatchUpSim) Inflight(name string) (lo, hi, got uint64, ok bool) {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	w := s.ws[name]
	if w.gone || len(w.inflight) == 0 {
		return 0, 0, 0, false
	}
	sp := w.inflight[0]
	return sp.lo, sp.hi, sp.got, true
}

// Deliver hands a batch of name's current span to the coordinator.
func (s *CatchUpSim) Deliver(name string, items []Item) error {
	s.cu.mu.Lock()
	w := s.ws[name]
	sp := w.inflight[0]
	s.cu.mu.Unlock()
	return s.cu.deliver(w, sp, items)
}

// Finish ends name's current span as a response whose log header said
// length.
func (s *CatchUpSim) Finish(name string, length uint64) {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	s.cu.finish(s.ws[name], length)
}

// Drop ends name's worker as a peer that leaves: its spans go back, less
// what it delivered.
func (s *CatchUpSim) Drop(name string) {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	s.cu.retire(s.ws[name])
}

// Gone reports whether name's worker is out of the catch-up.
func (s *CatchUpSim) Gone(name string) bool {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	return s.ws[name].gone
}

// Done is closed when the catch-up has ended; Err is then its error.
func (s *CatchUpSim) Done() <-chan struct{} { return s.cu.done }
func (s *CatchUpSim) Err() error            { return s.cu.err }

// Close stops the coordinator.
func (s *CatchUpSim) Close() { s.n.cancel(); s.n.wg.Wait() }

// Stats returns what name's worker brought, as the catch-up counts it.
func (s *CatchUpSim) Stats(name string) Stats {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	return s.ws[name].st
}

// Ahead returns how many spans are claimed and not yet ingested, and the
// most the window allows with the workers it had at the start.
func (s *CatchUpSim) Ahead() (n, most int) {
	s.cu.mu.Lock()
	defer s.cu.mu.Unlock()
	return len(s.cu.spans), min(catchWindow, 2*len(s.cu.workers)+2)
}

// DeflateFrame and DecodeBatchFrame expose the deflated batch frames to
// the external benchmark.
var (
	DeflateFrame     = deflateFrame
	DecodeBatchFrame = decodeBatchFrame
)
