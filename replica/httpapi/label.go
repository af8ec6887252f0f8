package httpapi

// This file is the one place that labels answers about simulated sessions
// (D54): every JSON answer (problems included) concerning a session whose
// session.create says simulation: true gets "simulation": true at its top
// level, whatever handler wrote it, so a new endpoint cannot forget the
// label. A signed object (a receipt, a checkpoint) is never changed: the
// label goes beside it, in the answer that carries it.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// labelWriter holds an answer until the handler is done, so the label can
// be added to it. An event stream (text/event-stream, GET /events) is the
// exception: it never ends, so it is passed through as written, and each of
// its events carries the label itself. So are the progress streams of POST
// /join and POST /peers (application/x-ndjson, connectstream.go): their
// lines must reach the client as the pulls go, and only an answer that is
// one JSON object is labelled. So is an answer whose handler set
// HeaderStreamed (the streamed Popolo export, popolo.go): it writes
// the labels at the top of its object itself, and is too large to hold.
type labelWriter struct {
	w      http.ResponseWriter
	h      http.Header
	status int
	buf    bytes.Buffer
	stream bool
	// labelled is set by a handler that wrote the label itself where it
	// belongs (writeReceipt, the hot write path): the answer is passed on
	// as written.
	labelled bool
}

func (lw *labelWriter) Header() http.Header { return lw.h }
func (lw *labelWriter) WriteHeader(st int) {
	if lw.status != 0 {
		return
	}
	lw.status = st
	ct := lw.h.Get("Content-Type")
	if lw.h.Get(HeaderStreamed) != "" || strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, ContentTypeNDJSON) {
		lw.stream = true
		lw.w.WriteHeader(st)
	}
}
func (lw *labelWriter) Write(b []byte) (int, error) {
	if lw.status == 0 {
		lw.WriteHeader(http.StatusOK)
	}
	if lw.stream {
		return lw.w.Write(b)
	}
	return lw.buf.Write(b)
}

// FlushError flushes a stream (http.ResponseController calls it). A held
// answer has nothing to flush: sending its headers now would leave
// serveLabelled's status superfluous and the label out.
func (lw *labelWriter) FlushError() error {
	if !lw.stream {
		return nil
	}
	return http.NewResponseController(lw.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection: an event
// stream sets write deadlines.
func (lw *labelWriter) Unwrap() http.ResponseWriter { return lw.w }

// anySimulated reports whether the node holds a simulated session.
func (s *Server) anySimulated(r *http.Request) bool {
	for _, sp := range s.rep.Sessions() {
		if s.labels(r.Context(), sp).Simulation {
			return true
		}
	}
	return false
}

// concernsSimulation reports whether an answer is about a simulated
// session: the session the request names (?session=, /sessions/{id}),
// else the session or space the answer names, else — an answer that names
// none, such as the capability document or an object — any session the
// node holds.
func (s *Server) concernsSimulation(r *http.Request, top map[string]json.RawMessage) bool {
	ctx := r.Context()
	if q := r.URL.Query().Get("session"); q != "" {
		return s.labels(ctx, parsedSession(q)).Simulation
	}
	if id, ok := strings.CutPrefix(r.URL.Path, Base+"/sessions/"); ok && id != "" {
		id, _, _ = strings.Cut(id, "/") // /sessions/{id}/state
		return s.labels(ctx, parsedSession(id)).Simulation
	}
	for _, k := range []string{"session", "space"} {
		var sp string
		if raw, ok := top[k]; ok && json.Unmarshal(raw, &sp) == nil && sp != "" {
			return s.labels(ctx, parsedSession(sp)).Simulation
		}
	}
	return true // anySimulated held
}

// parsedSession is the session id a request spells, or the zero ID (which
// names no session, so has no labels) for what does not parse.
func parsedSession(s string) dag.ID {
	id, _ := dag.ParseID(s)
	return id
}

// serveLabelled runs the mux and adds the simulation label where D54 asks.
func (s *Server) serveLabelled(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, Base+"/memory") || strings.HasPrefix(r.URL.Path, Base+"/meetings") || !s.anySimulated(r) {
		s.mux.ServeHTTP(w, r) // memory spaces and meetings are not sessions
		return
	}
	lw := &labelWriter{w: w, h: w.Header()}
	s.mux.ServeHTTP(lw, r)
	if lw.stream {
		return
	}
	body := lw.buf.Bytes()
	ct := w.Header().Get("Content-Type")
	if !lw.labelled && (strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, ContentTypeProblem)) && len(body) > 0 && body[0] == '{' {
		var top map[string]json.RawMessage
		if json.Unmarshal(body, &top) == nil && s.concernsSimulation(r, top) {
			body = addSimulation(body, top)
		}
	}
	if lw.status == 0 {
		lw.status = http.StatusOK
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(lw.status)
	w.Write(body)
}

// addSimulation returns the JSON object body with "simulation": true.
func addSimulation(body []byte, top map[string]json.RawMessage) []byte {
	if v, ok := top["simulation"]; ok {
		if string(v) == "true" {
			return body
		}
		top["simulation"] = json.RawMessage("true")
		b, err := json.Marshal(top)
		if err != nil {
			return body
		}
		return append(b, '\n')
	}
	rest := bytes.TrimLeft(body[1:], " \t\r\n")
	out := make([]byte, 0, len(body)+20)
	out = append(out, `{"simulation":true`...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}
