package sync

// The reconciliation algorithm (docs/sync-protocol.md, "Algorithm"): the
// walk that finds what one side has and the other lacks, the responder's
// side (Serve) and the requester's (Pull).

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/heads"
)

type node struct {
	id      dag.ID
	pos     uint64
	parents []dag.ID
}

type posHeap []node

func (h posHeap) Len() int           { return len(h) }
func (h posHeap) Less(i, j int) bool { return h[i].pos > h[j].pos }
func (h posHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *posHeap) Push(x any)        { *h = append(*h, x.(node)) }
func (h *posHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

var errWalkLimit = errors.New("sync: walk limit reached")

// region returns the applied entries reachable from starts that are not
// ancestors of known (ancestry reflexive), newest first, with their
// parents. It walks the local log positions downwards: a position is a
// linear extension of the DAG, so when an entry is popped every path to it
// from a start has been walked, and its marks are final. The walk stops as
// soon as nothing unmarked is left, so its cost is the size of the region
// plus the frontier of known's ancestry beside it, not the DAG's.
//
// With limit > 0 it stops after limit entries: with errWalkLimit when
// strict, else returning what it found.
func region(ctx context.Context, x Local, starts, known []dag.ID, limit int, strict bool) ([]node, error) {
	const fR, fK = 1, 2
	flags := make(map[dag.ID]uint8, len(starts)+len(known))
	h := &posHeap{}
	unmarked := 0
	push := func(id dag.ID, f uint8) error {
		if old, ok := flags[id]; ok {
			nf := old | f
			if nf != old {
				flags[id] = nf
				if old == fR {
					unmarked--
				}
			}
			return nil
		}
		pos, err := x.Position(ctx, id)
		if err != nil {
			return err
		}
		flags[id] = f
		if f == fR {
			unmarked++
		}
		heap.Push(h, node{id: id, pos: pos})
		return nil
	}
	for _, id := range known {
		if err := push(id, fK); err != nil {
			return nil, err
		}
	}
	for _, id := range starts {
		if err := push(id, fR); err != nil {
			return nil, err
		}
	}
	var out []node
	for h.Len() > 0 && unmarked > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := heap.Pop(h).(node)
		f := flags[n.id]
		ps, err := x.Parents(ctx, n.id)
		if err != nil {
			return nil, err
		}
		pf := uint8(fK)
		if f == fR {
			unmarked--
			if limit > 0 && len(out) >= limit {
				if strict {
					return nil, errWalkLimit
				}
				return out, nil
			}
			n.parents = ps
			out = append(out, n)
			pf = fR
		}
		for _, p := range ps {
			if err := push(p, pf); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// appliedIn returns the ids of ids applied in space, in order.
func appliedIn(ctx context.Context, x Local, space string, ids []dag.ID) ([]dag.ID, error) {
	var out []dag.ID
	for _, id := range ids {
		st, err := x.Has(ctx, id)
		if err != nil {
			return nil, err
		}
		if st != dag.Applied {
			continue
		}
		e, err := x.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if e.Space == space {
			out = append(out, id)
		}
	}
	return out, nil
}

// closeOnDone closes s (if it is an io.Closer) when ctx ends, so that a
// read or write blocked on a silent peer returns.
func closeOnDone(ctx context.Context, s io.ReadWriter) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		if c, ok := s.(io.Closer); ok {
			c.Close()
		}
	})
}

// ctxErr prefers ctx's error to the one a closed stream gave.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Serve answers the requests of peer on s until peer closes its side,
// ctx ends (s is closed then, if it is an io.Closer), or something goes
// wrong. The caller closes s afterwards.
func (e *Engine) Serve(ctx context.Context, peer string, s io.ReadWriter) (err error) {
	defer closeOnDone(ctx, s)()
	defer func() { err = ctxErr(ctx, err) }()
	c := newConn(s)
	for {
		typ, p, err := c.read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil && typ == FrameLogRequest && c.ranges {
			if err := e.serveLog(ctx, c, peer, p); err != nil {
				return err
			}
			continue
		}
		if err == nil && typ != FrameRequest {
			err = &ProtocolError{Code: CodeUnexpected, Detail: fmt.Sprintf("frame type %#x where a request was due", typ)}
		}
		var req *Request
		if err == nil {
			req, err = DecodeRequest(p)
		}
		if err != nil {
			if code := CodeOf(err); code == CodeMalformed || code == CodeUnexpected {
				e.charge(peer, chargeMalformed, 1) //nolint:errcheck // the stream ends anyway
				e.sendError(c, err)
			}
			return err
		}
		if err := e.gate(c, peer); err != nil {
			return err
		}
		if err := e.respond(ctx, c, peer, req); err != nil {
			if CodeOf(err) == 0 && ctx.Err() == nil {
				if errors.Is(err, errWalkLimit) {
					e.sendError(c, &ProtocolError{Code: CodeTooLarge, Detail: err.Error()})
				} else {
					e.sendError(c, &ProtocolError{Code: CodeInternal, Detail: "responder failed"})
				}
			}
			return err
		}
	}
}

func (e *Engine) sendError(c *conn, err error) {
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		return
	}
	if c.write(EncodeError(pe.Code, pe.Detail)) == nil {
		c.flush() //nolint:errcheck // best effort before closing
	}
}

// respond answers one request on c.
func (e *Engine) respond(ctx context.Context, c *conn, peer string, req *Request) error {
	x := e.local
	hs, err := dag.HeadsOf(ctx, x, req.Space)
	if err != nil {
		return err
	}
	known, err := appliedIn(ctx, x, req.Space, append(slices.Clone(req.Heads), req.Common...))
	if err != nil {
		return err
	}
	starts := hs
	var notFound []dag.ID
	if len(req.Want) > 0 {
		starts = nil
		have, err := appliedIn(ctx, x, req.Space, req.Want)
		if err != nil {
			return err
		}
		for _, id := range req.Want {
			if !slices.Contains(have, id) {
				notFound = append(notFound, id)
			}
		}
		starts = have
	}
	var send []dag.ID
	if len(known) == 0 && req.Filter == nil && len(req.Want) == 0 {
		// A fresh requester: the whole log, in log order, page by page,
		// without holding the space in memory.
		if err := e.streamLog(ctx, c, req.Space, hs); err != nil {
			return err
		}
	} else {
		nodes, err := region(ctx, x, starts, known, e.o.MaxWalk, true)
		if err != nil {
			return err
		}
		send = choose(nodes, req.Filter)
		if err := e.streamIDs(ctx, c, send); err != nil {
			return err
		}
	}
	if err := c.write(End{Heads: capIDs(hs), NotFound: notFound}.Encode()); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	// The requester now holds these heads, unless it refused something
	// (then it holds fewer, and ignores the ones it lacks when it names
	// them as Common in a pull of its own).
	if len(req.Want) == 0 {
		e.Seen(peer, req.Space, hs)
		e.setCommon(peer, req.Space, hs) // held here, and there now
	} else if len(starts) > 0 {
		// A pull for given heads (an announcement's): the requester now
		// holds those this node held too.
		e.Seen(peer, req.Space, starts)
	}
	return nil
}

// choose returns the entries of a region (newest first, as region gives
// them) to send to a requester whose filter is f, oldest first.
//
// An entry the filter does not hold is sent. An entry it holds is sent
// anyway when one of its parents is: the requester cannot hold an entry
// without its parents, so the filter was wrong. And it is sent when one
// of its children is sent: if the filter was wrong about
// it (a false positive, ≈ 1 %) the requester would otherwise get every
// descendant without it, all pending until a second request, and an
// honest responder would look like one flooding it with orphans. When the
// filter was right, that costs one duplicate at the edge of what the
// requester holds; it goes one generation up only, so a held chain is not
// sent again.
func choose(nodes []node, f *heads.Bloom) []dag.ID {
	sent := make(map[dag.ID]struct{}, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		ok := !filterHas(f, n.id)
		for _, p := range n.parents {
			if _, s := sent[p]; s {
				ok = true
				break
			}
		}
		if ok {
			sent[n.id] = struct{}{}
		}
	}
	if f != nil {
		inRegion := make(map[dag.ID]struct{}, len(nodes))
		for _, n := range nodes {
			inRegion[n.id] = struct{}{}
		}
		var up []dag.ID
		for _, n := range nodes {
			if _, s := sent[n.id]; !s {
				continue
			}
			for _, p := range n.parents {
				_, in := inRegion[p]
				if _, s := sent[p]; in && !s {
					up = append(up, p)
				}
			}
		}
		for _, id := range up {
			sent[id] = struct{}{}
		}
	}
	out := make([]dag.ID, 0, len(sent))
	for i := len(nodes) - 1; i >= 0; i-- {
		if _, s := sent[nodes[i].id]; s {
			out = append(out, nodes[i].id)
		}
	}
	return out
}

func capIDs(ids []dag.ID) []dag.ID {
	if len(ids) > MaxIDs {
		return ids[:MaxIDs]
	}
	return ids
}

// sampleSize is how many entries sampleBytes reads.
const sampleSize = 16

// sampleBytes estimates the size of n entries from the first few of ids.
func (e *Engine) sampleBytes(ctx context.Context, ids []dag.ID, n uint64) (uint64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var sum uint64
	k := min(len(ids), sampleSize)
	for _, id := range ids[:k] {
		en, err := e.local.Get(ctx, id)
		if err != nil {
			return 0, err
		}
		sum += uint64(len(en.Data))
	}
	return sum * n / uint64(k), nil
}

// lastPosition returns the highest log position of hs.
func lastPosition(ctx context.Context, x Local, hs []dag.ID) (uint64, error) {
	var last uint64
	for _, h := range hs {
		p, err := x.Position(ctx, h)
		if err != nil {
			return 0, err
		}
		last = max(last, p)
	}
	return last, nil
}

// LogScanner is implemented by a Local that reads a space's log in one
// pass (dag/badgerstore's ScanLog, through the node): fn gets the applied
// entries after position after, at most limit of them, in log order and in
// pages, as LogEntries called page after page would. The responder serves
// a space's whole log with it when the Local has it. A LogScanner must not
// hold what would stall other readers while fn waits (fn blocks while the
// requester does not read).
type LogScanner interface {
	ScanLog(ctx context.Context, space string, after uint64, limit int, fn func([]dag.Entry) error) error
}

func (e *Engine) streamLog(ctx context.Context, c *conn, space string, hs []dag.ID) error {
	count, err := lastPosition(ctx, e.local, hs)
	if err != nil {
		return err
	}
	const page = 4096
	lr, isReader := e.local.(LogReader)
	ls, isScanner := e.local.(LogScanner)
	first := page
	if isReader || isScanner {
		// Only the size estimate reads these ids (sampleBytes: the first
		// 16); the entries come from LogEntries below.
		first = sampleSize
	}
	after := uint64(0)
	ids, err := e.local.Log(ctx, space, after, first)
	if err != nil {
		return err
	}
	est, err := e.sampleBytes(ctx, ids, count)
	if err != nil {
		return err
	}
	if err := c.write(Header{Entries: count, Bytes: est}.Encode()); err != nil {
		return err
	}
	b := e.newBatcher(c)
	sent := uint64(0)
	if isScanner {
		// The whole log in one pass, read ahead of the batches.
		err := ls.ScanLog(ctx, space, 0, int(count), func(ens []dag.Entry) error {
			for _, en := range ens {
				if err := b.addEntry(ctx, en); err != nil {
					return err
				}
			}
			sent += uint64(len(ens))
			return nil
		})
		if err != nil {
			return err
		}
		ids = nil
	} else if isReader {
		// The entries of each run read in one go, not one Get each; a run
		// of entryPage entries holds at most entryPage × dag.MaxEnvelopeSize
		// (64 MiB), a few KiB for the usual envelopes of a few hundred bytes.
		const entryPage = 64
		for after = 0; sent < count; {
			ens, err := lr.LogEntries(ctx, space, after, int(min(count-sent, entryPage)))
			if err != nil {
				return err
			}
			if len(ens) == 0 {
				break
			}
			for _, en := range ens {
				if err := b.addEntry(ctx, en); err != nil {
					return err
				}
			}
			sent += uint64(len(ens))
			after += uint64(len(ens))
		}
		ids = nil
	}
	for len(ids) > 0 && sent < count {
		for _, id := range ids {
			if sent == count {
				break
			}
			if err := b.add(ctx, id); err != nil {
				return err
			}
			sent++
		}
		after += uint64(len(ids))
		if ids, err = e.local.Log(ctx, space, after, page); err != nil {
			return err
		}
	}
	if sent != count {
		return fmt.Errorf("sync: log of %s has %d entries, heads say %d", space, sent, count)
	}
	return b.flush()
}

func (e *Engine) streamIDs(ctx context.Context, c *conn, ids []dag.ID) error {
	est, err := e.sampleBytes(ctx, ids, uint64(len(ids)))
	if err != nil {
		return err
	}
	if err := c.write(Header{Entries: uint64(len(ids)), Bytes: est}.Encode()); err != nil {
		return err
	}
	b := e.newBatcher(c)
	for _, id := range ids {
		if err := b.add(ctx, id); err != nil {
			return err
		}
	}
	return b.flush()
}

// batcher cuts a response into bounded batch frames. Writes block when the
// requester does not read (the stream's flow control), so a responder never
// holds more than one batch: that is the backpressure.
type batcher struct {
	e       *Engine
	c       *conn
	items   []Item
	size    int
	objects map[dag.ID]struct{} // objects already sent in this response
	buf     []byte              // the last frame, reused for the next
	zbuf    []byte              // the last deflated frame, reused likewise
}

func (e *Engine) newBatcher(c *conn) *batcher {
	return &batcher{e: e, c: c, objects: map[dag.ID]struct{}{}}
}

func (b *batcher) add(ctx context.Context, id dag.ID) error {
	en, err := b.e.local.Get(ctx, id)
	if err != nil {
		return err
	}
	return b.addEntry(ctx, en)
}

// addEntry is add for an entry already read.
func (b *batcher) addEntry(ctx context.Context, en dag.Entry) error {
	x := b.e.local
	refs, err := x.Refs(ctx, en)
	if err != nil {
		return err
	}
	it := Item{Data: en.Data}
	size := len(en.Data) + 8
	for _, r := range refs {
		if _, done := b.objects[r]; done || len(it.Objects) == MaxItemObjects {
			continue
		}
		data, err := x.Object(ctx, r)
		if errors.Is(err, dag.ErrNotFound) {
			continue // the requester will refuse the entry if it needs it
		}
		if err != nil {
			return err
		}
		b.objects[r] = struct{}{}
		it.Objects = append(it.Objects, dag.Object{ID: r, Data: data})
		size += len(data) + 4
	}
	if len(b.items) > 0 && (b.size+size > b.e.o.MaxBatchBytes || len(b.items) >= b.e.o.MaxBatchItems) {
		if err := b.flush(); err != nil {
			return err
		}
	}
	b.items = append(b.items, it)
	b.size += size
	return nil
}

func (b *batcher) flush() error {
	if len(b.items) == 0 {
		return nil
	}
	f := AppendBatch(b.buf[:0], b.items)
	b.buf = f
	if len(f) > MaxFrame {
		return fmt.Errorf("sync: an entry with its objects is %d bytes, over the frame limit", len(f))
	}
	b.items, b.size = b.items[:0], 0
	if b.c.deflate {
		if z := deflateFrame(b.zbuf, f); z != nil {
			b.zbuf = z
			f = z
		}
	}
	if err := b.c.write(f); err != nil {
		return err
	}
	return b.c.flush()
}

// Pull asks peer, over s, for the entries of space that the local replica
// lacks, ingests them as they arrive, then asks by id for parents still
// missing, up to MaxRounds requests in all. It returns what it did. When
// ctx ends s is closed (if it is an io.Closer); else the caller closes s.
//
// Pulls from different peers may run at once: Ingest is atomic per batch
// and reports what another pull brought first as Duplicate. A slow or
// silent peer therefore holds up nobody else.
func (e *Engine) Pull(ctx context.Context, peer string, s io.ReadWriter, space string) (st Stats, err error) {
	if err := e.refused(peer); err != nil {
		return st, err
	}
	defer closeOnDone(ctx, s)()
	defer func() { err = ctxErr(ctx, err) }()
	e.emit(Event{Kind: EventSyncStart, Peer: peer, Space: space})
	c := newConn(s)
	pr := Progress{Peer: peer, Space: space}
	defer func() {
		st.BytesIn, st.BytesOut = c.in.Load(), c.out
		e.setProgress(ctx, pr, true)
		e.emit(Event{Kind: EventSyncDone, Peer: peer, Space: space, Stats: st, Err: err})
	}()
	x := e.local
	notFound := map[dag.ID]struct{}{}
	var want []dag.ID
	pending := 0
	for round := 1; ; round++ {
		hs, err := dag.HeadsOf(ctx, x, space)
		if err != nil {
			return st, err
		}
		common, err := e.common(ctx, peer, space)
		if err != nil {
			return st, err
		}
		filter, complete, err := e.filter(ctx, space, hs, common)
		if err != nil {
			return st, err
		}
		req := Request{Space: space, Heads: capIDs(hs), Common: common, Want: want, Filter: filter}
		if len(common) > 0 && complete {
			// Every head is either below common or in the filter: the
			// heads would tell the responder nothing more.
			req.Heads = nil
		}
		if err := c.write(req.Encode()); err != nil {
			return st, err
		}
		if err := c.flush(); err != nil {
			return st, err
		}
		st.Rounds++
		pr.Round = round
		end, err := e.receive(ctx, c, peer, space, &st, &pr, &pending)
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) && !pe.Remote && (pe.Code == CodeMalformed || pe.Code == CodeUnexpected) {
				if berr := e.charge(peer, chargeMalformed, 1); berr != nil {
					return st, errors.Join(err, berr)
				}
			}
			return st, err
		}
		e.Seen(peer, space, end.Heads)
		// The responder's heads that are held here now are common: they
		// stay so when a later announcement names heads not yet held.
		held, err := appliedIn(ctx, x, space, end.Heads[:min(len(end.Heads), maxCommon)])
		if err != nil {
			return st, err
		}
		e.setCommon(peer, space, held)
		for _, id := range end.NotFound {
			notFound[id] = struct{}{}
		}
		missing, err := e.missing(ctx, peer, space, notFound)
		if err != nil {
			return st, err
		}
		// A head of the responder that we still lack was hidden by a
		// filter false positive with nothing sent above it: ask for it.
		for _, h := range end.Heads {
			if _, nf := notFound[h]; nf || slices.Contains(missing, h) {
				continue
			}
			if lacks, err := e.lacks(ctx, h); err != nil {
				return st, err
			} else if lacks {
				missing = append(missing, h)
			}
		}
		st.Missing = len(missing)
		if len(missing) == 0 || round >= e.o.MaxRounds {
			// Only parents of entries this peer sent are its to produce:
			// it is charged for those it leaves missing, no more.
			st.Missing = len(missing) + len(notFound)
			if pending > 0 {
				return st, e.charge(peer, chargeUnresolved, min(pending, st.Missing))
			}
			return st, nil
		}
		want = capIDs(missing)
	}
}

// common returns the entries of space that both sides hold, as far as
// the requester knows: the peer's heads last seen, those held here. When
// some are not held (an announcement ahead of us, the usual reason to
// pull) the Common of the last request is added, which the peer held
// then and holds still, so that the request keeps naming what is shared.
func (e *Engine) common(ctx context.Context, peer, space string) ([]dag.ID, error) {
	seen, prev := e.lastSeen(peer, space)
	common, err := appliedIn(ctx, e.local, space, seen)
	if err != nil || len(common) == len(seen) {
		e.setCommon(peer, space, common)
		return common, err
	}
	prev = slices.DeleteFunc(slices.Clone(prev), func(id dag.ID) bool { return slices.Contains(common, id) })
	more, err := appliedIn(ctx, e.local, space, prev)
	if err != nil {
		return nil, err
	}
	common = append(common, more...)
	e.setCommon(peer, space, common)
	return common, nil
}

// lacks reports whether id is neither held nor quarantined.
func (e *Engine) lacks(ctx context.Context, id dag.ID) (bool, error) {
	st, err := e.local.Has(ctx, id)
	if err != nil || st != dag.Absent {
		return false, err
	}
	_, q, err := e.local.Quarantined(ctx, id)
	return !q, err
}

// missing returns the parents the space waits for, less those quarantined
// or that this peer said it does not hold. When Local charges pending
// entries to their senders (SourceMissing), only the parents of the
// entries this peer sent are asked of it: what other peers sent is not
// its to produce, so a flood of orphans from many peer ids costs an
// honest pull nothing.
func (e *Engine) missing(ctx context.Context, peer, space string, skip map[dag.ID]struct{}) ([]dag.ID, error) {
	var ids []dag.ID
	var err error
	if sm, ok := e.local.(SourceMissing); ok {
		ids, err = sm.MissingFrom(ctx, space, "peer:"+peer)
	} else {
		ids, err = e.local.Missing(ctx, space)
	}
	if err != nil {
		return nil, err
	}
	out := ids[:0]
	for _, id := range ids {
		if _, ok := skip[id]; ok {
			continue
		}
		if _, q, err := e.local.Quarantined(ctx, id); err != nil {
			return nil, err
		} else if q {
			continue
		}
		out = append(out, id)
	}
	return out, nil
}

// filter summarises the local entries of space that are not ancestors of
// common (so the peer may lack them), newest first up to MaxFilterEntries.
// It is nil when there are none. complete is false when the filter had to
// leave entries out.
//
// Pending entries are left out: any peer can make them (entries with
// parents nobody has), so counting them would let a flood of orphans grow
// every request and hide entries behind false positives. A pending entry
// the responder sends again is a duplicate, nothing worse.
func (e *Engine) filter(ctx context.Context, space string, hs, common []dag.ID) (f *heads.Bloom, complete bool, err error) {
	var ids []dag.ID
	if len(common) == 0 {
		ids, err = logTail(ctx, e.local, space, hs, e.o.MaxFilterEntries+1)
		if err != nil {
			return nil, false, err
		}
	}
	if ids == nil {
		nodes, err := region(ctx, e.local, hs, common, e.o.MaxFilterEntries+1, false)
		if err != nil {
			return nil, false, err
		}
		ids = make([]dag.ID, len(nodes))
		for i, n := range nodes {
			ids[i] = n.id
		}
	}
	complete = len(ids) <= e.o.MaxFilterEntries
	if !complete {
		ids = ids[:e.o.MaxFilterEntries]
	}
	if len(ids) == 0 {
		return nil, complete, nil
	}
	salt := make([]byte, heads.MinSaltLen)
	if _, err := io.ReadFull(e.o.Rand, salt); err != nil {
		return nil, false, err
	}
	f, err = heads.NewBloom(salt, min(len(ids), MaxFilterIDs), BitsPerID)
	if err != nil {
		return nil, false, err
	}
	for _, id := range ids {
		f.Add(id)
	}
	return f, complete, nil
}

// logTail returns the newest n applied entries of space, newest first,
// when hs are its heads: what region walks from hs with nothing known in
// common, since every applied entry is an ancestor-or-self of a head and
// log positions (1, 2, … without gaps) are a linear extension of the DAG.
// The log gives them in one ordered read where region reads each entry's
// position and parents (two store lookups per entry: 1.5 CPU-s of a 100k
// node-to-node sync went to the filter of the source's own pull from the
// fresh node). It returns nil, for region to walk, when the log does not
// hold what the positions promise.
func logTail(ctx context.Context, x Local, space string, hs []dag.ID, n int) ([]dag.ID, error) {
	last, err := lastPosition(ctx, x, hs)
	if err != nil {
		return nil, err
	}
	after := uint64(0)
	if last > uint64(n) {
		after = last - uint64(n)
	}
	ids, err := x.Log(ctx, space, after, n)
	if err != nil {
		return nil, err
	}
	if uint64(len(ids)) != last-after {
		return nil, nil
	}
	slices.Reverse(ids)
	return ids, nil
}

// readAhead is how many frames the requester reads ahead of Ingest: enough
// for Ingest to take the default IngestItems at once from batches of the
// default size.
const readAhead = 4

// receive reads one response and ingests it.
func (e *Engine) receive(ctx context.Context, c *conn, peer, space string, st *Stats, pr *Progress, pending *int) (End, error) {
	typ, p, err := c.read()
	if err != nil {
		return End{}, err
	}
	if typ == FrameError {
		return End{}, decodeError(p)
	}
	if typ != FrameHeader {
		return End{}, &ProtocolError{Code: CodeUnexpected, Detail: fmt.Sprintf("frame type %#x where a header was due", typ)}
	}
	h, err := decodeHeader(p)
	if err != nil {
		return End{}, err
	}
	pr.EntriesExpected, pr.EntriesDone, pr.BytesExpected, pr.BytesDone = h.Entries, 0, h.Bytes, 0
	e.setProgress(ctx, *pr, false)
	// Read ahead while ingesting: frames are read from the stream and
	// their batches decoded by a goroutine that stays at most readAhead
	// frames ahead, so the responder and the transport work while Ingest
	// runs, and backpressure holds. When the Local is a Preparer, a second
	// goroutine hands it each batch, at most readAhead more frames behind
	// the reader, so that batch k+1 is verified while batch k is judged and
	// written, and the stream is read meanwhile.
	type frame struct {
		typ   byte
		p     []byte
		items []Item // the batch, decoded, when typ is a batch
		err   error
	}
	frames := make(chan frame, readAhead)
	stop := make(chan struct{})
	defer close(stop)
	// send hands f to out unless the receive has returned; it reports
	// whether the goroutine goes on.
	send := func(out chan<- frame, f frame) bool {
		select {
		case out <- f:
		case <-stop:
			return false
		}
		return f.err == nil && isBatch(f.typ)
	}
	read := frames
	prep, _ := e.local.(Preparer)
	if prep != nil {
		// The reader hands its batches to a second goroutine that
		// prepares them, so that the stream is read (and the responder
		// may send) while a batch is being verified.
		read = make(chan frame, readAhead)
		go func() {
			for f := range read {
				if f.err == nil && isBatch(f.typ) {
					prep.Prepare(ctx, space, f.items)
				}
				if !send(frames, f) {
					return
				}
			}
		}()
	}
	go func() {
		if prep != nil {
			defer close(read) // ends the preparer's range
		}
		for {
			typ, p, err := c.read()
			var items []Item
			if err == nil && isBatch(typ) {
				items, err = decodeBatchFrame(typ, p)
				p = nil // the items are what is kept
			}
			if !send(read, frame{typ, p, items, err}) {
				return
			}
		}
	}()
	var (
		held     *frame   // a frame read while gathering batches, handled next
		carry    []Item   // a batch read while gathering that did not fit, ingested next
		gathered [][]Item // the batches gathered, for the next gathering
	)
	for {
		items := carry
		carry = nil
		if items == nil {
			var f frame
			if held != nil {
				f, held = *held, nil
			} else {
				select {
				case f = <-frames:
				case <-ctx.Done():
					return End{}, ctx.Err()
				}
			}
			typ, p, err := f.typ, f.p, f.err
			if err != nil {
				return End{}, err
			}
			items = f.items
			switch typ {
			case FrameBatch, FrameBatchDeflate:
			case FrameEnd:
				if pr.EntriesDone != h.Entries {
					return End{}, malformed("header announced %d entries, %d came", h.Entries, pr.EntriesDone)
				}
				return decodeEnd(p)
			case FrameError:
				return End{}, decodeError(p)
			default:
				return End{}, &ProtocolError{Code: CodeUnexpected, Detail: fmt.Sprintf("frame type %#x in a response", typ)}
			}
		}
		// Batches already read go to Ingest together, up to IngestItems
		// (see Options). Only what has arrived is taken; nothing waits.
		// They are joined once all are in hand (joinBatches).
		more, n := append(gathered[:0], items), len(items)
	gather:
		for n < e.o.IngestItems {
			select {
			case g := <-frames:
				if g.err != nil || !isBatch(g.typ) {
					held = &g
					break gather
				}
				if n+len(g.items) > e.o.IngestItems {
					carry = g.items
					break gather
				}
				more, n = append(more, g.items), n+len(g.items)
			default:
				break gather
			}
		}
		items = joinBatches(more, n)
		clear(more)
		gathered = more[:0]
		if pr.EntriesDone+uint64(len(items)) > h.Entries {
			return End{}, malformed("more entries than the header announced (%d)", h.Entries)
		}
		res, err := e.local.Ingest(dag.WithSource(ctx, "peer:"+peer), space, items)
		if err != nil {
			return End{}, err
		}
		if len(res.Items) != len(items) {
			return End{}, fmt.Errorf("sync: Ingest returned %d results for %d items", len(res.Items), len(items))
		}
		size := itemsSize(items)
		st.Received += len(items)
		st.EntryBytes += size
		invalid := 0
		for _, r := range res.Items {
			switch r.Outcome {
			case Accepted:
				st.Accepted++
			case Pending:
				st.Pending++
				*pending++
			case Duplicate:
				st.Duplicate++
				if r.Code != "" { // sent again after it was refused
					invalid++
				}
			case Quarantined:
				st.Quarantined++
				invalid++
				e.emit(Event{Kind: EventQuarantined, Peer: peer, Space: space, ID: r.ID, Code: r.Code, Reason: r.Reason})
			}
		}
		pr.EntriesDone += uint64(len(items))
		pr.BytesDone += size
		if pr.EntriesDone > 0 && pr.EntriesDone < h.Entries {
			pr.BytesExpected = pr.BytesDone + (h.Entries-pr.EntriesDone)*pr.BytesDone/pr.EntriesDone
		} else if pr.EntriesDone == h.Entries {
			pr.BytesExpected = pr.BytesDone
		}
		e.setProgress(ctx, *pr, false)
		if err := e.charge(peer, chargeInvalid, invalid); err != nil {
			return End{}, err
		}
		// An honest responder sends in topological order, so entries stay
		// pending only where its filter was wrong: a flood of them is not
		// honest.
		if *pending > e.o.Budget.Unresolved {
			if err := e.charge(peer, chargeUnresolved, *pending); err != nil {
				return End{}, err
			}
		}
	}
}
