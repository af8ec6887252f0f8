package httpapi

// This file is the door's guard (docs/security.md): what a web page in
// the user's browser, a DNS-rebinding site or a client on the LAN may not
// do through the HTTP API. Every request's Host must name this node;
// writes must be JSON, must not come from another site's page, and are
// rate limited per client; operator actions (POST /peers: make the node
// dial out) need the operator's token or a loopback client on a node
// that allows it.

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/dag"
)

// Codes of the guard's refusals (witan's namespace: not 30k codes).
const (
	CodeForbidden            dag.Code = "witan:forbidden"
	CodeUnsupportedMediaType dag.Code = "witan:unsupported_media_type"
)

// Defaults of the guard's limits (Options.WriteRate, WriteBurst,
// KeyRegisterPerHour).
const (
	DefaultWriteRate          = 50  // writes per second per client
	DefaultWriteBurst         = 500 // writes a client may make at once
	DefaultKeyRegisterPerHour = 60  // key.register submissions per client per hour
	maxClients                = 4096
)

// isLoopbackHost reports whether host (no port) is a loopback name.
func isLoopbackHost(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// hostAllowed: a Host that names this node. IP literals are allowed (a
// DNS-rebinding page reaches the node under its own domain name, never an
// address), as are loopback names and the configured ones.
func (s *Server) hostAllowed(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(hostOnly(host)), ".")
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil || isLoopbackHost(h) {
		return true
	}
	for _, a := range s.o.AllowedHosts {
		if strings.EqualFold(strings.TrimSuffix(a, "."), h) {
			return true
		}
	}
	return false
}

// originAllowed: a write's Origin, when a browser sent one, is this very
// node (same host and port as the request) or a configured one.
func (s *Server) originAllowed(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not a browser's cross-origin request
	}
	for _, a := range s.o.AllowedOrigins {
		if strings.EqualFold(a, o) {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false // "null" (a sandboxed page, a file) and the like
	}
	return strings.EqualFold(u.Host, r.Host)
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func clientOf(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func loopbackClient(r *http.Request) bool {
	ip := net.ParseIP(clientOf(r))
	return ip != nil && ip.IsLoopback()
}

// guard checks every request before it is routed: its Host must name
// this node. It writes the refusal and returns false.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	if !s.hostAllowed(r.Host) {
		WriteProblem(w, CodeForbidden, "Host "+r.Host+" does not name this node (add it to the allowed hosts)")
		return false
	}
	return true
}

// guardWrite checks a write (a POST to an endpoint that takes one): not
// from another site's page, JSON, within its client's rate. It writes the
// refusal and returns false, or returns the request to serve, its context
// naming the client as the source of what it writes.
func (s *Server) guardWrite(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if !s.originAllowed(r) {
		WriteProblem(w, CodeForbidden, "a write from another site's page ("+r.Header.Get("Origin")+") is refused")
		return nil, false
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		WriteProblem(w, CodeUnsupportedMediaType, "a write must have Content-Type application/json")
		return nil, false
	}
	client := clientOf(r)
	if (s.o.LimitLoopback || !loopbackClient(r)) && !s.limits.allow(client, time.Now()) {
		w.Header().Set("Retry-After", "1")
		WriteProblem(w, dag.CodeRateLimited, "too many writes from "+client+"; slow down")
		return nil, false
	}
	return r.WithContext(dag.WithSource(r.Context(), "http:"+client)), true
}

// operator reports whether r may take an operator action (POST /peers):
// it carries the operator token, or comes from loopback on a server that
// allows that (Options.LoopbackOperator).
func (s *Server) operator(r *http.Request) bool {
	if t := s.o.OperatorToken; t != "" {
		if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok &&
			subtle.ConstantTimeCompare([]byte(a), []byte(t)) == 1 {
			return true
		}
	}
	return s.o.LoopbackOperator && loopbackClient(r)
}

// keyRegisterAllowed counts a key.register from r's client against its
// hourly allowance.
func (s *Server) keyRegisterAllowed(r *http.Request) bool {
	if !s.o.LimitLoopback && loopbackClient(r) {
		return true
	}
	return s.keyRegs.allow(clientOf(r), time.Now())
}

// buckets is a token bucket per client, for at most maxClients clients
// (the least recently seen forgotten first).
type buckets struct {
	mu    gosync.Mutex
	rate  float64 // tokens per second; <= 0: unlimited
	burst float64
	m     map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newBuckets(rate, burst float64) *buckets {
	return &buckets{rate: rate, burst: burst, m: map[string]*bucket{}}
}

func (b *buckets) allow(client string, now time.Time) bool {
	if b.rate <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.m[client]
	if k == nil {
		if len(b.m) >= maxClients {
			var oldest string
			var t time.Time
			for c, x := range b.m {
				if oldest == "" || x.last.Before(t) {
					oldest, t = c, x.last
				}
			}
			delete(b.m, oldest)
		}
		k = &bucket{tokens: b.burst, last: now}
		b.m[client] = k
	}
	k.tokens = min(b.burst, k.tokens+now.Sub(k.last).Seconds()*b.rate)
	k.last = now
	if k.tokens < 1 {
		return false
	}
	k.tokens--
	return true
}
