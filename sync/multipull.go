package sync

// Catch-up from several peers (docs/sync-protocol.md, "Catch-up from
// several peers"). A node that holds nothing of a space, seeing several
// connected peers offer it, asks each for disjoint runs of its log
// (spans of log positions, over ProtocolRangesID) at once, as BitTorrent
// fetches pieces: one connection's throughput under loss is what bounds a
// late laptop's catch-up on a lossy Wi-Fi, and several connections
// multiply it. The spans are ingested in order of position, the span at
// the front as it streams and the others from a buffer, so that with
// peers whose logs agree (a space each of them took from the same source)
// no entry waits for its parents and each comes once. Where logs differ,
// an entry may come twice or not at all: the ordinary pulls that follow
// the catch-up, from each of these peers, fetch what is still missing.
//
// What one peer can cost: a peer that stalls (fewer than freshMinEntries
// in catchStall), sends entries that are mostly not new, leaves more
// than Budget.Unresolved pending, sends invalid entries past its budget,
// or breaks the protocol is dropped from the catch-up and its spans go
// back to the others, less what it already brought. Memory is bounded by
// the window: at most catchWindow spans not yet ingested, each holding at
// most spanBytes not yet ingested (a span that would pass it is cut short
// and the rest of it asked again later, or, at the front, waits for the
// ingest).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	gosync "sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/witan-dev/witan/dag"
)

// Bounds of a ranged catch-up.
const (
	// maxCatchUpPeers is the most peers one catch-up pulls from at once.
	maxCatchUpPeers = 4
	// firstSpan is the size of the spans asked before any peer has told
	// its log's length; later spans are a quarter of each peer's share,
	// between minSpan and maxSpan entries.
	firstSpan = 512
	minSpan   = 256
	maxSpan   = 4096
	// pipelineDepth is how many span requests a peer has outstanding on
	// its stream: the next is asked while the last arrives, so that no
	// round trip is idle.
	pipelineDepth = 2
	// spanBytes bounds the bytes of entries a span holds not yet
	// ingested.
	spanBytes = 4 << 20
	// catchWindow bounds the spans claimed and not yet ingested: at most
	// catchWindow × spanBytes are buffered.
	catchWindow = 12
	// catchIdle is how long a peer's stream stays open with nothing to
	// ask (the window full) before it is closed; the responder would
	// close it at StreamTimeout.
	catchIdle = 10 * time.Second
)

// catchStall is the default of Node.catchStall: a peer that brings fewer
// than freshMinEntries in it while it has a span to send is dropped.
const catchStall = freshStall

// catchUp is one ranged catch-up of a space.
type catchUp struct {
	n      *Node
	space  string
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wg     gosync.WaitGroup // the workers

	mu       gosync.Mutex
	wake     chan struct{} // closed and replaced on every change
	workers  []*cuWorker
	length   uint64 // the longest log a peer reported
	known    bool   // some peer reported its length
	size     uint64 // entries per span
	minSize  uint64 // the least size, once a length is known (minSpan)
	cursor   uint64 // positions at or above it were never handed out
	queue    []posRange
	spans    map[uint64]*cuSpan // claimed and not yet ingested, by lo
	ingested uint64             // positions up to it are ingested
	ended    bool
	err      error
}

// posRange is log positions lo+1 … hi (lo < hi).
type posRange struct{ lo, hi uint64 }

// cuSpan is a span claimed by a worker: the responder's positions lo+1 …
// hi, and what has come of them.
type cuSpan struct {
	lo, hi  uint64
	owner   *cuWorker
	batches [][]Item
	taken   int    // batches handed to Ingest
	got     uint64 // entries received
	bytes   int    // bytes received, not yet handed to Ingest
	done    bool   // whole: hi = lo + got
	fresh   int    // entries Ingest accepted or kept pending
	seen    int    // entries Ingest judged
}

// cuWorker pulls spans from one peer.
type cuWorker struct {
	p        peer.ID
	length   uint64 // the peer's log length, once lengthOK
	lengthOK bool
	inflight []*cuSpan // asked, in order
	gone     bool
	why      string
	stream   network.Stream
	progress uint64 // entries received
	mark     time.Time
	markProg uint64
	pending  int
	st       Stats
}

// catchUpFirst runs, or joins, a ranged catch-up of space before a pull
// of it from p, when this node holds nothing of space and p offers it. It
// returns once the catch-up ended, with what p sent in it (the pull that
// follows then asks p only for what is still missing), at once when no
// catch-up applies.
func (n *Node) catchUpFirst(ctx context.Context, p peer.ID, space string) (Stats, error) {
	if n.cfg.SerialCatchUp || n.cfg.PlainBatches || n.cfg.Manual || !n.offered(p, TopicPrefix+space) {
		return Stats{}, nil
	}
	hs, err := dag.HeadsOf(ctx, n.local, space)
	if err != nil || len(hs) > 0 {
		return Stats{}, err
	}
	cu := n.startCatchUp(space, p)
	if cu == nil {
		return Stats{}, nil
	}
	select {
	case <-cu.done:
		return cu.stats(p), nil
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
}

// speaksRanges reports whether p may serve ProtocolRangesID: it does, or
// identify has not said yet.
func (n *Node) speaksRanges(p peer.ID) bool {
	ps := n.host.Peerstore()
	all, err := ps.GetProtocols(p)
	if err != nil || len(all) == 0 {
		return true
	}
	return slices.Contains(all, protocol.ID(ProtocolRangesID))
}

// startCatchUp returns the catch-up of space with p among its workers if
// there is room: the one running, or one started with p and the other
// connected peers that offer space (up to maxCatchUpPeers) when at least
// two of them may speak ProtocolRangesID. It returns nil when there is
// none: from one peer, the ordinary pull brings the space as fast.
func (n *Node) startCatchUp(space string, p peer.ID) *catchUp {
	var peers []peer.ID
	if n.speaksRanges(p) {
		peers = append(peers, p)
	}
	for _, q := range n.host.Network().Peers() {
		if q != p && n.offered(q, TopicPrefix+space) && n.speaksRanges(q) {
			peers = append(peers, q)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	if cu := n.catchups[space]; cu != nil {
		if len(peers) > 0 && peers[0] == p {
			cu.add(p)
		}
		return cu
	}
	if len(peers) < 2 {
		return nil
	}
	ctx, cancel := context.WithCancel(n.ctx)
	cu := &catchUp{n: n, space: space, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		wake: make(chan struct{}), size: firstSpan, minSize: minSpan, spans: map[uint64]*cuSpan{}}
	for _, q := range peers {
		cu.add(q)
	}
	n.catchups[space] = cu
	n.wg.Add(2)
	go cu.run()
	go cu.watch()
	return cu
}

// stats returns what p sent in the catch-up, once it has ended.
func (cu *catchUp) stats(p peer.ID) Stats {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	for _, w := range cu.workers {
		if w.p == p {
			return w.st
		}
	}
	return Stats{}
}

// add starts a worker for q unless one ran already, the catch-up has
// maxCatchUpPeers, or it ended. n.mu is held.
func (cu *catchUp) add(q peer.ID) bool {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	if cu.ended || len(cu.workers) >= maxCatchUpPeers {
		return false
	}
	for _, w := range cu.workers {
		if w.p == q {
			return false
		}
	}
	w := &cuWorker{p: q}
	cu.workers = append(cu.workers, w)
	cu.wg.Add(1)
	cu.n.wg.Add(1)
	go cu.work(w)
	cu.broadcast()
	return true
}

// broadcast wakes every goroutine waiting for a change. cu.mu is held.
func (cu *catchUp) broadcast() {
	close(cu.wake)
	cu.wake = make(chan struct{})
}

// live counts the workers still pulling. cu.mu is held.
func (cu *catchUp) live() int {
	k := 0
	for _, w := range cu.workers {
		if !w.gone {
			k++
		}
	}
	return k
}

// limitOf is the position past which w has nothing to send: the longest
// log known, and w's own once it told it. cu.mu is held.
func (cu *catchUp) limitOf(w *cuWorker) uint64 {
	limit := uint64(math.MaxUint64)
	if cu.known {
		limit = cu.length
	}
	if w.lengthOK {
		limit = min(limit, w.length)
	}
	return limit
}

// claim hands w the next span it can send, or nil: the lowest span given
// back by a peer that left, else a new one at the cursor. Past the
// window only the span at the front is handed out. cu.mu is held.
func (cu *catchUp) claim(w *cuWorker, window bool) *cuSpan {
	if cu.ended || w.gone {
		return nil
	}
	limit := cu.limitOf(w)
	full := window && len(cu.spans) >= min(catchWindow, 2*cu.live()+2)
	for i, q := range cu.queue {
		if q.lo >= limit || (full && q.lo != cu.ingested) {
			continue
		}
		if !window {
			return &cuSpan{}
		}
		cu.queue = slices.Delete(cu.queue, i, i+1)
		hi := min(q.hi, limit)
		if hi < q.hi {
			cu.requeue(posRange{hi, q.hi})
		}
		return cu.open(w, q.lo, hi)
	}
	if full || cu.cursor >= limit || (!cu.known && cu.cursor >= cu.size*maxCatchUpPeers*pipelineDepth) {
		return nil
	}
	if !window {
		return &cuSpan{}
	}
	hi := min(cu.cursor+cu.size, limit)
	sp := cu.open(w, cu.cursor, hi)
	cu.cursor = hi
	return sp
}

func (cu *catchUp) open(w *cuWorker, lo, hi uint64) *cuSpan {
	sp := &cuSpan{lo: lo, hi: hi, owner: w}
	cu.spans[lo] = sp
	return sp
}

// requeue gives back positions r for another peer. cu.mu is held.
func (cu *catchUp) requeue(r posRange) {
	i, _ := slices.BinarySearchFunc(cu.queue, r.lo, func(q posRange, lo uint64) int {
		return cmp.Compare(q.lo, lo)
	})
	cu.queue = slices.Insert(cu.queue, i, r)
}

// cut ends sp with what came of it and gives the rest back. cu.mu is held.
func (cu *catchUp) cut(sp *cuSpan) {
	if end := sp.lo + sp.got; end < sp.hi {
		cu.requeue(posRange{end, sp.hi})
		sp.hi = end
	}
	sp.done = true
	if sp.got == 0 {
		delete(cu.spans, sp.lo)
	}
}

// drop takes w out of the catch-up: its stream is reset, and its worker
// gives its spans back as it ends. cu.mu is held.
func (cu *catchUp) drop(w *cuWorker, why string) {
	if w.gone {
		return
	}
	w.gone, w.why = true, why
	if w.stream != nil {
		w.stream.Reset()
	}
	cu.n.log.Debug("catch-up: peer dropped", "peer", w.p, "space", cu.space, "why", why)
	cu.broadcast()
}

// finish ends w's first span, whose response came whole, from a peer
// whose log has length entries. cu.mu is held.
func (cu *catchUp) finish(w *cuWorker, length uint64) {
	w.length, w.lengthOK = length, true
	if !cu.known {
		// Spans of a quarter of each peer's share: the last ones of each
		// end about together.
		cu.known = true
		share := length / uint64(4*max(1, cu.live()))
		cu.size = min(max(share, cu.minSize), maxSpan)
	}
	cu.length = max(cu.length, length)
	cu.cut(w.inflight[0])
	w.inflight = w.inflight[1:]
	cu.broadcast()
}

// retire takes w out as its worker ends: its spans go back, less what
// they brought. cu.mu is held.
func (cu *catchUp) retire(w *cuWorker) {
	w.gone = true
	for _, sp := range w.inflight {
		cu.cut(sp)
	}
	w.inflight = nil
	cu.broadcast()
}

// finished reports whether nothing more can come: no span is being sent,
// the front is not buffered, and no live worker can send anything. cu.mu
// is held.
func (cu *catchUp) finished() bool {
	if cu.spans[cu.ingested] != nil {
		return false
	}
	for _, w := range cu.workers {
		if !w.gone && (len(w.inflight) > 0 || cu.claim(w, false) != nil) {
			return false
		}
	}
	return true
}

// work pulls spans from w's peer until nothing is left for it, it is
// dropped, or the catch-up ends.
func (cu *catchUp) work(w *cuWorker) {
	defer cu.n.wg.Done()
	defer cu.wg.Done()
	e, peerID := cu.n.engine, w.p.String()
	e.emit(Event{Kind: EventSyncStart, Peer: peerID, Space: cu.space})
	var (
		s network.Stream
		c *conn
	)
	closeStream := func(reset bool) {
		if s == nil {
			return
		}
		if reset {
			s.Reset()
		} else {
			s.Close()
		}
		cu.mu.Lock()
		w.st.BytesIn += c.in.Load()
		w.st.BytesOut += c.out
		w.stream = nil
		cu.mu.Unlock()
		s, c = nil, nil
	}
	defer func() {
		closeStream(true)
		cu.mu.Lock()
		cu.retire(w)
		cu.mu.Unlock()
		e.setProgress(cu.ctx, Progress{Peer: peerID, Space: cu.space}, true)
	}()
	for {
		cu.mu.Lock()
		var send []*cuSpan
		for len(w.inflight) < pipelineDepth {
			sp := cu.claim(w, true)
			if sp == nil {
				break
			}
			w.inflight = append(w.inflight, sp)
			send = append(send, sp)
		}
		if w.gone || cu.ended || cu.ctx.Err() != nil {
			cu.mu.Unlock()
			return
		}
		if len(w.inflight) == 0 {
			wake := cu.wake
			cu.mu.Unlock()
			t := time.NewTimer(catchIdle)
			select {
			case <-wake:
			case <-cu.ctx.Done():
			case <-t.C:
				closeStream(false)
			}
			t.Stop()
			continue
		}
		cu.mu.Unlock()
		if s == nil {
			octx, cancel := context.WithTimeout(cu.ctx, cu.n.cfg.StreamTimeout)
			ns, err := cu.n.host.NewStream(octx, w.p, ProtocolRangesID)
			cancel()
			if err != nil {
				cu.mu.Lock()
				w.why = fmt.Sprintf("open stream: %v", err)
				cu.mu.Unlock()
				return
			}
			s, c = ns, newConn(&deadlined{s: ns, d: cu.n.cfg.StreamTimeout})
			cu.mu.Lock()
			w.stream = s
			gone := w.gone
			cu.mu.Unlock()
			if gone {
				return
			}
		}
		for _, sp := range send {
			if err := c.write(LogRequest{Space: cu.space, After: sp.lo, Limit: sp.hi - sp.lo}.Encode()); err != nil {
				return
			}
		}
		if len(send) > 0 {
			if err := c.flush(); err != nil {
				return
			}
		}
		cu.mu.Lock()
		w.st.Rounds += len(send)
		sp := w.inflight[0]
		cu.mu.Unlock()
		req := LogRequest{Space: cu.space, After: sp.lo, Limit: sp.hi - sp.lo}
		h, end, err := e.receiveLog(cu.ctx, c, req, func(items []Item) error { return cu.deliver(w, sp, items) })
		if errors.Is(err, errStopRange) {
			// sp is full and not at the front: keep what came, give the
			// rest back, and start a fresh stream (this one is mid-response).
			cu.mu.Lock()
			for _, x := range w.inflight {
				cu.cut(x)
			}
			w.inflight = nil
			cu.broadcast()
			cu.mu.Unlock()
			closeStream(true)
			continue
		}
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) && !pe.Remote && (pe.Code == CodeMalformed || pe.Code == CodeUnexpected) {
				e.charge(peerID, chargeMalformed, 1) //nolint:errcheck // the peer leaves the catch-up anyway
			}
			cu.mu.Lock()
			if w.why == "" {
				w.why = err.Error()
			}
			cu.mu.Unlock()
			return
		}
		cu.mu.Lock()
		cu.finish(w, h.Length)
		cu.mu.Unlock()
		e.Seen(peerID, cu.space, end.Heads)
	}
}

// errDropped ends the response of a worker dropped meanwhile.
var errDropped = errors.New("sync: peer dropped from the catch-up")

// deliver takes a batch of sp from w. A span holds at most spanBytes of
// entries not yet ingested (a batch is at most MaxFrame): a batch that
// would pass it is refused when the span is not at the front (the rest
// of the span is asked again later, errStopRange), and waits while the
// front span's entries are ingested when it is (the stream's flow control
// then holds the peer).
func (cu *catchUp) deliver(w *cuWorker, sp *cuSpan, items []Item) error {
	size := itemsSize(items)
	// The front span's batches are ingested next: verify them now, beside
	// the Ingest of the batch before (Preparer). A later span's are left
	// to Ingest: the Local remembers a bounded number of verified entries,
	// and a span may wait behind megabytes of others.
	if prep, ok := cu.n.local.(Preparer); ok {
		cu.mu.Lock()
		front := sp.lo == cu.ingested
		cu.mu.Unlock()
		if front {
			prep.Prepare(cu.ctx, cu.space, items)
		}
	}
	cu.mu.Lock()
	for {
		if w.gone || cu.ctx.Err() != nil {
			cu.mu.Unlock()
			return errDropped
		}
		if sp.bytes == 0 || sp.bytes+int(size) <= spanBytes {
			break
		}
		if sp.lo != cu.ingested {
			cu.mu.Unlock()
			return errStopRange
		}
		wake := cu.wake
		cu.mu.Unlock()
		select {
		case <-wake:
		case <-cu.ctx.Done():
		}
		cu.mu.Lock()
	}
	sp.batches = append(sp.batches, items)
	sp.got += uint64(len(items))
	sp.bytes += int(size)
	w.progress += uint64(len(items))
	w.st.Received += len(items)
	w.st.EntryBytes += size
	pr := Progress{Peer: w.p.String(), Space: cu.space, Round: w.st.Rounds, EntriesDone: w.progress, EntriesExpected: w.progress}
	for _, x := range w.inflight {
		pr.EntriesExpected += x.hi - x.lo - x.got
	}
	cu.broadcast()
	cu.mu.Unlock()
	cu.n.engine.setProgress(cu.ctx, pr, false)
	return nil
}

// plus returns st with what o counted added (Missing is st's).
func (st Stats) plus(o Stats) Stats {
	st.Rounds += o.Rounds
	st.Received += o.Received
	st.Accepted += o.Accepted
	st.Pending += o.Pending
	st.Duplicate += o.Duplicate
	st.Quarantined += o.Quarantined
	st.EntryBytes += o.EntryBytes
	st.BytesIn += o.BytesIn
	st.BytesOut += o.BytesOut
	return st
}

// itemsSize is the bytes of items' entries and objects (Stats.EntryBytes).
func itemsSize(items []Item) uint64 {
	var size uint64
	for _, it := range items {
		size += uint64(len(it.Data))
		for _, o := range it.Objects {
			size += uint64(len(o.Data))
		}
	}
	return size
}

// joinBatches returns batches, n items in all, as one slice for one
// Ingest: a lone batch as it is, several copied once into a slice of
// their length (appending each to the ones before copied those again as
// the slice doubled).
func joinBatches(batches [][]Item, n int) []Item {
	if len(batches) == 1 {
		return batches[0]
	}
	items := make([]Item, 0, n)
	for _, b := range batches {
		items = append(items, b...)
	}
	return items
}

// run ingests the spans in order of position until the catch-up is
// finished, then ends it.
func (cu *catchUp) run() {
	defer cu.n.wg.Done()
	err := cu.ingest()
	cu.mu.Lock()
	cu.ended, cu.err = true, err
	for _, w := range cu.workers {
		if !w.gone {
			cu.drop(w, "")
		}
	}
	cu.broadcast()
	cu.mu.Unlock()
	cu.cancel()
	cu.wg.Wait()
	e := cu.n.engine
	cu.mu.Lock()
	workers := slices.Clone(cu.workers)
	cu.mu.Unlock()
	for _, w := range workers {
		var werr error
		if w.why != "" {
			werr = errors.New("sync: catch-up: " + w.why)
		}
		e.emit(Event{Kind: EventSyncDone, Peer: w.p.String(), Space: cu.space, Stats: w.st, Err: werr})
	}
	cu.n.log.Debug("catch-up ended", "space", cu.space, "ingested", cu.ingested, "length", cu.length, "err", err)
	cu.n.mu.Lock()
	delete(cu.n.catchups, cu.space)
	close(cu.done)
	cu.n.mu.Unlock()
}

// ingest hands the front span's batches to Local.Ingest as they come,
// then the next span's, and so on, until finished.
func (cu *catchUp) ingest() error {
	e := cu.n.engine
	for {
		cu.mu.Lock()
		h := cu.spans[cu.ingested]
		if h != nil && h.taken < len(h.batches) {
			k, n := h.taken, 0
			for k < len(h.batches) && (n == 0 || n+len(h.batches[k]) <= e.o.IngestItems) {
				n += len(h.batches[k])
				k++
			}
			items := joinBatches(h.batches[h.taken:k], n)
			clear(h.batches[h.taken:k])
			h.taken = k
			size := itemsSize(items)
			h.bytes -= int(size)
			w := h.owner
			cu.mu.Unlock()
			peerID := w.p.String()
			res, err := cu.n.local.Ingest(dag.WithSource(cu.ctx, "peer:"+peerID), cu.space, items)
			if err != nil {
				return err
			}
			if len(res.Items) != len(items) {
				return fmt.Errorf("sync: Ingest returned %d results for %d items", len(res.Items), len(items))
			}
			invalid, fresh, pending := 0, 0, 0
			for _, r := range res.Items {
				switch r.Outcome {
				case Accepted:
					fresh++
				case Pending:
					fresh++
					pending++
				case Duplicate:
					if r.Code != "" {
						invalid++
					}
				case Quarantined:
					invalid++
					e.emit(Event{Kind: EventQuarantined, Peer: peerID, Space: cu.space, ID: r.ID, Code: r.Code, Reason: r.Reason})
				}
			}
			cberr := e.charge(peerID, chargeInvalid, invalid)
			cu.mu.Lock()
			w.st.Accepted += res.Count(Accepted)
			w.st.Pending += pending
			w.st.Duplicate += res.Count(Duplicate)
			w.st.Quarantined += res.Count(Quarantined)
			w.pending += pending
			h.fresh += fresh
			h.seen += len(items)
			switch {
			case cberr != nil:
				cu.drop(w, cberr.Error())
			case w.pending > e.o.Budget.Unresolved:
				// Spans of logs that agree leave nothing pending.
				cu.drop(w, fmt.Sprintf("%d entries pending", w.pending))
			}
			cu.broadcast() // the front span has room again
			cu.mu.Unlock()
			continue
		}
		if h != nil && h.done {
			delete(cu.spans, h.lo)
			cu.ingested = h.hi
			if h.seen >= 64 && 2*h.fresh < h.seen {
				// Its log differs from the others' too much, or it sends
				// what it knows is held: not worth pulling ranges from.
				cu.drop(h.owner, fmt.Sprintf("%d of %d entries new", h.fresh, h.seen))
			}
			cu.broadcast()
			cu.mu.Unlock()
			continue
		}
		if cu.finished() {
			cu.mu.Unlock()
			return nil
		}
		wake := cu.wake
		cu.mu.Unlock()
		select {
		case <-wake:
		case <-cu.ctx.Done():
			return cu.ctx.Err()
		}
	}
}

// watch drops the workers that stall: fewer than freshMinEntries in
// catchStall while they have a span to send.
func (cu *catchUp) watch() {
	defer cu.n.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		var now time.Time
		select {
		case <-cu.ctx.Done():
			return
		case now = <-t.C:
		}
		cu.mu.Lock()
		for _, w := range cu.workers {
			if w.gone {
				continue
			}
			if len(w.inflight) == 0 || w.mark.IsZero() {
				w.mark, w.markProg = now, w.progress
				continue
			}
			if now.Sub(w.mark) < cu.n.catchStall {
				continue
			}
			if w.progress-w.markProg < freshMinEntries {
				cu.drop(w, fmt.Sprintf("stalled: %d entries in %v", w.progress-w.markProg, now.Sub(w.mark).Round(time.Second)))
				continue
			}
			w.mark, w.markProg = now, w.progress
		}
		cu.mu.Unlock()
	}
}
