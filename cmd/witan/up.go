package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/durable"
	"github.com/witan-dev/witan/replica/classroom"
	"github.com/witan-dev/witan/replica/httpapi"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// UpCommand runs a node: a Badger store in the data directory, a node key
// and a libp2p identity kept beside it, sync over libp2p (mDNS on a LAN,
// configured peers), the HTTP API on loopback, and a checkpoint of every
// session that grew, now and then. SIGINT or SIGTERM stops it cleanly: the
// HTTP server finishes the requests in flight (a receipt is sent only
// after its entry is durably stored), then the checkpoint loop and sync
// stop, then the replica and the store close.
type UpCommand struct {
	main *Main
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// upInfo is what up prints when it is ready.
type upInfo struct {
	NodeKey string   `json:"node_key"`
	Data    string   `json:"data"`
	HTTP    string   `json:"http"`
	Page    string   `json:"page"`
	Voter   string   `json:"voter,omitempty"`
	PeerID  string   `json:"peer_id"`
	P2P     []string `json:"p2p"`
	MDNS    bool     `json:"mdns"`
	Spaces  []string `json:"spaces"`
	// Reach is set when discovery beyond the LAN is on (-bootstrap,
	// -relay).
	Reach *reachInfo `json:"reach,omitempty"`
}

func (c *UpCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("up", "up [-data DIR] [-http ADDR] [-key FILE] [-peer MULTIADDR]... [-session ID]... [-mdns=false] [-json]")
	dataDir := fs.String("data", "witan-data", "data directory (Badger store, node key, libp2p key)")
	httpAddr := fs.String("http", "127.0.0.1:8030", "HTTP listen address (loopback unless -public)")
	public := fs.Bool("public", false, "allow -http on a non-loopback address (the API has no authentication)")
	var peers, listen, sessions, httpPeers listFlag
	fs.Var(&peers, "peer", "a peer's multiaddr with /p2p/ part (repeatable)")
	fs.Var(&httpPeers, "peer-http", "a peer's HTTP base URL to pull over plain HTTP, libp2p or not (repeatable)")
	var reportPeers listFlag
	var witnesses keyList
	fs.Var(&witnesses, "witness-key", "a node key (ed25519:…) whose cosignatures of this node's checkpoints are kept (repeatable; default: any witness's, at most 32 a session)")
	fs.Var(&reportPeers, "report-peer", "a node's HTTP base URL to ask for its reports on resolution specs that list it (repeatable; every -peer-http is one too)")
	httpEvery := fs.Duration("peer-http-every", 2*time.Second, "pull each -peer-http peer this often")
	fs.Var(&listen, "listen", "libp2p listen multiaddr (repeatable; default every interface — the LAN, for a classroom — TCP and QUIC, random ports)")
	fs.Var(&listen, "p2p-listen", "same as -listen")
	loopbackP2P := fs.Bool("loopback", false, "libp2p on loopback only (127.0.0.1, TCP and QUIC): no peer off this machine can reach the node")
	var allowHosts listFlag
	fs.Var(&allowHosts, "allow-host", "a host name clients may reach the HTTP API by, besides IP addresses and localhost (repeatable; stops DNS rebinding)")
	loopbackOperator := fs.Bool("loopback-operator", true, "let loopback clients take operator actions (POST /peers) without the token in WITAN_OPERATOR_TOKEN")
	fs.Var(&sessions, "session", "a session id or mem:NAME space to join at start (repeatable; spaces are agreed out of band)")
	mdns := fs.Bool("mdns", true, "find peers on the LAN with mDNS")
	var bootstrap, relays, discover listFlag
	fs.Var(&bootstrap, "bootstrap", "a witan DHT node's multiaddr with /p2p/ part, such as a witan relay's (repeatable): turns on discovery beyond the LAN, AutoNAT, relays and hole punching")
	fs.Var(&relays, "relay", "a circuit relay's multiaddr with /p2p/ part to reserve a slot on when behind a NAT (repeatable; default: relays found through -bootstrap)")
	fs.Var(&discover, "discover", "a session id or mem:NAME to join, advertise and look up in the DHT (repeatable; needs -bootstrap)")
	discoverSessions := fs.Bool("discover-sessions", false, "advertise and look up in the DHT every session held that is not an education session (memory spaces only by -discover)")
	reachability := fs.String("reachability", "", "public or private: what AutoNAT would find, for a node that knows (default: AutoNAT decides)")
	noP2P := fs.Bool("no-p2p", false, "run without libp2p (HTTP only)")
	announce := fs.Duration("announce-every", 0, "re-announce heads and redial peers this often (0: sync's default)")
	every := fs.Duration("checkpoint-every", 5*time.Second, "sign a checkpoint of each session that grew this often (0: never)")
	witnessEvery := fs.Duration("witness-every", node.DefaultWitnessEvery, "ask each libp2p peer for its latest checkpoint of each session both hold this often, and co-sign a new one (0: only after pulls)")
	asJSON := fs.Bool("json", false, "print the startup line as JSON")
	verbose := fs.Bool("v", false, "log sync events to stderr")
	voterKey := fs.String("key", "", "the member key this node votes with from its page (witan keygen; default DATA/voter.key if present)")
	opinionLimit := fs.String("opinion-rate-limit", "", "at most N opinions per signing key per window from HTTP clients, as N/DURATION (5/1h); refused rate_limited (D51; default none)")
	gcEvery := fs.Duration("gc-every", 10*time.Minute, "run the value log's garbage collection this often (0: never)")
	memLimit := fs.String("memory-limit", "512MiB", "soft limit on the Go heap (as GOMEMLIMIT: 256MiB, 1GiB; 0: none); GOMEMLIMIT in the environment wins")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	for _, sp := range sessions {
		if _, err := dag.ParseID(sp); err != nil && !strings.HasPrefix(sp, node.MemoryPrefix) {
			fmt.Fprintf(c.main.Stderr, "witan up: -session %q is neither a session id nor %sNAME\n", sp, node.MemoryPrefix)
			return errUsage
		}
	}
	for _, p := range peers {
		if err := sync.CheckPeerAddr(p); err != nil {
			fmt.Fprintln(c.main.Stderr, "witan up: -peer:", strings.TrimPrefix(err.Error(), "sync: "))
			return errUsage
		}
	}
	disc, named, err := discoveryFlags(bootstrap, relays, discover, *discoverSessions, *reachability)
	if err != nil {
		fmt.Fprintln(c.main.Stderr, "witan up:", err)
		return errUsage
	}
	for _, sp := range discover {
		if !slices.Contains(sessions, sp) {
			sessions = append(sessions, sp)
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		lim, err := parseSize(*memLimit)
		if err != nil {
			fmt.Fprintln(c.main.Stderr, "witan up: -memory-limit:", err)
			return errUsage
		}
		if lim > 0 {
			// Badger builds tables in memory and the Go heap grows to twice
			// what is live before it collects; a soft limit keeps a long
			// ingest flat (docs/storage.md, "Memory").
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(lim))
		}
	}
	if err := checkLoopback(*httpAddr, *public); err != nil {
		fmt.Fprintln(c.main.Stderr, "witan up:", err)
		return errUsage
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(c.main.Stderr, nil))
	}
	// A -key that cannot be read is said before anything is made.
	if *voterKey != "" {
		if _, err := readKeyFile(*voterKey); err != nil {
			return fmt.Errorf("-key: %w", err)
		}
	}
	if err := durable.MkdirAll(*dataDir, 0o700); err != nil {
		return err
	}
	var opened atomic.Pointer[node.Node] // for the discovery policy, once open
	key, err := node.LoadOrCreateKey(filepath.Join(*dataDir, "node.key"))
	if err != nil {
		return err
	}
	o := node.Options{Dir: filepath.Join(*dataDir, "badger"), NodeKey: key, Logger: logger, Witnesses: witnesses,
		MeetingsDir: filepath.Join(*dataDir, "meetings"), WitnessEvery: *witnessEvery}
	if *witnessEvery <= 0 {
		o.WitnessEvery = -1 // node.Options: only after pulls
	}
	if !*noP2P {
		id, err := loadOrCreateP2PKey(filepath.Join(*dataDir, "p2p.key"))
		if err != nil {
			return err
		}
		// A session created here is joined at once, so peers hear of it
		// (the node joins every space that changes on it).
		if len(listen) == 0 {
			listen = listFlag(sync.AllInterfaces) // the LAN, for a classroom
			if *loopbackP2P {
				listen = listFlag(sync.Loopback)
			}
		}
		o.Sync = &sync.Config{ListenAddrs: listen, Identity: id, Peers: peers, MDNS: *mdns, Spaces: sessions, Interval: *announce, Logger: logger}
		if disc.Bootstrap != nil || disc.Relays != nil {
			disc.Space = func(space string) bool {
				n := opened.Load()
				return n != nil && n.Discoverable(context.Background(), space, named, *discoverSessions)
			}
			o.Sync.Discovery = disc
		}
		if *verbose {
			o.Sync.Engine.OnEvent = func(e sync.Event) {
				logger.Info("sync", "event", e.Kind.String(), "peer", e.Peer, "space", e.Space, "err", e.Err)
			}
		}
	}
	local, err := node.Open(ctx, o)
	if err != nil {
		return err
	}
	defer local.Close()
	opened.Store(local)

	voter, err := loadVoter(*voterKey, filepath.Join(*dataDir, "voter.key"))
	if err != nil {
		return err
	}
	info := upInfo{NodeKey: key.Key().String(), Data: *dataDir, MDNS: *mdns && !*noP2P, P2P: []string{}, Spaces: []string(sessions)}
	if sn := local.Sync(); sn != nil {
		info.PeerID, info.P2P = sn.ID().String(), sn.Addrs()
		if o.Sync.Discovery.Bootstrap != nil || o.Sync.Discovery.Relays != nil {
			info.Reach = &reachInfo{Reachability: sn.Reachability(), DHT: sn.DHTMode(), Bootstrap: bootstrap, Discover: discover,
				HolePunching: sn.HolePunching()}
		}
	}
	limit, err := parseOpinionLimit(*opinionLimit)
	if err != nil {
		return err
	}
	srv, err := httpapi.New(httpapi.Options{Node: local, Logger: logger, Witnesses: witnesses, ReportPeers: append(append([]string{}, httpPeers...), reportPeers...),
		AllowedHosts: allowHosts, OperatorToken: os.Getenv("WITAN_OPERATOR_TOKEN"), LoopbackOperator: *loopbackOperator,
		Implementation:   httpapi.Implementation{Name: "witan", Version: version, Source: "https://github.com/witan-dev/witan"},
		OpinionRateLimit: limit})
	if err != nil {
		return err
	}
	// The classroom page at "/", in front of the API. Served beyond
	// loopback (-public), it is read-only.
	page, err := classroom.New(classroom.Options{Node: local, API: srv, Voter: voter,
		ReadOnly: checkLoopback(*httpAddr, false) != nil, Names: filepath.Join(*dataDir, "names.json")})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: page, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	// Event streams never finish by themselves: end them when Shutdown
	// starts, or it would wait for them.
	hs.RegisterOnShutdown(srv.StopEvents)
	info.HTTP = "http://" + ln.Addr().String()
	info.Page = info.HTTP + "/"
	if voter != nil {
		info.Voter = voter.Key().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	var wg gosync.WaitGroup
	cpCtx, stopCP := context.WithCancel(context.Background())
	defer stopCP()
	if gc, ok := local.Store().(interface {
		GC(context.Context) (int, error)
	}); ok && *gcEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gcLoop(cpCtx, gc.GC, *gcEvery, logger)
		}()
	}
	if *every > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkpointLoop(cpCtx, local, *every)
		}()
	}
	for _, u := range httpPeers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			httpPullLoop(cpCtx, local, node.NewHTTPPeer(u, nil), *httpEvery, logger)
		}()
	}
	c.printInfo(info, *asJSON)
	if info.Reach != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.watchReach(cpCtx, local.Sync(), *asJSON)
		}()
	}

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	shutErr := hs.Shutdown(sctx)
	stopCP()
	wg.Wait()
	closeErr := local.Close() // sync, then the replica, then the store
	if !*asJSON {
		fmt.Fprintln(c.main.Stdout, "stopped")
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, shutErr, closeErr)
}

func (c *UpCommand) printInfo(info upInfo, asJSON bool) {
	if asJSON {
		json.NewEncoder(c.main.Stdout).Encode(info)
		return
	}
	w := c.main.Stdout
	fmt.Fprintln(w, "witan node is up. Not for use in real elections or governance.")
	fmt.Fprintf(w, "  node key  %s\n", info.NodeKey)
	fmt.Fprintf(w, "  data      %s\n", info.Data)
	fmt.Fprintf(w, "  http      %s%s\n", info.HTTP, httpapi.Base)
	fmt.Fprintf(w, "  page      %s\n", info.Page)
	if info.Voter != "" {
		fmt.Fprintf(w, "  voter     %s\n", info.Voter)
	}
	if info.PeerID != "" {
		fmt.Fprintf(w, "  peer id   %s\n", info.PeerID)
		for _, a := range info.P2P {
			fmt.Fprintf(w, "  p2p       %s\n", a)
		}
		fmt.Fprintf(w, "  mdns      %v\n", info.MDNS)
		if r := info.Reach; r != nil {
			fmt.Fprintf(w, "  dht       %s, bootstrap %d, discover %s\n", r.DHT, len(r.Bootstrap), strings.Join(r.Discover, " "))
			fmt.Fprintf(w, "  reach     %s (AutoNAT; changes are printed as they come)\n", r.Reachability)
		}
	}
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}

// checkLoopback refuses a non-loopback HTTP address unless public.
func checkLoopback(addr string, public bool) error {
	if public {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-http %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-http %q is not a loopback address; the API has no authentication (use -public to serve a network)", addr)
}

func checkpointLoop(ctx context.Context, l *node.Node, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			checkpointAll(ctx, l)
		}
	}
}

// checkpointAll signs a checkpoint of every session whose log grew since
// its last checkpoint.
func checkpointAll(ctx context.Context, l *node.Node) {
	rep := l.Replica()
	for _, s := range rep.Sessions() {
		var last uint64
		if cp, ok := rep.LastCheckpoint(s); ok {
			last = cp.Size
		}
		more, err := rep.Log(ctx, s, last, 1)
		if err != nil || len(more) == 0 {
			continue
		}
		rep.Checkpoint(ctx, s)
	}
}

// loadVoter reads the key the page votes with: the file named by -key, or
// the node's own key store (DATA/voter.key) if there is one there; none
// leaves the page unable to vote.
func loadVoter(named, store string) (*dag.Signer, error) {
	if named != "" {
		return readKeyFile(named)
	}
	s, err := readKeyFile(store)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return s, err
}

// loadOrCreateP2PKey keeps the libp2p identity, so a node's peer id (and
// so the addresses its peers were given) survives a restart. Like the node
// key, it is created once, durably, and a damaged one is an error.
func loadOrCreateP2PKey(path string) (crypto.PrivKey, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) == 0 {
			return nil, damagedKey(path, adviceP2PKey, node.ErrEmptyKey)
		}
		k, err := crypto.UnmarshalPrivateKey(b)
		if err != nil {
			return nil, damagedKey(path, adviceP2PKey, err)
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	k, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		return nil, err
	}
	b, err = crypto.MarshalPrivateKey(k)
	if err != nil {
		return nil, err
	}
	if err := durable.CreateFile(path, b, 0o600); err != nil {
		if errors.Is(err, os.ErrExist) {
			return loadOrCreateP2PKey(path)
		}
		return nil, err
	}
	return k, nil
}

var _ flag.Value = (*listFlag)(nil)

// parseSize reads a byte count as GOMEMLIMIT writes it: digits with an
// optional B, KiB, MiB, GiB or TiB suffix.
func parseSize(v string) (int64, error) {
	num := strings.TrimRight(v, "BKMGTi")
	unit := v[len(num):]
	mult, ok := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size such as 512MiB", v)
	}
	return n * mult, nil
}

// gcLoop runs the store's value-log GC every d until ctx ends, logging
// what each run rewrote.
func gcLoop(ctx context.Context, gc func(context.Context) (int, error), d time.Duration, log *slog.Logger) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		n, err := gc(ctx)
		log.Info("value log gc", "files_rewritten", n, "took", time.Since(start), "err", err)
	}
}

// parseOpinionLimit reads -opinion-rate-limit: "" is no limit, else
// N/DURATION.
func parseOpinionLimit(s string) (httpapi.OpinionLimit, error) {
	if s == "" {
		return httpapi.OpinionLimit{}, nil
	}
	n, d, ok := strings.Cut(s, "/")
	per, err := strconv.Atoi(n)
	if !ok || err != nil || per <= 0 {
		return httpapi.OpinionLimit{}, fmt.Errorf("%w: -opinion-rate-limit %q: want N/DURATION, such as 5/1h", errUsage, s)
	}
	w, err := time.ParseDuration(d)
	if err != nil || w <= 0 {
		return httpapi.OpinionLimit{}, fmt.Errorf("%w: -opinion-rate-limit %q: want N/DURATION, such as 5/1h", errUsage, s)
	}
	return httpapi.OpinionLimit{PerKey: per, Window: w}, nil
}
