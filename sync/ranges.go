package sync

// Log ranges: /witan/sync/2/ranges is /witan/sync/2/deflate with two more
// frames, by which a requester asks a peer for a run of that peer's log by
// position instead of for what it lacks (docs/sync-protocol.md, "Catch-up
// from several peers"). A replica that holds nothing of a space asks
// several peers for disjoint runs at once (multipull.go), so that the
// space comes over several connections, each entry about once.

import (
	"context"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// ProtocolRangesID is ProtocolDeflateID plus FrameLogRequest from the
// requester and FrameLogHeader from the responder. A node serves it unless
// Config.PlainBatches is set; it asks for it only for a ranged catch-up.
const ProtocolRangesID = "/witan/sync/2/ranges"

// Frame types of ProtocolRangesID.
const (
	// FrameLogRequest asks for a run of the responder's log:
	// space:bytes after:uvarint limit:uvarint.
	FrameLogRequest byte = 0x06
	// FrameLogHeader opens the response to a FrameLogRequest:
	// entries:uvarint bytes:uvarint length:uvarint.
	FrameLogHeader byte = 0x07
)

// MaxLogRange bounds a FrameLogRequest's limit.
const MaxLogRange = 1 << 16

// LogRequest asks for the entries of Space at the responder's log
// positions After+1 … After+Limit, in log order (a topological order of
// the responder's DAG), with the objects they refer to.
type LogRequest struct {
	Space string
	After uint64
	Limit uint64 // 1 … MaxLogRange
}

// LogHeader opens the response to a LogRequest.
type LogHeader struct {
	// Entries is the number of entries that follow: exactly
	// min(Limit, Length − After), or 0 when Length ≤ After.
	Entries uint64
	// Bytes estimates their size; 0 when unknown.
	Bytes uint64
	// Length is the responder's log length in the space (its last
	// position).
	Length uint64
}

// want returns the entries a LogHeader of length must announce for r.
func (r LogRequest) want(length uint64) uint64 {
	if length <= r.After {
		return 0
	}
	return min(r.Limit, length-r.After)
}

// Encode returns the log request as a frame body (type byte first).
func (r LogRequest) Encode() []byte {
	e := enc{b: []byte{FrameLogRequest}}
	e.bytes([]byte(r.Space))
	e.uvarint(r.After)
	e.uvarint(r.Limit)
	return e.b
}

// DecodeLogRequest decodes a log request frame's payload (without its
// type byte) from untrusted bytes. Every error is a *ProtocolError with
// CodeMalformed.
func DecodeLogRequest(p []byte) (LogRequest, error) {
	d := dec{b: p}
	r := LogRequest{Space: string(d.bytes(dag.MaxSpaceLen))}
	r.After = d.uvarint()
	r.Limit = d.uvarint()
	if err := d.done(); err != nil {
		return LogRequest{}, err
	}
	if r.Space == "" {
		return LogRequest{}, malformed("empty space")
	}
	if r.Limit == 0 || r.Limit > MaxLogRange {
		return LogRequest{}, malformed("log range of %d entries (want 1 to %d)", r.Limit, MaxLogRange)
	}
	if r.After > r.After+r.Limit {
		return LogRequest{}, malformed("log range past the last position")
	}
	return r, nil
}

// Encode returns the log header as a frame body.
func (h LogHeader) Encode() []byte {
	e := enc{b: []byte{FrameLogHeader}}
	e.uvarint(h.Entries)
	e.uvarint(h.Bytes)
	e.uvarint(h.Length)
	return e.b
}

// DecodeLogHeader decodes a log header frame's payload from untrusted
// bytes.
func DecodeLogHeader(p []byte) (LogHeader, error) {
	d := dec{b: p}
	h := LogHeader{Entries: d.uvarint(), Bytes: d.uvarint(), Length: d.uvarint()}
	if err := d.done(); err != nil {
		return LogHeader{}, err
	}
	if h.Entries > MaxLogRange || h.Entries > h.Length {
		return LogHeader{}, malformed("log header of %d entries in a log of %d (limit %d)", h.Entries, h.Length, MaxLogRange)
	}
	return h, nil
}

// ranger is what a stream may offer to say that it is of ProtocolRangesID:
// its requester may send FrameLogRequest.
type ranger interface{ LogRanges() bool }

// LogRanges reports whether the stream is of ProtocolRangesID.
func (x *deadlined) LogRanges() bool { return x.ranges }

// serveLog answers one FrameLogRequest (payload p) on c, as Serve does a
// request: a malformed one is charged, a peer cut off or over its rate is
// refused.
func (e *Engine) serveLog(ctx context.Context, c *conn, peer string, p []byte) error {
	req, err := DecodeLogRequest(p)
	if err != nil {
		e.charge(peer, chargeMalformed, 1) //nolint:errcheck // the stream ends anyway
		e.sendError(c, err)
		return err
	}
	if err := e.gate(c, peer); err != nil {
		return err
	}
	if err := e.respondLog(ctx, c, peer, req); err != nil {
		if CodeOf(err) == 0 && ctx.Err() == nil {
			e.sendError(c, &ProtocolError{Code: CodeInternal, Detail: "responder failed"})
		}
		return err
	}
	return nil
}

// gate refuses, telling it why on c, a peer cut off or over its request
// rate, before a request or a log request is served.
func (e *Engine) gate(c *conn, peer string) error {
	if err := e.refused(peer); err != nil {
		e.sendError(c, &ProtocolError{Code: CodeRefused, Detail: "cut off"})
		return err
	}
	if !e.admit(peer) {
		err := &ProtocolError{Code: CodeRefused, Detail: "too many requests; retry within a minute"}
		e.sendError(c, err)
		return err
	}
	return nil
}

// logRun is how many entries respondLog reads at once.
const logRun = 64

// respondLog streams the run of the log that req asks for: a log header,
// batches, and an end frame with this node's heads. It walks nothing: the
// run is read from the log as it is, one run of logRun entries at a time.
func (e *Engine) respondLog(ctx context.Context, c *conn, peer string, req LogRequest) error {
	x := e.local
	hs, err := dag.HeadsOf(ctx, x, req.Space)
	if err != nil {
		return err
	}
	length, err := lastPosition(ctx, x, hs)
	if err != nil {
		return err
	}
	n := req.want(length)
	read := func(after uint64, limit int) ([]dag.Entry, error) {
		if lr, ok := x.(LogReader); ok {
			return lr.LogEntries(ctx, req.Space, after, limit)
		}
		ids, err := x.Log(ctx, req.Space, after, limit)
		if err != nil {
			return nil, err
		}
		out := make([]dag.Entry, 0, len(ids))
		for _, id := range ids {
			en, err := x.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			out = append(out, en)
		}
		return out, nil
	}
	var first []dag.Entry
	var est uint64
	if n > 0 {
		if first, err = read(req.After, int(min(n, logRun))); err != nil {
			return err
		}
		if len(first) > 0 {
			var sum uint64
			for _, en := range first {
				sum += uint64(len(en.Data))
			}
			est = sum * n / uint64(len(first))
		}
	}
	if err := c.write(LogHeader{Entries: n, Bytes: est, Length: length}.Encode()); err != nil {
		return err
	}
	b := e.newBatcher(c)
	sent, after := uint64(0), req.After
	for ens := first; sent < n; {
		if len(ens) == 0 {
			return fmt.Errorf("sync: log of %s ends at %d, heads say %d", req.Space, after, length)
		}
		for _, en := range ens {
			if sent == n {
				break
			}
			if err := b.addEntry(ctx, en); err != nil {
				return err
			}
			sent++
		}
		after += uint64(len(ens))
		if sent < n {
			if ens, err = read(after, int(min(n-sent, logRun))); err != nil {
				return err
			}
		}
	}
	if err := b.flush(); err != nil {
		return err
	}
	if err := c.write(End{Heads: capIDs(hs)}.Encode()); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	// A run to the end of the log is a catch-up's last: once the
	// requester has ingested it and the runs before it, it holds these
	// heads, unless it refused something (as after a whole pull,
	// respond). Its re-announcements are mostly suppressed once it holds
	// what this node announces, so this is how this node learns that it
	// caught up (a teacher's page lists it from Announced).
	if req.After+n == length {
		e.Seen(peer, req.Space, hs)
	}
	return nil
}

// errStopRange is returned by a receiveLog sink to stop reading a
// response (the stream is then unusable).
var errStopRange = errors.New("sync: log range stopped")

// receiveLog reads the response to req on c, handing each batch's items
// to sink as it arrives (sink may return errStopRange, or any error, to
// stop). It checks the response against req: the header's entries must be
// what its length promises, the batches must add up to it.
func (e *Engine) receiveLog(ctx context.Context, c *conn, req LogRequest, sink func(items []Item) error) (LogHeader, End, error) {
	typ, p, err := c.read()
	if err != nil {
		return LogHeader{}, End{}, ctxErr(ctx, err)
	}
	switch typ {
	case FrameLogHeader:
	case FrameError:
		return LogHeader{}, End{}, decodeError(p)
	default:
		return LogHeader{}, End{}, &ProtocolError{Code: CodeUnexpected, Detail: fmt.Sprintf("frame type %#x where a log header was due", typ)}
	}
	h, err := DecodeLogHeader(p)
	if err != nil {
		return LogHeader{}, End{}, err
	}
	if want := req.want(h.Length); h.Entries != want {
		return h, End{}, malformed("log header of %d entries after %d of %d for a limit of %d (want %d)", h.Entries, req.After, h.Length, req.Limit, want)
	}
	var got uint64
	for {
		typ, p, err := c.read()
		if err != nil {
			return h, End{}, ctxErr(ctx, err)
		}
		switch typ {
		case FrameBatch, FrameBatchDeflate:
		case FrameEnd:
			if got != h.Entries {
				return h, End{}, malformed("log header announced %d entries, %d came", h.Entries, got)
			}
			end, err := decodeEnd(p)
			return h, end, err
		case FrameError:
			return h, End{}, decodeError(p)
		default:
			return h, End{}, &ProtocolError{Code: CodeUnexpected, Detail: fmt.Sprintf("frame type %#x in a log response", typ)}
		}
		items, err := decodeBatchFrame(typ, p)
		if err != nil {
			return h, End{}, err
		}
		if got += uint64(len(items)); got > h.Entries {
			return h, End{}, malformed("more entries than the log header announced (%d)", h.Entries)
		}
		if err := sink(items); err != nil {
			return h, End{}, err
		}
	}
}
