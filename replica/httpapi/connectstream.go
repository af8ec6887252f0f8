package httpapi

// POST /peers with "Accept: application/x-ndjson": the same call, with its
// progress streamed as it happens. Every report the sync engine makes for
// this call's pulls (the responder's header of each round, each batch
// ingested, the end of each pull) becomes one line as it is made, then
// the answer ends the stream. witan sync draws its bar from these lines.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	gosync "sync"

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
	events []ConnectEvent
	signal chan struct{}
}

func (q *progressQueue) report(pull Pull, done bool) {
	q.mu.Lock()
	if len(q.events) >= maxQueuedProgress {
		q.events = q.events[1:]
	}
	q.events = append(q.events, ConnectEvent{Pull: &pull, Done: done})
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *progressQueue) take() []ConnectEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.events
	q.events = nil
	return out
}

func (s *Server) connectStream(w http.ResponseWriter, r *http.Request, peers Peers, req ConnectRequest) error {
	q := &progressQueue{signal: make(chan struct{}, 1)}
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
	rc := http.NewResponseController(w)
	started := false
	enc := json.NewEncoder(w)
	write := func(ev ConnectEvent) {
		if !started {
			w.Header().Set("Content-Type", ContentTypeNDJSON)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		enc.Encode(ev) //nolint:errcheck // a client gone is seen by the pulls' ctx
	}
	for {
		select {
		case <-q.signal:
			for _, ev := range q.take() {
				write(ev)
			}
			rc.Flush() //nolint:errcheck // best effort: the lines are written either way
		case out := <-done:
			for _, ev := range q.take() {
				write(ev)
			}
			if out.err != nil {
				err := problemf(CodePeerUnreachable, "connect %s: %v", req.Addr, out.err)
				if !started {
					return err
				}
				write(ConnectEvent{Problem: &Problem{Type: "about:blank", Title: http.StatusText(statusOf(CodePeerUnreachable)),
					Status: statusOf(CodePeerUnreachable), Detail: PlainDetail(err.(*errProblem).detail), Code: CodePeerUnreachable}})
				return nil
			}
			if out.res == nil {
				out.res = []SyncResult{}
			}
			write(ConnectEvent{Answer: &ConnectAnswer{Connected: req.Addr, Synced: out.res, Finality: string(replica.Provisional)}})
			return nil
		}
	}
}

// ConnectStream is POST /peers with its progress streamed: fn is called
// with each progress report of the call's pulls as the node makes it
// (done on a pull's last), then the answer is returned. fn runs on the
// caller's goroutine.
func (c *Client) ConnectStream(ctx context.Context, req ConnectRequest, fn func(p Pull, done bool)) (*ConnectAnswer, error) {
	hr, err := c.newRequest(ctx, http.MethodPost, "/peers", nil, req)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Accept", ContentTypeNDJSON)
	resp, err := c.http().Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ContentTypeNDJSON) {
		var ans ConnectAnswer
		return &ans, c.decode(resp, &ans) // a problem, or a node that does not stream
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, MaxAnswerBytes))
	for {
		var ev ConnectEvent
		if err := dec.Decode(&ev); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("httpapi: POST /peers stream: %w", err)
		}
		switch {
		case ev.Pull != nil:
			if fn != nil {
				fn(*ev.Pull, ev.Done)
			}
		case ev.Answer != nil:
			return ev.Answer, nil
		case ev.Problem != nil:
			return nil, &Error{Status: ev.Problem.Status, Problem: RejectionProblem{Problem: *ev.Problem}}
		}
	}
}
