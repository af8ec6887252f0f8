package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Link is a link between nodes that the harness owns: it listens on
// Listen and forwards every HTTP request to Target (a reverse proxy). The
// operator points a node's peer sync at the link's address instead of at
// its peer, so the harness can partition the nodes (Cut: every request is
// refused 503 and its connection closed) and heal them (Heal), which S9
// needs: over /oth/v0 alone it cannot stop two nodes syncing.
type Link struct {
	Listen string // host:port the link listens on
	Target string // the base URL it forwards to

	ln  net.Listener
	srv *http.Server

	mu        sync.Mutex
	cut       bool
	gen       context.Context // cancelled by Cut: ends the requests in flight
	cancel    context.CancelFunc
	inflight  int
	forwarded int64 // requests forwarded since the link started
	refused   int64 // requests refused while cut
}

// ParseLink reads LISTEN=TARGET (TARGET a base URL, http:// assumed when
// it has no scheme).
func ParseLink(s string) (listen, target string, err error) {
	listen, target, ok := strings.Cut(s, "=")
	if !ok || listen == "" || target == "" {
		return "", "", fmt.Errorf("link %q: want LISTEN=TARGET (host:port=http://host:port)", s)
	}
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", fmt.Errorf("link %q: target %q is not an http(s) URL", s, target)
	}
	return listen, target, nil
}

// StartLink listens on listen and forwards to target.
func StartLink(listen, target string) (*Link, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("harness: link: %w", err)
	}
	l := &Link{Listen: ln.Addr().String(), Target: target, ln: ln}
	l.gen, l.cancel = context.WithCancel(context.Background())
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		// A node's stream of events is flushed as it comes.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Connection", "close")
			http.Error(w, "harness link: "+err.Error(), http.StatusBadGateway)
		},
	}
	l.srv = &http.Server{Handler: l.handler(proxy), ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at Close
	return l, nil
}

func (l *Link) handler(proxy http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		if l.cut {
			l.refused++
			l.mu.Unlock()
			w.Header().Set("Connection", "close")
			http.Error(w, "harness link cut (a partition)", http.StatusServiceUnavailable)
			return
		}
		l.inflight++
		gen := l.gen
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			l.inflight--
			l.forwarded++
			l.mu.Unlock()
		}()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(gen, cancel)
		defer stop()
		proxy.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Cut partitions the link: requests in flight are ended, and every
// request after is refused until Heal. It returns once none is in flight.
func (l *Link) Cut() error {
	l.mu.Lock()
	l.cut = true
	l.cancel()
	l.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		n := l.inflight
		l.mu.Unlock()
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("harness: link %s: %d requests still in flight 10 s after the cut", l.Listen, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Heal forwards again.
func (l *Link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
	l.gen, l.cancel = context.WithCancel(context.Background())
}

// Counts reports how many requests the link forwarded and refused.
func (l *Link) Counts() (forwarded, refused int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.forwarded, l.refused
}

// String is LISTEN=TARGET.
func (l *Link) String() string { return l.Listen + "=" + l.Target }

// Close stops the link.
func (l *Link) Close() error {
	l.mu.Lock()
	l.cancel()
	l.mu.Unlock()
	err := l.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
