package httpapi

// This file is the Server: routing, limits, the session a request is
// about, and the JSON helpers every handler shares.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/meeting"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/view"
)

// Base is the path every 30k endpoint lives under (30k §5).
const Base = "/oth/v0"

// Default limits of Options.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultLogLimit     = 100
	MaxLogLimit         = 1000
)

// Implementation names the software in the capability document.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  string `json:"source"`
}

// Peer, Pull and SyncResult are the node's (GET and POST /peers answer
// with them).
type (
	Peer       = node.Peer
	Pull       = node.Pull
	Offer      = node.Offer
	SyncResult = node.SyncResult
)

// Peers is the node's federation: who it is connected to, and a way to
// connect to more and pull from them now (GET and POST /peers). A
// *node.Node provides it while its sync runs.
type Peers interface {
	Peers() []Peer
	// Pulls reports the pulls running now, for progress bars.
	Pulls() []Pull
	// Connect dials addr (a multiaddr with a /p2p/ part), joins spaces
	// (spaces are agreed out of band, 30k §4) and pulls each from the
	// peer now.
	Connect(ctx context.Context, addr string, spaces []string) ([]SyncResult, error)
}

// OfferLister is implemented by Peers that know which spaces the
// connected peers announce (the node does); GET /peers lists them.
type OfferLister interface {
	Available() []Offer
}

// Options configure a Server. Node is required; the zero value of every
// other field works.
type Options struct {
	// Node is the node the server is a door to: every write goes to its
	// one write path, every read to its replica and memory spaces.
	Node *node.Node
	// Peers serves /peers. Nil means the node's own sync
	// (node.Node.StartSync); while the node runs without sync, GET /peers
	// lists none and POST /peers is not implemented.
	Peers Peers
	// Implementation is named in the capability document.
	Implementation Implementation
	// Ephemeral declares that sessions may be purged after their term
	// (education nodes, D59).
	Ephemeral bool
	// MaxBodyBytes bounds a request body (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// OpinionRateLimit limits the opinions accepted per signing key from
	// HTTP clients (opinions.go); the zero value is no limit.
	OpinionRateLimit OpinionLimit
	// ReportPeers are the base URLs of witan (or other 30k) nodes asked
	// for their reports on resolution specs that list them (D31;
	// resolution.go). Empty: listed nodes other than this one are
	// reported unreachable.
	ReportPeers []string
	// Witnesses, if not empty, are the only node keys whose
	// cosignatures of this node's checkpoints POST /witness keeps
	// (witness.go); empty: any witness's, at most replica.MaxWitnesses a
	// session, first come (so strangers' keys can fill the places).
	Witnesses []dag.Key
	// Logger receives one line per internal error; discarded if nil.
	Logger *slog.Logger
	// Events configures GET /events.
	Events EventOptions
	// MaxExtractEntries bounds the entries of an MR extract
	// (extract_mr.go); zero means MaxExtractEntries.
	MaxExtractEntries int

	// The guard (docs/security.md). AllowedHosts are host names, besides
	// IP addresses and loopback names, that requests may name in Host
	// (a name the node is reached by on the LAN); any other is refused,
	// which stops DNS rebinding. AllowedOrigins are browser origins
	// ("https://app.example") whose pages may write, besides the node's
	// own. OperatorToken, when set, lets a request with
	// "Authorization: Bearer <token>" take operator actions (POST
	// /peers); LoopbackOperator lets loopback clients take them without
	// it. Neither: no operator action over HTTP.
	AllowedHosts, AllowedOrigins []string
	OperatorToken                string
	LoopbackOperator             bool
	// WriteRate and WriteBurst bound each client's writes (per second,
	// and at once); zero means DefaultWriteRate and DefaultWriteBurst,
	// negative no limit. KeyRegisterPerHour bounds each client's
	// key.register submissions (DefaultKeyRegisterPerHour; negative: no
	// limit). Loopback clients (the user's own tools: a page of another
	// site is refused before) are not limited unless LimitLoopback.
	WriteRate, WriteBurst int
	KeyRegisterPerHour    int
	LimitLoopback         bool
}

// Server serves the /oth/v0 API of one node and its memory-block API. It
// is an http.Handler; where it listens is the caller's choice (witan up
// listens on loopback unless told otherwise).
type Server struct {
	o   Options
	n   *node.Node
	rep *replica.Replica
	// view derives what the handlers serve of a session (replica/view).
	view *view.Reader
	mux  *http.ServeMux
	log  *slog.Logger

	labelMu    gosync.Mutex
	labelCache map[dag.ID]sessionLabels
	patterns   []string            // every routed path, for the D54 walk test
	methods    map[string][]string // the methods each routed path takes

	hub             eventHub
	limits, keyRegs *buckets
	lim             *limiter // opinions.go
	dr              drafts   // drafts.go
}

var _ http.Handler = (*Server)(nil)

// New returns a server.
func New(o Options) (*Server, error) {
	if o.Node == nil {
		return nil, errors.New("httpapi: Options.Node is required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	o.Events = o.Events.withDefaults()
	if o.MaxExtractEntries <= 0 {
		o.MaxExtractEntries = MaxExtractEntries
	}
	if o.Implementation.Name == "" {
		o.Implementation = Implementation{Name: "witan", Version: "devel", Source: "https://github.com/witan-dev/witan"}
	}
	if o.WriteRate == 0 {
		o.WriteRate = DefaultWriteRate
	}
	if o.WriteBurst <= 0 {
		o.WriteBurst = DefaultWriteBurst
	}
	if o.KeyRegisterPerHour == 0 {
		o.KeyRegisterPerHour = DefaultKeyRegisterPerHour
	}
	s := &Server{o: o, n: o.Node, rep: o.Node.Replica(), view: o.Node.Views(), mux: http.NewServeMux(), log: o.Logger, lim: &limiter{l: o.OpinionRateLimit},
		limits:  newBuckets(float64(o.WriteRate), float64(o.WriteBurst)),
		keyRegs: newBuckets(float64(o.KeyRegisterPerHour)/3600, float64(max(o.KeyRegisterPerHour, 1)))}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.hub.stop = make(chan struct{})
	s.methods = map[string][]string{}
	s.routes()
	return s, nil
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route registers h for path under the methods given; any other method is
// a 405 problem with an Allow header.
func (s *Server) route(path string, methods map[string]handlerFunc) {
	allow := make([]string, 0, len(methods))
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if _, ok := methods[m]; ok {
			allow = append(allow, m)
		}
	}
	if _, ok := methods[http.MethodGet]; ok {
		allow = append(allow, http.MethodHead)
	}
	s.patterns = append(s.patterns, path)
	s.methods[path] = allow
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		m := r.Method
		if m == http.MethodHead {
			m = http.MethodGet
		}
		h, ok := methods[m]
		if !ok {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			WriteProblem(w, CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
			return
		}
		if err := h(w, r); err != nil {
			s.writeErr(w, r, err)
		}
	})
}

// refuses reports whether pattern is a path of the route table that takes
// no request of method (its route answers 405).
func (s *Server) refuses(pattern, method string) bool {
	ms, ok := s.methods[pattern]
	return ok && !slices.Contains(ms, method)
}

func get(h handlerFunc) map[string]handlerFunc  { return map[string]handlerFunc{http.MethodGet: h} }
func post(h handlerFunc) map[string]handlerFunc { return map[string]handlerFunc{http.MethodPost: h} }

func (s *Server) routes() {
	s.route("/.well-known/oth", get(s.capability))
	s.route(Base+"/.well-known/oth", get(s.capability))
	s.route(Base+"/log", get(s.logPage))
	s.route(Base+"/objects/{id}", get(s.object))
	s.route(Base+"/checkpoint", get(s.checkpoint))
	s.route(Base+"/heads", get(s.heads))
	s.route(Base+"/transactions", post(s.submit))
	s.route(Base+"/sessions", get(s.sessions))
	s.route(Base+"/sessions/{id}", get(s.session))
	s.route(Base+"/sessions/{id}/state", get(s.sessionState))
	s.route(Base+"/groups/{id}", get(s.group))
	s.route(Base+"/branches", get(s.branches))
	s.route(Base+"/branches/{name}", get(s.branch))
	s.route(Base+"/branches/{name}/tree", get(s.tree))
	s.route(Base+"/merge-requests", get(s.mrs))
	s.route(Base+"/merge-requests/{id}", get(s.mr))
	s.route(Base+"/merge-requests/{id}/diff", get(s.reviewHandler("diff")))
	s.route(Base+"/merge-requests/{id}/checks", get(s.reviewHandler("checks")))
	s.route(Base+"/merge-requests/{id}/facts", get(s.reviewHandler("facts")))
	s.route(Base+"/merge-requests/{id}/tally", get(s.tally))
	// estimates.go
	s.route(Base+"/merge-requests/{id}/estimates", get(s.estimates))
	s.route(Base+"/merge-requests/{id}/exchanges", get(s.exchanges))
	s.route(Base+"/contests/{id}", get(s.contest)) // contests.go
	s.route(Base+"/law", get(s.law))
	s.route(Base+"/events", get(s.events))
	s.route(Base+"/opinions", get(s.opinions)) // opinions.go
	s.route(Base+"/opinions/{id}", get(s.opinion))
	s.route(Base+"/opinions/{id}/evaluation", get(s.evaluation))
	s.route(Base+"/opinions/{id}/claim-review", get(s.claimReview))
	s.route(Base+"/stats", get(s.stats)) // stats.go
	s.route(Base+"/rules", get(s.rules))
	s.route(Base+"/rules/{kind}", get(s.rule))
	s.route(Base+"/quarantine", get(s.quarantine))
	s.route(Base+"/proofs/inclusion", get(s.inclusion))            // proofs.go
	s.route(Base+"/proofs/consistency", get(s.consistency))        // proofs.go
	s.route(Base+"/refusals", get(s.refusalLog))                   // refusals.go
	s.route(Base+"/refusals/checkpoint", get(s.refusalCheckpoint)) // refusals.go
	s.route(Base+"/extract/{hash}", get(s.extract))                // extract.go
	s.route(Base+"/witness", post(s.witness))                      // witness.go
	s.route(Base+"/forks", get(s.forks))                           // forks.go
	s.route(Base+"/cite/{hash}", get(s.cite))                      // cite.go
	s.route(Base+"/cite/{hash}/diff", get(s.citeDiff))             // cite.go
	s.route(Base+"/export/rollcall", get(s.rollcall))              // rollcall.go
	s.route(Base+"/export/popolo", get(s.popolo))                  // popolo.go
	s.route(Base+"/history/{nid...}", get(s.history))              // history.go
	s.route(Base+"/peers", map[string]handlerFunc{http.MethodGet: s.peers, http.MethodPost: s.connect})
	s.route(Base+"/join", post(s.join))
	s.route(Base+"/leave", post(s.leave))
	s.route(Base+"/restricted", post(s.depositDraft))             // drafts.go
	s.route(Base+"/restricted/challenge", post(s.draftChallenge)) // drafts.go
	s.route(Base+"/restricted/{commitment}", get(s.readDraft))    // drafts.go
	// witan's memory-block API (not part of 30k).
	s.route(Base+"/memory", get(s.memorySpaces))
	s.route(Base+"/memory/{space}/heads", get(s.memoryHeads))
	s.route(Base+"/memory/{space}/blocks", post(s.putBlock))
	s.route(Base+"/memory/{space}/blocks/{hash}", get(s.getBlock))
	s.route(Base+"/memory/{space}/blocks/{hash}/ancestry", get(s.ancestry))
	// witan's meeting API (node-local, never synced; replica/meeting).
	if svc, err := s.n.Meetings(); err == nil {
		h := meeting.Handler(svc, Base)
		s.mux.Handle(Base+"/meetings", h)
		s.mux.Handle(Base+"/meetings/", h)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteProblem(w, CodeNotFound, "no endpoint at "+r.URL.Path)
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r, ok := s.Front(w, r)
	if !ok {
		return
	}
	s.serveLabelled(w, r) // D54's label, in one place (label.go)
}

// frontKey marks a request's context once Front has admitted it.
type frontKey struct{}

// Front is the node's one door, run before any routing: the Host must
// name this node, the headers fit MaxHeaderBytes, the path is clean
// (else a 301 problem to the clean one), and every request that is not a
// GET or HEAD — whatever its path: the route table, the meeting API, a
// page in front of the API — passes guardWrite (not from another site's
// page, JSON, within its client's rate). It writes the refusal and
// returns false, or returns the request to serve. A handler in front of
// the server (the classroom page) calls it first, so that its own paths
// get the same answers; a request admitted once is not checked again.
func (s *Server) Front(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if r.Context().Value(frontKey{}) != nil {
		return r, true
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if !s.guard(w, r) {
		return nil, false
	}
	if headerBytes(r) > MaxHeaderBytes {
		WriteProblem(w, CodeHeadersTooLarge, fmt.Sprintf("the request's headers exceed %d bytes", MaxHeaderBytes))
		return nil, false
	}
	if c := cleanPath(r.URL.Path); c != r.URL.Path {
		// What http.ServeMux would answer with an HTML redirect, as a
		// problem: the client is told where the resource is.
		u := *r.URL
		u.Path, u.RawPath = c, ""
		writeMoved(w, u.String())
		return nil, false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if !s.originAllowed(r) {
			WriteProblem(w, CodeForbidden, "a write from another site's page ("+r.Header.Get("Origin")+") is refused")
			return nil, false
		}
		// A method no route of the table takes is left to the route,
		// which answers 405; everything else is a write.
		if _, pat := s.mux.Handler(r); !s.refuses(pat, r.Method) {
			var ok bool
			if r, ok = s.guardWrite(w, r); !ok {
				return nil, false
			}
		}
	}
	return r.WithContext(context.WithValue(r.Context(), frontKey{}, true)), true
}

// MaxHeaderBytes bounds a request's header lines (names and values): past
// it the answer is a 431 problem. Past net/http's own limit
// (http.Server.MaxHeaderBytes, 1 MiB by default) net/http answers 431
// itself, in plain text, before any handler runs.
const MaxHeaderBytes = 64 << 10

// CodeHeadersTooLarge: a request's headers exceed MaxHeaderBytes.
const CodeHeadersTooLarge dag.Code = "witan:headers_too_large"

// CodePathNotClean: the request's path has "//", "." or ".." segments;
// the Location header gives the clean path.
const CodePathNotClean dag.Code = "witan:path_not_clean"

func headerBytes(r *http.Request) int {
	n := 0
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// cleanPath is path.Clean keeping a trailing slash, as http.ServeMux does.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

func writeMoved(w http.ResponseWriter, loc string) {
	st := http.StatusMovedPermanently
	b, _ := json.Marshal(Problem{Type: "about:blank", Title: http.StatusText(st), Status: st,
		Detail: "the path is not clean; the resource is at " + loc, Code: CodePathNotClean})
	w.Header().Set("Location", loc)
	w.Header().Set("Content-Type", ContentTypeProblem)
	w.WriteHeader(st)
	w.Write(b)
}

// errProblem is an error that is already a problem to write.
type errProblem struct {
	code   dag.Code
	detail string
}

func (e *errProblem) Error() string { return string(e.code) + ": " + e.detail }

func problemf(c dag.Code, format string, args ...any) error {
	return &errProblem{code: c, detail: fmt.Sprintf(format, args...)}
}

func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var p *errProblem
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &p):
		WriteProblem(w, p.code, p.detail)
	case errors.As(err, &mbe):
		WriteProblem(w, CodeTooLarge, fmt.Sprintf("request body is larger than %d bytes", mbe.Limit))
	case errors.Is(err, replica.ErrUnknownSpace), errors.Is(err, dag.ErrNotFound):
		WriteProblem(w, CodeNotFound, err.Error())
	case errors.Is(err, node.ErrBadSpaceName):
		WriteProblem(w, dag.CodeSchema, err.Error())
	case dag.CodeOf(err) != "":
		WriteError(w, err)
	default:
		s.log.Error("httpapi: internal error", "path", r.URL.Path, "err", err)
		WriteProblem(w, CodeInternal, "internal error")
	}
}

// writeJSON writes v as JSON with status 200.
func writeJSON(w http.ResponseWriter, v any) error {
	return writeJSONStatus(w, http.StatusOK, v)
}

// writeLabelled is writeJSON for an answer that carries its session's
// labels itself (sessionLabels, or "session" and "simulation" of
// Server.labels): serveLabelled passes it on as written instead of
// decoding it again to label it.
func writeLabelled(w http.ResponseWriter, v any) error {
	if lw, ok := w.(*labelWriter); ok {
		lw.labelled = true
	}
	return writeJSON(w, v)
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}

// readJSON decodes a request body that must be one JSON value.
func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	return decodeJSON(b, v)
}

// decodeJSON is readJSON once the body is read.
func decodeJSON(b []byte, v any) error {
	if len(b) == 0 {
		return problemf(dag.CodeSchema, "empty body")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if err.Error() == "unexpected EOF" {
			err = errUnexpectedEOF
		}
		return problemf(dag.CodeSchema, "%s", jsonDetail(err))
	}
	if dec.More() {
		return problemf(dag.CodeSchema, "body holds more than one JSON value")
	}
	return nil
}

// spaceOf returns the session a request is about: ?session=, or the only
// session the node holds.
func (s *Server) spaceOf(r *http.Request) (dag.ID, error) {
	if q := r.URL.Query().Get("session"); q != "" {
		id, err := dag.ParseID(q)
		if err != nil {
			return dag.ID{}, problemf(dag.CodeSchema, "session: %v", err)
		}
		return id, nil
	}
	all := s.rep.Sessions()
	switch len(all) {
	case 1:
		return all[0], nil
	case 0:
		return dag.ID{}, problemf(CodeNotFound, "this node holds no session yet")
	default:
		return dag.ID{}, problemf(dag.CodeSchema, "this node holds %d sessions: name one with ?session=", len(all))
	}
}

// spaceAndID returns the session a request is about (spaceOf) and the id
// in its {id} path segment: the preamble of every read of one object of
// a session.
func (s *Server) spaceAndID(r *http.Request) (dag.ID, dag.ID, error) {
	space, err := s.spaceOf(r)
	if err != nil {
		return dag.ID{}, dag.ID{}, err
	}
	id, err := parseIDParam(r, "id")
	return space, id, err
}

// sessionLabels are the labels every response about a session carries
// (D54 simulation, D59 ephemeral).
type sessionLabels struct {
	Session    string `json:"session"`
	Simulation bool   `json:"simulation,omitempty"`
	Ephemeral  bool   `json:"ephemeral,omitempty"`
}

// sessionLabelsOf returns the labels of a session the node holds, or an error
// wrapping replica.ErrUnknownSpace. A session's flags are fixed by its
// session.create, so they are cached once known: the full State (and its
// hash) is not recomputed on every request.
func (s *Server) sessionLabelsOf(ctx context.Context, space dag.ID) (sessionLabels, error) {
	s.labelMu.Lock()
	l, ok := s.labelCache[space]
	s.labelMu.Unlock()
	if ok {
		return l, nil
	}
	st, _, err := s.rep.State(ctx, space)
	if err != nil {
		return sessionLabels{}, err
	}
	l = sessionLabels{Session: space.String(), Simulation: st.Simulation, Ephemeral: st.Education || s.o.Ephemeral}
	s.labelMu.Lock()
	if s.labelCache == nil {
		s.labelCache = map[dag.ID]sessionLabels{}
	}
	s.labelCache[space] = l
	s.labelMu.Unlock()
	return l, nil
}

// labels is sessionLabelsOf without the error: an unknown session has none.
func (s *Server) labels(ctx context.Context, space dag.ID) sessionLabels {
	l, err := s.sessionLabelsOf(ctx, space)
	if err != nil {
		return sessionLabels{Session: space.String()}
	}
	return l
}

// peersAPI returns what serves /peers now, or nil.
func (s *Server) peersAPI() Peers {
	if s.o.Peers != nil {
		return s.o.Peers
	}
	if s.n.Sync() != nil {
		return s.n
	}
	return nil
}

func parseIDParam(r *http.Request, name string) (dag.ID, error) {
	id, err := dag.ParseID(r.PathValue(name))
	if err != nil {
		return dag.ID{}, problemf(dag.CodeSchema, "%s: %v", name, err)
	}
	return id, nil
}
