package classroom

// This file is the Handler: the embedded page, its three endpoints, and
// the guard every write passes.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

//go:embed assets
var assets embed.FS

// Prefix is where this package's own endpoints live.
const Prefix = "/classroom/v0"

// maxBody bounds a write's request body.
const maxBody = 4 << 10

// maxScan bounds the log entries a vote reads to find the voter's
// previous ballot on the MR.
const maxScan = 1 << 20

// Peers is what the teacher's view needs of the sync node: who is
// connected, and what heads each is known to hold in a space (announced,
// answered a pull with, or sent it by this node).
type Peers interface {
	Connected() []string
	Announced(peer, space string) []dag.ID
}

// Options configure a Handler. Node and API are required; the zero value
// of the rest works (no voter, writes allowed on loopback, no peers).
type Options struct {
	Node *node.Node
	// API serves everything that is not the page (the /oth/v0 server).
	API http.Handler
	// Voter is the student's key on this node: the page's ballots are
	// signed with it. Nil: the page cannot vote.
	Voter *dag.Signer
	// ReadOnly refuses every write: set it when the page is served on a
	// non-loopback address.
	ReadOnly bool
	// Peers feeds the teacher's view; nil: the node's own sync node
	// (node.Options.Sync), or no peers if it has none.
	Peers Peers
	// Clock stamps ballots' ts (time.Now if nil).
	Clock func() time.Time
	// Names is the file of the node-local address book: the names the
	// teacher types for members' keys (witan up keeps DATA/names.json).
	// Empty: the names live in memory only.
	Names string
}

// Handler serves the page, its endpoints, and the API behind them.
type Handler struct {
	o     Options
	mux   *http.ServeMux
	token string
	index []byte
	voteM gosync.Mutex // one signed write at a time, so each builds on the last
	book  *addressBook
	probe prober
}

var _ http.Handler = (*Handler)(nil)

// New returns a Handler. Its CSRF token is new for each Handler.
func New(o Options) (*Handler, error) {
	if o.Node == nil || o.API == nil {
		return nil, errors.New("classroom: Options.Node and Options.API are required")
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	book, err := openBook(o.Names)
	if err != nil {
		return nil, err
	}
	h := &Handler{o: o, mux: http.NewServeMux(), token: base64.RawURLEncoding.EncodeToString(b[:]), book: book}
	idx, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return nil, err
	}
	h.index = h.page(idx)
	h.mux.HandleFunc("GET /{$}", h.serveIndex)
	h.mux.HandleFunc("GET /assets/", h.serveAsset)
	h.mux.HandleFunc("POST "+Prefix+"/vote", h.guard(h.vote))
	h.mux.HandleFunc("POST "+Prefix+"/checkpoint", h.guard(h.checkpoint))
	h.mux.HandleFunc("GET "+Prefix+"/peers", h.peers)
	h.mux.HandleFunc("POST "+Prefix+"/start", h.guard(h.start))
	h.mux.HandleFunc("POST "+Prefix+"/enrol", h.guard(h.enrol))
	h.mux.HandleFunc("POST "+Prefix+"/join", h.guard(h.join))
	h.mux.HandleFunc("POST "+Prefix+"/propose", h.guard(h.propose))
	h.mux.HandleFunc("POST "+Prefix+"/close", h.guard(h.close))
	h.mux.HandleFunc("GET "+Prefix+"/names", h.names)
	h.mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteProblem(w, httpapi.CodeNotFound, "no endpoint at "+r.Method+" "+r.URL.Path)
	})
	h.mux.Handle("/", o.API)
	return h, nil
}

// Token returns the page's CSRF token (for tests and embedders).
func (h *Handler) Token() string { return h.token }

// ServeHTTP implements http.Handler. When the API has a front door
// (httpapi.Server.Front) every request passes it first, the page's own
// paths too: one Host check, one answer for unclean paths, one guard for
// every write.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f, ok := h.o.API.(frontDoor); ok {
		if r, ok = f.Front(w, r); !ok {
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

// frontDoor is httpapi.Server's Front.
type frontDoor interface {
	Front(w http.ResponseWriter, r *http.Request) (*http.Request, bool)
}

// page fills the index's placeholders: the token (empty when read-only)
// and the voter's public key.
func (h *Handler) page(idx []byte) []byte {
	tok, voter, ro := h.token, "", "false"
	if h.o.ReadOnly {
		tok, ro = "", "true"
	}
	if h.o.Voter != nil {
		voter = h.o.Voter.Key().String()
	}
	peer := ""
	if sn := h.o.Node.Sync(); sn != nil {
		peer = sn.ID().String()
	}
	code := ""
	if h.o.Voter != nil {
		code = EnrolCode(h.o.Voter.Key(), peer)
	}
	r := strings.NewReplacer("{{csrf}}", tok, "{{voter}}", voter, "{{readonly}}", ro,
		"{{node}}", h.o.Node.Replica().NodeKey().String(), "{{peer}}", peer, "{{code}}", code)
	return []byte(r.Replace(string(idx)))
}

func securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !h.o.ReadOnly && !loopbackRequest(r) {
		// A page that reached another machine gets no token.
		w.Write(bytes.Replace(h.index, []byte(h.token), nil, 1))
		return
	}
	w.Write(h.index)
}

func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := path.Clean(strings.TrimPrefix(r.URL.Path, "/"))
	if name == "assets/index.html" || !strings.HasPrefix(name, "assets/") {
		httpapi.WriteProblem(w, httpapi.CodeNotFound, "no asset at "+r.URL.Path)
		return
	}
	b, err := assets.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		httpapi.WriteProblem(w, httpapi.CodeNotFound, "no asset at "+r.URL.Path)
		return
	}
	securityHeaders(w)
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

// loopbackRequest reports whether r came from loopback and names a
// loopback host: a page on another origin that resolves a name of its own
// to 127.0.0.1 (DNS rebinding) still sends its own name in Host.
func loopbackRequest(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return false
	}
	return loopbackHost(r.Host)
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// guard admits a write only from the page on loopback (doc.go, duty 2).
func (h *Handler) guard(next func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		deny := func(why string) { httpapi.WriteProblem(w, dag.CodeNotAuthorized, why) }
		switch {
		case h.o.ReadOnly:
			deny("this page is read-only: the node serves it beyond loopback")
			return
		case !loopbackRequest(r):
			deny("writes are taken only from loopback, addressed to a loopback host")
			return
		case subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Witan-CSRF")), []byte(h.token)) != 1:
			deny("missing or wrong X-Witan-CSRF token: reload the page")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			deny("request from another origin (" + o + ")")
			return
		}
		if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
			httpapi.WriteProblem(w, dag.CodeSchema, "want Content-Type application/json")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if err := next(w, r); err != nil {
			var pe *dag.ProtocolError
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				httpapi.WriteProblem(w, httpapi.CodeTooLarge, fmt.Sprintf("body larger than %d bytes", mbe.Limit))
			case errors.As(err, &pe):
				httpapi.WriteError(w, err)
			case errors.Is(err, replica.ErrUnknownSpace), errors.Is(err, dag.ErrNotFound):
				httpapi.WriteProblem(w, httpapi.CodeNotFound, err.Error())
			default:
				httpapi.WriteProblem(w, httpapi.CodeInternal, "internal error")
			}
		}
	}
}

func schemaf(format string, args ...any) error {
	return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "classroom: " + fmt.Sprintf(format, args...)}
}

func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return schemaf("body: %v", err)
	}
	return nil
}

// readSession reads a body that names a session (readJSON into v, whose
// session field is session) and returns the session's id.
func readSession(r *http.Request, v any, session *string) (dag.ID, error) {
	if err := readJSON(r, v); err != nil {
		return dag.ID{}, err
	}
	sid, err := dag.ParseID(*session)
	if err != nil {
		return dag.ID{}, schemaf("session: %v", err)
	}
	return sid, nil
}

func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(append(b, '\n'))
	return err
}

// VoteRequest is POST /classroom/v0/vote's body.
type VoteRequest struct {
	Session string `json:"session"`
	MR      string `json:"mr"`
	Choice  string `json:"choice"`
}

// VoteAnswer is its answer: the node's signed receipt for the ballot, and
// the ballot envelope the voter's key signed.
type VoteAnswer struct {
	Receipt    *replica.Receipt `json:"receipt"`
	Envelope   json.RawMessage  `json:"envelope"`
	Supersedes *dag.ID          `json:"supersedes"`
	Finality   replica.Finality `json:"finality"`
	Simulation bool             `json:"simulation,omitempty"`
}

func (h *Handler) vote(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if h.o.Voter == nil {
		return &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: this node holds no voter key (witan up -key FILE)"}
	}
	var req VoteRequest
	sid, err := readSession(r, &req, &req.Session)
	if err != nil {
		return err
	}
	mr, err := dag.ParseID(req.MR)
	if err != nil {
		return schemaf("mr: %v", err)
	}
	switch req.Choice {
	case "approve", "reject", "abstain":
	default:
		return schemaf("choice %q: want approve, reject or abstain", req.Choice)
	}
	space := sid
	rep := h.o.Node.Replica()
	st, _, err := rep.State(ctx, space)
	if err != nil {
		return err
	}
	if _, err := h.o.Node.Views().MR(ctx, sid, mr); err != nil {
		return err
	}
	h.voteM.Lock()
	defer h.voteM.Unlock()
	prev, err := h.lastBallot(ctx, space.String(), mr)
	if err != nil {
		return err
	}
	body := map[string]any{"mr": mr, "choice": req.Choice, "supersedes": nil}
	if prev.Valid() {
		body["supersedes"] = prev
	}
	raw, err := dag.Marshal(body)
	if err != nil {
		return err
	}
	parents, err := h.o.Node.Heads(ctx, space.String())
	if err != nil {
		return err
	}
	env := &dag.Envelope{Type: dag.TxBallotCast, Session: sid, Parents: parents, Body: raw,
		TS: h.o.Clock().UTC().Format(time.RFC3339)}
	data, _, err := env.Seal(h.o.Voter)
	if err != nil {
		return err
	}
	rc, err := h.o.Node.Submit(ctx, data, nil)
	if err != nil {
		return err
	}
	a := VoteAnswer{Receipt: rc, Envelope: data, Finality: replica.Provisional, Simulation: st.Simulation}
	if prev.Valid() {
		a.Supersedes = &prev
	}
	if rc.Status != "accepted" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
	}
	return writeJSON(w, a)
}

// lastBallot finds the voter's latest ballot on mr in this node's log:
// the page's next ballot supersedes it, since two unlinked ballots would
// void the member (D10).
func (h *Handler) lastBallot(ctx context.Context, space string, mr dag.ID) (dag.ID, error) {
	ids, err := h.o.Node.Log(ctx, space, 0, maxScan)
	if err != nil {
		return dag.ID{}, err
	}
	me := h.o.Voter.Key()
	var last dag.ID
	for _, id := range ids {
		e, err := h.o.Node.Get(ctx, id)
		if err != nil {
			return dag.ID{}, err
		}
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil || env.Type != dag.TxBallotCast || env.Author != me {
			continue
		}
		var b struct {
			MR dag.ID `json:"mr"`
		}
		if json.Unmarshal(env.Body, &b) == nil && b.MR == mr {
			last = id
		}
	}
	return last, nil
}

// CheckpointRequest is POST /classroom/v0/checkpoint's body.
type CheckpointRequest struct {
	Session string `json:"session"`
}

func (h *Handler) checkpoint(w http.ResponseWriter, r *http.Request) error {
	var req CheckpointRequest
	sid, err := readSession(r, &req, &req.Session)
	if err != nil {
		return err
	}
	rep := h.o.Node.Replica()
	st, _, err := rep.State(r.Context(), sid)
	if err != nil {
		return err
	}
	cp, err := rep.Checkpoint(r.Context(), sid)
	if err != nil {
		return err
	}
	raw, err := cp.MarshalJSON()
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"session": sid, "checkpoint": json.RawMessage(raw),
		"finality": replica.FinalAdvisory, "simulation": st.Simulation})
}

// PeerStatus is one connected peer in the teacher's view.
type PeerStatus struct {
	ID string `json:"id"`
	// Announced is false until this node knows heads the peer holds in
	// the session (it announced them, answered a pull with them, or was
	// sent them by this node); then Behind counts the entries of this
	// node's log the peer does not hold (by the ancestry of its heads),
	// and Ahead the heads it holds that this node does not.
	Announced bool `json:"announced"`
	Behind    int  `json:"behind"`
	Ahead     int  `json:"ahead"`
}

// maxWalk bounds the ancestry walked per peer.
const maxWalk = 1 << 18

func (h *Handler) peers(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sid, err := dag.ParseID(r.URL.Query().Get("session"))
	if err != nil {
		httpapi.WriteProblem(w, dag.CodeSchema, "session: "+err.Error())
		return
	}
	space := sid
	st, _, err := h.o.Node.Replica().State(ctx, space)
	if errors.Is(err, replica.ErrUnknownSpace) {
		httpapi.WriteProblem(w, httpapi.CodeNotFound, "this node holds no session "+space.String())
		return
	}
	if err != nil {
		httpapi.WriteError(w, err)
		return
	}
	size, err := h.o.Node.Replica().LogSize(ctx, space) // not the log itself
	if err != nil {
		httpapi.WriteError(w, err)
		return
	}
	out := []PeerStatus{}
	peers := h.o.Peers
	if sn := h.o.Node.Sync(); peers == nil && sn != nil {
		peers = syncPeers{sn}
	}
	if peers != nil {
		own, err := h.o.Node.Replica().Heads(ctx, space)
		if err != nil {
			httpapi.WriteError(w, err)
			return
		}
		pr, _ := peers.(Prober)
		for _, p := range peers.Connected() {
			ps := PeerStatus{ID: p}
			heads := peers.Announced(p, space.String())
			upToDate := len(heads) > 0 && covers(heads, own)
			if pr != nil && !upToDate {
				// Not known to hold this node's heads: it may, having
				// pulled them from another laptop and kept quiet since
				// (its announcements of heads others announced are
				// suppressed). Ask it, in the background; the next
				// request shows the answer.
				h.probe.ask(pr, p, space.String())
			}
			if len(heads) > 0 {
				ps.Announced = true
				if upToDate {
					// Every head of this node's is one of the peer's, so
					// the peer holds the whole log: no walk. The teacher's
					// page asks every few seconds, and walking a long log
					// per peer each time would cost far more.
					ps.Ahead = len(heads) - len(h.applied(ctx, heads))
				} else {
					held, ahead := h.ancestry(ctx, heads)
					ps.Behind, ps.Ahead = max(0, int(size)-held), ahead
				}
			}
			out = append(out, ps)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, map[string]any{"session": space, "log_size": size, "peers": out, "finality": replica.Provisional, "simulation": st.Simulation})
}

// ancestry counts the entries this node holds that are heads or
// ancestors of heads, and the heads it does not hold.
func (h *Handler) ancestry(ctx context.Context, heads []dag.ID) (held, missing int) {
	seen := map[dag.ID]bool{}
	queue := h.applied(ctx, heads)
	missing = len(heads) - len(queue)
	for len(queue) > 0 && len(seen) < maxWalk {
		id := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		ps, err := h.o.Node.Parents(ctx, id)
		if err != nil {
			continue
		}
		queue = append(queue, ps...)
	}
	return len(seen), missing
}

// covers reports whether every id of own is among heads.
func covers(heads, own []dag.ID) bool {
	for _, o := range own {
		if !slices.Contains(heads, o) {
			return false
		}
	}
	return true
}

// applied returns the heads this node holds applied.
func (h *Handler) applied(ctx context.Context, heads []dag.ID) []dag.ID {
	var out []dag.ID
	for _, hd := range heads {
		if st, err := h.o.Node.Has(ctx, hd); err == nil && st == dag.Applied {
			out = append(out, hd)
		}
	}
	return out
}

// syncPeers is the teacher's view of the node's own sync node.
type syncPeers struct{ n *sync.Node }

func (p syncPeers) Connected() []string {
	var out []string
	for _, id := range p.n.Host().Network().Peers() {
		out = append(out, id.String())
	}
	slices.Sort(out)
	return out
}

func (p syncPeers) Announced(peer, space string) []dag.ID { return p.n.Engine().Announced(peer, space) }

// Probe pulls space from peer: its answer ends with the peer's heads,
// which the sync engine keeps as seen (and brings anything this node
// lacks). It runs for at most probeTimeout.
func (p syncPeers) Probe(ctx context.Context, peerID, space string) {
	id, err := peer.Decode(peerID)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	p.n.SyncWith(ctx, id, space) //nolint:errcheck // a probe that fails leaves the view as it was
}

// Prober is implemented by a Peers that can ask a peer which heads it
// holds (the node's sync node does, by a pull from it). The teacher's
// view asks a connected peer not known to hold this node's heads, at most
// once every probeEvery per peer and space, and at most maxProbes at once.
type Prober interface {
	Probe(ctx context.Context, peer, space string)
}

const (
	probeEvery   = 5 * time.Second
	probeTimeout = 10 * time.Second
	maxProbes    = 4
)

// prober runs the teacher's view's probes: a peer and space no sooner
// than probeEvery after the last probe of them (the sync node joins a
// pull of them to one still running), at most maxProbes running; what it
// remembers is bounded by the peers asked about within the last
// probeEvery.
type prober struct {
	mu      gosync.Mutex
	last    map[[2]string]time.Time
	running int
}

func (q *prober) ask(pr Prober, peer, space string) {
	now := time.Now()
	k := [2]string{peer, space}
	q.mu.Lock()
	if q.last == nil {
		q.last = map[[2]string]time.Time{}
	}
	if t, ok := q.last[k]; ok && now.Sub(t) < probeEvery || q.running >= maxProbes {
		q.mu.Unlock()
		return
	}
	for k2, t := range q.last {
		if now.Sub(t) >= probeEvery {
			delete(q.last, k2)
		}
	}
	q.last[k] = now
	q.running++
	q.mu.Unlock()
	go func() {
		defer func() {
			q.mu.Lock()
			q.running--
			q.mu.Unlock()
		}()
		pr.Probe(context.Background(), peer, space)
	}()
}
