package httpapi

// This file is GET /events (30k §5): server-sent events for new log
// entries of one session, each with its finality.
//
// The streams of one session share a feed: one subscription to the node,
// woken by a non-blocking send into a one-slot channel whatever the number
// of streams, so a write costs the writer O(1) however many streams are
// open. The feed reads each new entry once, encodes its event once, and
// keeps the last feedKeep events; each stream keeps only its cursor (the
// log position of the last entry it sent, which is also the SSE event id)
// and copies the events after it into its own connection. A stream behind
// the feed's window (one resumed from an old Last-Event-ID, or slow to
// read) reads the log itself, a page at a time, as GET /log does, until it
// is back in the window. A client that stops reading is dropped when a
// write to it does not finish within EventOptions.WriteTimeout. A dropped
// or disconnected client resumes with Last-Event-ID and loses nothing.
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
	"math/rand/v2"
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
	DefaultEventCoalesce     = 250 * time.Millisecond
	// eventPage is how many log entries a stream reads at a time.
	eventPage = 100
	// maxLastEventID bounds the digits of Last-Event-ID.
	maxLastEventID = 20
	// maxTouchCache bounds a filtered stream's memory of which MRs and
	// changes touch its prefix.
	maxTouchCache = 4096
	// feedKeep is how many encoded events a session's feed keeps for its
	// streams.
	feedKeep = 4096
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
	// Coalesce is the least time between two writes of events to one
	// stream (DefaultEventCoalesce): the events of a burst of writes go
	// out together, so a stream costs a few writes a second however fast
	// the log grows.
	Coalesce time.Duration
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
	if o.Coalesce <= 0 {
		o.Coalesce = DefaultEventCoalesce
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

// eventHub counts the streams served, holds the feed of each session
// streamed, and ends them all on StopEvents.
type eventHub struct {
	clients  atomic.Int64
	stopOnce gosync.Once
	stop     chan struct{}

	mu    gosync.Mutex
	feeds map[string]*feed
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

	f, err := s.joinFeed(ctx, space, labels)
	if err != nil {
		return err
	}
	defer s.leaveFeed(f)

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
	coalesce := time.NewTimer(0)
	defer coalesce.Stop()
	for {
		changed, sent, err := st.follow(ctx, f)
		if err != nil {
			var se sendError
			if ctx.Err() == nil && !errors.As(err, &se) {
				s.log.Error("httpapi: event stream", "session", space, "err", err)
			}
			return nil // headers are sent: the stream just ends
		}
		if sent {
			// What comes in the next Coalesce (on average: spread by half
			// of it either way, so that the streams, woken together by
			// one write, do not go on writing all at the same instants)
			// goes out in one write.
			coalesce.Reset(eo.Coalesce/2 + rand.N(eo.Coalesce))
			select {
			case <-ctx.Done():
				return nil
			case <-s.hub.stop:
				return nil
			case <-coalesce.C:
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.hub.stop:
			return nil
		case <-changed:
		case <-heartbeat.C:
			if err := st.send(": heartbeat\n\n"); err != nil {
				return nil
			}
		}
	}
}

// feed is the one reader of a session's log for all its streams.
type feed struct {
	s      *Server
	space  dag.ID
	labels sessionLabels
	stop   chan struct{}

	mu      gosync.Mutex
	streams int        // streams following it (under hub.mu)
	items   []feedItem // the events of positions pos-len(items)+1 … pos
	pos     uint64     // last position read
	cp      []byte     // the latest checkpoint's event, encoded
	cpSize  uint64
	changed chan struct{} // closed, and replaced, when items or cp change
	arena   []byte        // the arena being filled (only read's goroutine appends)
	arenaN  int
}

// feedItem is one entry's event, encoded once, and what a filtered
// stream needs to decide whether it keeps it. The events are written one
// after the other into arenas that are never reallocated (a new one is
// started when one is full), so the events of a run of positions are
// mostly one slice of one arena, which a stream writes as it is, without
// copying.
type feedItem struct {
	pos    uint64
	arena  int // which arena
	a      []byte
	start  int // the event is a[start:end]
	end    int
	mr     *dag.ID
	change *dag.ID // of a branch.append
}

func (it *feedItem) event() []byte { return it.a[it.start:it.end] }

// feedArena is the size of a feed's arenas.
const feedArena = 1 << 20

// joinFeed returns space's feed, started if no stream follows it yet.
func (s *Server) joinFeed(ctx context.Context, space dag.ID, labels sessionLabels) (*feed, error) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	f := s.hub.feeds[space.String()]
	if f == nil {
		size, err := s.rep.LogSize(ctx, space)
		if err != nil {
			return nil, err
		}
		f = &feed{s: s, space: space, labels: labels, stop: make(chan struct{}), pos: size, changed: make(chan struct{})}
		if s.hub.feeds == nil {
			s.hub.feeds = map[string]*feed{}
		}
		s.hub.feeds[space.String()] = f
		go f.run()
	}
	f.streams++
	return f, nil
}

// leaveFeed stops f when its last stream leaves.
func (s *Server) leaveFeed(f *feed) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if f.streams--; f.streams == 0 {
		delete(s.hub.feeds, f.space.String())
		close(f.stop)
	}
}

// run reads the log and the checkpoints as they grow, until stopped.
func (f *feed) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	unsub := f.s.n.Subscribe(func(sp string) {
		if sp == f.space.String() {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	defer unsub()
	poll := time.NewTicker(f.s.o.Events.Poll)
	defer poll.Stop()
	for {
		if err := f.read(ctx); err != nil {
			f.s.log.Error("httpapi: event feed", "session", f.space, "err", err)
		}
		select {
		case <-f.stop:
			return
		case <-wake:
		case <-poll.C:
		}
	}
}

// read encodes the entries after f.pos and a newer checkpoint, and tells
// the streams.
func (f *feed) read(ctx context.Context) error {
	for {
		f.mu.Lock()
		pos := f.pos
		f.mu.Unlock()
		ids, err := f.s.rep.Log(ctx, f.space, pos, eventPage)
		if err != nil || len(ids) == 0 {
			if err != nil {
				return err
			}
			break
		}
		covered := uint64(0)
		if cp, ok := f.s.rep.LastCheckpoint(f.space); ok {
			covered = cp.Size
		}
		add := make([]feedItem, 0, len(ids))
		for i, id := range ids {
			p := pos + uint64(i) + 1
			ev, change, err := f.s.entryEvent(ctx, f.space.String(), f.labels, p, id, covered)
			if err != nil {
				return err
			}
			data, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			ev1 := fmt.Appendf(nil, "id: %d\nevent: entry\ndata: %s\n\n", p, data)
			if len(f.arena)+len(ev1) > cap(f.arena) {
				f.arena = make([]byte, 0, max(feedArena, len(ev1)))
				f.arenaN++
			}
			start := len(f.arena)
			f.arena = append(f.arena, ev1...) // within its capacity: never moves
			add = append(add, feedItem{pos: p, arena: f.arenaN, a: f.arena[:cap(f.arena)], start: start, end: len(f.arena), mr: ev.MR, change: change})
		}
		f.mu.Lock()
		f.items = append(f.items, add...)
		if len(f.items) > feedKeep {
			f.items = f.items[len(f.items)-feedKeep:]
		}
		f.pos += uint64(len(ids))
		f.signal()
		f.mu.Unlock()
		if len(ids) < eventPage {
			break
		}
	}
	cp, ok := f.s.rep.LastCheckpoint(f.space)
	f.mu.Lock()
	newer := ok && cp.Size > f.cpSize
	f.mu.Unlock()
	if !newer {
		return nil
	}
	ev, err := checkpointEvent(f.space.String(), cp, f.labels)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.cp, f.cpSize = ev, cp.Size
	f.signal()
	f.mu.Unlock()
	return nil
}

// signal wakes the streams waiting on f. Called with f.mu held.
func (f *feed) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// since returns the events after position pos and the latest checkpoint's,
// with the channel closed at the next change; behind is true when pos is
// before the events f keeps (the stream must read the log itself).
func (f *feed) since(pos uint64) (items []feedItem, cp []byte, cpSize uint64, changed chan struct{}, behind bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cp, cpSize, changed = f.cp, f.cpSize, f.changed
	if f.pos <= pos {
		return nil, cp, cpSize, changed, false
	}
	first := f.pos - uint64(len(f.items)) + 1
	if pos+1 < first {
		return nil, cp, cpSize, changed, true
	}
	return f.items[pos+1-first:], cp, cpSize, changed, false
}

// follow sends the stream what f has after its cursor (reading the log
// itself while it is behind f's window), then f's checkpoint if newer than
// the last one sent, in one write. It returns the channel closed at f's
// next change, and whether it wrote.
func (st *stream) follow(ctx context.Context, f *feed) (chan struct{}, bool, error) {
	for {
		items, cp, cpSize, changed, behind := f.since(st.pos)
		if behind {
			if err := st.catchUp(ctx); err != nil {
				return nil, false, err
			}
			continue
		}
		// The events to send, as runs of adjacent bytes of one arena.
		var runs [][]byte
		prevKept := false
		for i := range items {
			it := &items[i]
			st.pos = it.pos
			if st.prefix != "" && !st.keeps(ctx, it.mr, it.change) {
				prevKept = false
				continue
			}
			if prevKept && items[i-1].arena == it.arena && items[i-1].end == it.start {
				last := &runs[len(runs)-1]
				*last = (*last)[:len(*last)+it.end-it.start]
			} else {
				runs = append(runs, it.event())
			}
			prevKept = true
		}
		if cpSize > st.cpSize {
			runs = append(runs, cp)
			st.cpSize = cpSize
		}
		if len(runs) == 0 {
			return changed, false, nil
		}
		return changed, true, st.sendRuns(runs)
	}
}

// lastEventID reads where a client resumes: the Last-Event-ID header (a
// browser's EventSource sends it when it reconnects) or ?last_event_id=
// (for a first connection, which cannot set headers). It is a log
// position this node has given out, so at most the log's length.
func (s *Server) lastEventID(ctx context.Context, r *http.Request, space dag.ID) (uint64, error) {
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
	space   dag.ID
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
			ev, change, err := st.s.entryEvent(ctx, st.space.String(), st.labels, pos, id, covered)
			if err != nil {
				return err
			}
			if st.prefix != "" && !st.keeps(ctx, ev.MR, change) {
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
	ev, err := checkpointEvent(st.space.String(), cp, st.labels)
	if err != nil {
		return err
	}
	if err := st.send(string(ev)); err != nil {
		return err
	}
	st.cpSize = cp.Size
	return nil
}

// checkpointEvent encodes the "checkpoint" event of cp.
func checkpointEvent(space string, cp replica.Checkpoint, labels sessionLabels) ([]byte, error) {
	raw, err := cp.MarshalJSON()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(CheckpointEvent{Session: space, Size: cp.Size, Checkpoint: raw,
		Finality: replica.FinalAdvisory, Simulation: labels.Simulation})
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "event: checkpoint\ndata: %s\n\n", data), nil
}

// entryEvent makes the event of the entry at pos, and returns the change
// a branch.append adds (what a nid_prefix filter needs besides the MR).
func (s *Server) entryEvent(ctx context.Context, space string, labels sessionLabels, pos uint64, id dag.ID, covered uint64) (EntryEvent, *dag.ID, error) {
	e, err := s.n.Get(ctx, id)
	if err != nil {
		return EntryEvent{}, nil, err
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return EntryEvent{}, nil, err
	}
	ev := EntryEvent{Session: space, Position: pos, Tx: id, Type: env.Type, Author: env.Author,
		Finality: finalityAt(pos, covered), Simulation: labels.Simulation}
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
	var change *dag.ID
	if env.Type == dag.TxBranchAppend {
		change = body.Change
	}
	return ev, change, nil
}

// keeps reports whether the stream's nid_prefix filter keeps an entry of
// MR mr (if any) or adding change (if any).
func (st *stream) keeps(ctx context.Context, mr, change *dag.ID) bool {
	switch {
	case mr != nil:
		return st.mrTouches(ctx, *mr)
	case change != nil:
		return st.changeTouches(ctx, *change)
	}
	return false
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
func (st *stream) send(s string) error { return st.sendRuns([][]byte{[]byte(s)}) }

func (st *stream) sendRuns(runs [][]byte) error {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	for _, b := range runs {
		if _, err := st.w.Write(b); err != nil {
			return sendError{err}
		}
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
