package httpapi

// POST /peers and POST /join with "Accept: application/x-ndjson": the same
// calls, with their progress streamed as it happens. Every report the sync
// engine makes for the call's pulls (the responder's header of each round,
// each batch ingested, the end of each pull) becomes one line as it is
// made, then the answer ends the stream. witan sync and witan join -wait
// draw their bars from these lines.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/node"
)

// ContentTypeNDJSON is the media type of streamed answers: one JSON value
// per line.
const ContentTypeNDJSON = "application/x-ndjson"

// ConnectEvent is one line of POST /peers's streamed answer: exactly one
// of Pull (a progress report of one of this call's pulls; Done on its
// last), Answer (the call's answer, the last line) and Problem (the call
// failed after the stream began, the last line).
type ConnectEvent struct {
	Pull    *Pull          `json:"pull,omitempty"`
	Done    bool           `json:"done,omitempty"`
	Answer  *ConnectAnswer `json:"answer,omitempty"`
	Problem *Problem       `json:"problem,omitempty"`
}

// JoinEvent is one line of POST /join's streamed answer: Pull (a progress
// report of a pull of the space, from any peer; Done on its last), or
// Answer, the last line, once a pull ended with the space held here.
type JoinEvent struct {
	Pull   *Pull       `json:"pull,omitempty"`
	Done   bool        `json:"done,omitempty"`
	Answer *JoinAnswer `json:"answer,omitempty"`
}

// MaxJoinWait bounds how long POST /join streams while the space does not
// arrive; it then answers without heads.
const MaxJoinWait = 10 * time.Minute

// maxQueuedProgress bounds the reports waiting to be written; past it the
// oldest are dropped (a later report of a pull carries its whole state).
const maxQueuedProgress = 1024

func acceptsNDJSON(r *http.Request) bool {
	for _, a := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(a)); err == nil && mt == ContentTypeNDJSON {
			return true
		}
	}
	return false
}

// progressQueue passes the engine's reports, made on pull goroutines that
// must not block, to the handler that writes them.
type progressQueue struct {
	mu     gosync.Mutex
	events []pullReport
	signal chan struct{}
}

type pullReport struct {
	pull Pull
	done bool
}

func newProgressQueue() *progressQueue { return &progressQueue{signal: make(chan struct{}, 1)} }

func (q *progressQueue) report(pull Pull, done bool) {
	q.mu.Lock()
	if len(q.events) >= maxQueuedProgress {
		q.events = q.events[1:]
	}
	q.events = append(q.events, pullReport{pull, done})
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *progressQueue) take() []pullReport {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.events
	q.events = nil
	return out
}

func (s *Server) connectStream(w http.ResponseWriter, r *http.Request, peers Peers, req ConnectRequest) error {
	q := newProgressQueue()
	ctx := node.WithPullProgress(r.Context(), q.report)
	type result struct {
		res []SyncResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := peers.Connect(ctx, req.Addr, req.Spaces)
		done <- result{res, err}
	}()
	st := newLineWriter(w)
	for {
		select {
		case <-q.signal:
			for _, ev := range q.take() {
				st.write(ConnectEvent{Pull: &ev.pull, Done: ev.done})
			}
			st.flush()
		case out := <-done:
			for _, ev := range q.take() {
				st.write(ConnectEvent{Pull: &ev.pull, Done: ev.done})
			}
			if out.err != nil {
				err := problemf(CodePeerUnreachable, "connect %s: %v", req.Addr, out.err)
				if !st.started {
					return err
				}
				st.write(ConnectEvent{Problem: &Problem{Type: "about:blank", Title: http.StatusText(statusOf(CodePeerUnreachable)),
					Status: statusOf(CodePeerUnreachable), Detail: PlainDetail(err.(*errProblem).detail), Code: CodePeerUnreachable}})
				return nil
			}
			if out.res == nil {
				out.res = []SyncResult{}
			}
			st.write(ConnectEvent{Answer: &ConnectAnswer{Connected: req.Addr, Synced: out.res, Finality: string(replica.Provisional)}})
			return nil
		}
	}
}

// lineWriter writes a streamed answer, one JSON value a line; its
// headers go out with the first line.
type lineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	enc     *json.Encoder
	started bool
}

func newLineWriter(w http.ResponseWriter) *lineWriter {
	return &lineWriter{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w)}
}

func (l *lineWriter) write(v any) {
	if !l.started {
		l.w.Header().Set("Content-Type", ContentTypeNDJSON)
		l.w.Header().Set("X-Content-Type-Options", "nosniff")
		l.w.WriteHeader(http.StatusOK)
		l.started = true
	}
	l.enc.Encode(v) //nolint:errcheck // a client gone is seen by the request's ctx
}

// flush sends the lines written so far; before the first there is
// nothing to send (the headers go with it).
func (l *lineWriter) flush() {
	if l.started {
		l.rc.Flush() //nolint:errcheck // best effort: the lines are written either way
	}
}

// joinStream joins space and streams the reports of its pulls, from any
// peer, until one ends with the space held here (the answer then carries
// its heads), the client goes, or MaxJoinWait passes (an answer without
// heads). A space already held is answered at once. A join this request
// made that brought nothing by then (the client gone, or MaxJoinWait) is
// undone (node.Leave), so that the node neither keeps pulling a space no
// peer sends nor tells its peers it holds it; the answer then says Left.
func (s *Server) joinStream(w http.ResponseWriter, r *http.Request, space string) error {
	ctx := r.Context()
	q := newProgressQueue()
	cancel := s.n.WatchPulls(space, q.report) // before Join, which starts the pulls
	defer cancel()
	before := s.n.Joined(space)
	if err := s.n.Join(ctx, space); err != nil {
		return err
	}
	left := false
	defer func() {
		if !before && !left {
			// The client went first: nothing arrived while it waited.
			s.leaveEmpty(space)
		}
	}()
	st := newLineWriter(w)
	answer := func(heads []dag.ID) error {
		st.write(JoinEvent{Answer: &JoinAnswer{Joined: space, Heads: heads, Finality: string(replica.Provisional)}})
		return nil
	}
	if hs, err := s.n.Heads(ctx, space); err == nil && len(hs) > 0 {
		left = true // nothing to undo
		return answer(hs)
	}
	limit := time.NewTimer(MaxJoinWait)
	defer limit.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-limit.C:
			if !before {
				left = s.leaveEmpty(space)
			}
			st.write(JoinEvent{Answer: &JoinAnswer{Joined: space, Left: left, Finality: string(replica.Provisional)}})
			return nil
		case <-q.signal:
		}
		for _, ev := range q.take() {
			st.write(JoinEvent{Pull: &ev.pull, Done: ev.done})
			if !ev.done {
				continue
			}
			if hs, err := s.n.Heads(ctx, space); err == nil && len(hs) > 0 {
				left = true // nothing to undo
				return answer(hs)
			}
		}
		st.flush()
	}
}

// leaveEmpty undoes the join of a space that brought nothing, and says
// whether it did (not when an entry arrived meanwhile: node.ErrHeld).
func (s *Server) leaveEmpty(space string) bool {
	err := s.n.Leave(context.Background(), space)
	if err != nil && !errors.Is(err, node.ErrHeld) {
		s.log.Warn("httpapi: leave a join that brought nothing", "space", space, "err", err)
	}
	return err == nil
}

// JoinStream is POST /join with its progress streamed: fn is called with
// each progress report of the space's pulls, from any peer, as the node
// makes it, until the space has arrived; the answer then carries its
// heads. The wait is the caller's (ctx); fn runs on its goroutine.
func (c *Client) JoinStream(ctx context.Context, space string, fn func(p Pull, done bool)) (*JoinAnswer, error) {
	var ans JoinAnswer
	err := c.stream(ctx, "/join", JoinRequest{Space: space}, &ans, func(line []byte) (bool, error) {
		var ev JoinEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return false, err
		}
		if ev.Pull != nil && fn != nil {
			fn(*ev.Pull, ev.Done)
		}
		if ev.Answer != nil {
			ans = *ev.Answer
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return &ans, nil
}

// stream posts body to path asking for a streamed answer and calls line
// with each line until it reports the end. A node that answers plainly
// (a problem, or one that does not stream) has its answer decoded into
// plain, or returned as an *Error.
func (c *Client) stream(ctx context.Context, path string, body, plain any, line func([]byte) (end bool, err error)) error {
	hr, err := c.newRequest(ctx, http.MethodPost, path, nil, body)
	if err != nil {
		return err
	}
	hr.Header.Set("Accept", ContentTypeNDJSON)
	resp, err := c.http().Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ContentTypeNDJSON) {
		return c.decode(resp, plain)
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, MaxAnswerBytes))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		end, err := line(sc.Bytes())
		var he *Error
		if errors.As(err, &he) {
			return err
		} else if err != nil {
			return fmt.Errorf("httpapi: POST %s stream: %w", path, err)
		}
		if end {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("httpapi: POST %s stream: %w", path, err)
	}
	return fmt.Errorf("httpapi: POST %s stream: %w", path, io.ErrUnexpectedEOF)
}

// ConnectStream is POST /peers with its progress streamed: fn is called
// with each progress report of the call's pulls as the node makes it
// (done on a pull's last), then the answer is returned. fn runs on the
// caller's goroutine.
func (c *Client) ConnectStream(ctx context.Context, req ConnectRequest, fn func(p Pull, done bool)) (*ConnectAnswer, error) {
	var ans ConnectAnswer
	err := c.stream(ctx, "/peers", req, &ans, func(line []byte) (bool, error) {
		var ev ConnectEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return false, err
		}
		switch {
		case ev.Pull != nil:
			if fn != nil {
				fn(*ev.Pull, ev.Done)
			}
		case ev.Answer != nil:
			ans = *ev.Answer
			return true, nil
		case ev.Problem != nil:
			return true, &Error{Status: ev.Problem.Status, Problem: RejectionProblem{Problem: *ev.Problem}}
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return &ans, nil
}
