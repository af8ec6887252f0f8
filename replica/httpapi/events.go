package httpapi

// This file is GET /events (30k §5): server-sent events for new log
// entries of one session, each with its finality.
//
// A client holds no queue on the node. Each stream keeps only its cursor
// (the log position of the last entry it sent, which is also the SSE event
// id) and, when woken, reads the log after it, a page at a time, as GET
// /log does. So the node's write path never waits for a reader: the
// notification that entries were applied is a non-blocking send into a
// one-slot channel, and a client that stops reading is dropped when a write
// to it does not finish within EventOptions.WriteTimeout. A dropped or
// disconnected client resumes with Last-Event-ID and loses nothing.
//
// Finality moves with checkpoints, which are not log entries: a stream
// watches the session's latest checkpoint and, when it grows, sends a
// "checkpoint" event saying which positions are now final_advisory. An
// entry sent after a checkpoint covers it (on resumption) is labelled
// final_advisory itself. Nothing says final: witan is an eventual node.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/statute"
)

// Defaults of EventOptions.
const (
	DefaultMaxEventClients   = 256
	DefaultEventHeartbeat    = 15 * time.Second
	DefaultEventPoll         = 250 * time.Millisecond
	DefaultEventWriteTimeout = 10 * time.Second
	// eventPage is how many log entries a stream reads at a time.
	eventPage = 100
	// maxLastEventID bounds the digits of Last-Event-ID.
	maxLastEventID = 20
	// maxTouchCache bounds a filtered stream's memory of which MRs and
	// changes touch its prefix.
	maxTouchCache = 4096
)

// CodeTooManyClients is the problem code of an event stream refused
// because the node already serves EventOptions.MaxClients of them, or is
// shutting down (StopEvents).
const CodeTooManyClients dag.Code = "witan:too_many_clients"

// EventOptions configure GET /events. The zero value works.
type EventOptions struct {
	// MaxClients bounds the streams served at once
	// (DefaultMaxEventClients); one more is refused with 503.
	MaxClients int
	// Heartbeat is how often an idle stream sends a comment line, so
	// proxies and browsers keep it open (DefaultEventHeartbeat).
	Heartbeat time.Duration
	// Poll is how often a stream looks for a new checkpoint
	// (DefaultEventPoll). New entries wake it at once.
	Poll time.Duration
	// WriteTimeout drops a client that does not take a write within it
	// (DefaultEventWriteTimeout).
	WriteTimeout time.Duration
}

func (o EventOptions) withDefaults() EventOptions {
	if o.MaxClients <= 0 {
		o.MaxClients = DefaultMaxEventClients
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultEventHeartbeat
	}
	if o.Poll <= 0 {
		o.Poll = DefaultEventPoll
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultEventWriteTimeout
	}
	return o
}

// EntryEvent is the data of an "entry" event: one accepted envelope, at
// its position in this node's log (also the event's id).
type EntryEvent struct {
	Session  string     `json:"session"`
	Position uint64     `json:"position"`
	Tx       dag.ID     `json:"tx"`
	Type     dag.TxType `json:"type"`
	Author   dag.Key    `json:"author"`
	// MR is the merge request the entry opens, votes on or determines.
	MR         *dag.ID          `json:"mr,omitempty"`
	Finality   replica.Finality `json:"finality"`
	Simulation bool             `json:"simulation,omitempty"`
}

// CheckpointEvent is the data of a "checkpoint" event: this node signed a
// checkpoint of Size entries, so every entry at a position up to Size is
// now final_advisory. Checkpoint is the signed checkpoint, whole.
type CheckpointEvent struct {
	Session    string           `json:"session"`
	Size       uint64           `json:"size"`
	Checkpoint json.RawMessage  `json:"checkpoint"`
	Finality   replica.Finality `json:"finality"`
	Simulation bool             `json:"simulation,omitempty"`
}

// eventHub counts the streams served, and ends them all on StopEvents.
type eventHub struct {
	clients  atomic.Int64
	stopOnce gosync.Once
	stop     chan struct{}
}

// EventClients returns how many event streams the server is serving now.
func (s *Server) EventClients() int { return int(s.hub.clients.Load()) }

// StopEvents ends every event stream now and refuses new ones, so that an
// http.Server's Shutdown, which waits for requests to finish, is not held
// up by streams that never do (witan up calls it through
// http.Server.RegisterOnShutdown). Clients reconnect elsewhere or later
// with Last-Event-ID.
func (s *Server) StopEvents() {
	s.hub.stopOnce.Do(func() { close(s.hub.stop) })
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	labels, err := s.sessionLabelsOf(ctx, space)
	if err != nil {
		return err
	}
	prefix := r.URL.Query().Get("nid_prefix")
	if prefix != "" {
		if err := statute.CheckNID(prefix); err != nil {
			return problemf(dag.CodeSchema, "nid_prefix: %v", err)
		}
	}
	after, err := s.lastEventID(ctx, r, space)
	if err != nil {
		return err
	}
	eo := s.o.Events
	select {
	case <-s.hub.stop:
		w.Header().Set("Retry-After", "5")
		return problemf(CodeTooManyClients, "this node is shutting down")
	default:
	}
	if n := s.hub.clients.Add(1); n > int64(eo.MaxClients) {
		s.hub.clients.Add(-1)
		w.Header().Set("Retry-After", "5")
		return problemf(CodeTooManyClients, "this node already serves %d event streams", eo.MaxClients)
	}
	defer s.hub.clients.Add(-1)
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/event-stream")
		return nil
	}

	wake := make(chan struct{}, 1)
	cancel := s.n.Subscribe(func(sp string) {
		if sp == space {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()

	rc := http.NewResponseController(w)
	// witan up's ReadTimeout would end the stream: an expired read
	// deadline cancels the request's context.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{s: s, w: w, rc: rc, space: space, labels: labels, prefix: prefix, pos: after,
		touch: map[dag.ID]bool{}, timeout: eo.WriteTimeout}
	// The first write flushes the headers, so the client knows at once
	// that the stream is open even when there is nothing to send yet.
	if err := st.send("retry: 2000\n\n"); err != nil {
		return nil
	}
	heartbeat := time.NewTicker(eo.Heartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(eo.Poll)
	defer poll.Stop()
	for {
		if err := st.catchUp(ctx); err != nil {
			var se sendError
			if ctx.Err() == nil && !errors.As(err, &se) {
				s.log.Error("httpapi: event stream", "session", space, "err", err)
			}
			return nil // headers are sent: the stream just ends
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.hub.stop:
			return nil
		case <-wake:
		case <-poll.C:
		case <-heartbeat.C:
			if err := st.send(": heartbeat\n\n"); err != nil {
				return nil
			}
		}
	}
}

// lastEventID reads where a client resumes: the Last-Event-ID header (a
// browser's EventSource sends it when it reconnects) or ?last_event_id=
// (for a first connection, which cannot set headers). It is a log
// position this node has given out, so at most the log's length.
func (s *Server) lastEventID(ctx context.Context, r *http.Request, space string) (uint64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("last_event_id")
	}
	if v == "" {
		return 0, nil
	}
	if len(v) > maxLastEventID {
		return 0, problemf(dag.CodeSchema, "Last-Event-ID: %d characters; want a log position of at most %d digits", len(v), maxLastEventID)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, problemf(dag.CodeSchema, "Last-Event-ID %q is not a log position (a decimal integer)", v)
	}
	if n == 0 {
		return 0, nil
	}
	ids, err := s.rep.Log(ctx, space, n-1, 1)
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, problemf(dag.CodeSchema, "Last-Event-ID %d is beyond this node's log of the session; resume from an id this node sent", n)
	}
	return n, nil
}

// stream is one client's state: where it is in the log, and the last
// checkpoint it was told of.
type stream struct {
	s       *Server
	w       http.ResponseWriter
	rc      *http.ResponseController
	space   string
	labels  sessionLabels
	prefix  string
	pos     uint64 // last position sent (or skipped by the filter)
	cpSize  uint64 // size of the last checkpoint sent
	touch   map[dag.ID]bool
	timeout time.Duration
}

// catchUp sends every entry after the cursor, then the latest checkpoint
// if it is newer than the last one sent.
func (st *stream) catchUp(ctx context.Context) error {
	for {
		ids, err := st.s.rep.Log(ctx, st.space, st.pos, eventPage)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		covered := uint64(0)
		if cp, ok := st.s.rep.LastCheckpoint(st.space); ok {
			covered = cp.Size
		}
		var b strings.Builder
		for i, id := range ids {
			pos := st.pos + uint64(i) + 1
			ev, keep, err := st.entry(ctx, pos, id, covered)
			if err != nil {
				return err
			}
			if !keep {
				continue
			}
			data, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "id: %d\nevent: entry\ndata: %s\n\n", pos, data)
		}
		st.pos += uint64(len(ids))
		if b.Len() > 0 {
			if err := st.send(b.String()); err != nil {
				return err
			}
		}
		if len(ids) < eventPage {
			break
		}
	}
	cp, ok := st.s.rep.LastCheckpoint(st.space)
	if !ok || cp.Size <= st.cpSize {
		return nil
	}
	raw, err := cp.MarshalJSON()
	if err != nil {
		return err
	}
	data, err := json.Marshal(CheckpointEvent{Session: st.space, Size: cp.Size, Checkpoint: raw,
		Finality: replica.FinalAdvisory, Simulation: st.labels.Simulation})
	if err != nil {
		return err
	}
	if err := st.send("event: checkpoint\ndata: " + string(data) + "\n\n"); err != nil {
		return err
	}
	st.cpSize = cp.Size
	return nil
}

// entry makes the event of the entry at pos, and says whether the
// stream's nid_prefix filter keeps it.
func (st *stream) entry(ctx context.Context, pos uint64, id dag.ID, covered uint64) (EntryEvent, bool, error) {
	e, err := st.s.n.Get(ctx, id)
	if err != nil {
		return EntryEvent{}, false, err
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return EntryEvent{}, false, err
	}
	ev := EntryEvent{Session: st.space, Position: pos, Tx: id, Type: env.Type, Author: env.Author,
		Finality: finalityAt(pos, covered), Simulation: st.labels.Simulation}
	var body struct {
		MR     *dag.ID `json:"mr"`
		Change *dag.ID `json:"change"`
	}
	_ = json.Unmarshal(env.Body, &body) // bodies were checked when admitted
	switch {
	case env.Type == dag.TxMROpen:
		mr := dag.Sum(env.Body)
		ev.MR = &mr
	case body.MR != nil:
		ev.MR = body.MR
	}
	if st.prefix == "" {
		return ev, true, nil
	}
	switch {
	case ev.MR != nil:
		return ev, st.mrTouches(ctx, *ev.MR), nil
	case env.Type == dag.TxBranchAppend && body.Change != nil:
		return ev, st.changeTouches(ctx, *body.Change), nil
	}
	return ev, false, nil
}

// mrTouches reports whether the MR's diff touches a nid under the prefix.
func (st *stream) mrTouches(ctx context.Context, mr dag.ID) bool {
	if v, ok := st.touch[mr]; ok {
		return v
	}
	hit := false
	if rv, err := st.s.view.Review(ctx, st.space, mr); err == nil {
		if d := rv.Diff(); d != nil {
			hit = st.anyUnder(d.Touched())
		}
	}
	st.remember(mr, hit)
	return hit
}

// changeTouches reports whether a change's ops touch a nid under the
// prefix.
func (st *stream) changeTouches(ctx context.Context, id dag.ID) bool {
	if v, ok := st.touch[id]; ok {
		return v
	}
	hit := false
	if c, err := st.s.view.Change(ctx, st.space, id); err == nil {
		nids := make([]string, 0, 2*len(c.Ops))
		for _, op := range c.Ops {
			nids = append(nids, op.NID, op.ParentNID)
		}
		hit = st.anyUnder(nids)
	}
	st.remember(id, hit)
	return hit
}

func (st *stream) remember(id dag.ID, hit bool) {
	if len(st.touch) >= maxTouchCache {
		clear(st.touch)
	}
	st.touch[id] = hit
}

// anyUnder reports whether a nid is the prefix's node or below it:
// "/us/t1" holds "/us/t1" and "/us/t1/s1", not "/us/t10".
func (st *stream) anyUnder(nids []string) bool {
	p := strings.TrimSuffix(st.prefix, "/")
	for _, n := range nids {
		if n == "" {
			continue
		}
		if p == "" || n == p || strings.HasPrefix(n, p+"/") {
			return true
		}
	}
	return false
}

// send writes and flushes s, or fails if the client does not take it
// within the write timeout: a slow client is dropped, never waited for.
func (st *stream) send(s string) error {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	if _, err := st.w.Write([]byte(s)); err != nil {
		return sendError{err}
	}
	if err := st.rc.Flush(); err != nil {
		return sendError{err}
	}
	return nil
}

// sendError is a failed write to the client: it went away, or was too
// slow. The stream ends; it is not the node's error.
type sendError struct{ err error }

func (e sendError) Error() string { return "httpapi: event stream write: " + e.err.Error() }
func (e sendError) Unwrap() error { return e.err }
