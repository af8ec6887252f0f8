package harness

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Version is the harness's version, recorded in every report and
// replication.json.
const Version = "0.1.0"

// Config shapes a run.
type Config struct {
	// Nodes are the base URLs of the nodes under test (http://host:port,
	// with or without /oth/v0). Writes go to the first; every scenario
	// ends with the convergence check across all.
	Nodes []string
	// Seed derives every key, bloc and choice (default "witan-harness").
	Seed string
	// RunID tells this run's sessions from an earlier run's with the same
	// seed on the same nodes (it is part of every session's label); empty
	// means the start time. A replication sets it to reproduce a run.
	RunID string
	// Roster is the roster of the small scenarios (default 10: the
	// thresholds below are worked out for it).
	Roster int
	// S11 sizes the scale scenario.
	S11 S11Size
	// Only, when set, runs these entries (ids such as "S1").
	Only []string
	// DataDirs are the nodes' data directories, by node index, when the
	// harness runs beside them: storage growth per 1,000 ballots is
	// measured from the first.
	DataDirs []string
	// ConvergeTimeout bounds each convergence wait (default 60 s).
	ConvergeTimeout time.Duration
	// FinalityTimeout bounds the wait for a checkpoint (default 60 s).
	FinalityTimeout time.Duration
	// FreshNode, when set, starts a node that syncs from the first one
	// from genesis and returns its URL and a stop function: the harness
	// times how long it takes to hold what the others hold.
	FreshNode func(ctx context.Context) (string, func(), error)
	// Links are links the harness owns, each LISTEN=TARGET: it listens
	// on LISTEN and forwards HTTP to TARGET (a node's base URL). When the
	// operator points the nodes' peer sync at the links, S9 partitions
	// the nodes by cutting every link and heals them after; without
	// links S9 is partial.
	Links []string
	// Log, when set, receives progress lines.
	Log io.Writer
}

// S11Size is the scale scenario's size.
type S11Size struct {
	Members int `json:"members"`
	MRs     int `json:"mrs"`
	// Turnout is the share of the electorate that votes on each
	// threshold MR, in percent (default 60).
	Turnout int `json:"turnout_percent"`
	// Workers submit ballots in parallel (default 4).
	Workers int `json:"workers"`
}

// SmallS11 is the CI size; FullS11 the spec's (11,000 members, ~300 MRs).
var (
	SmallS11 = S11Size{Members: 60, MRs: 12, Turnout: 60, Workers: 4}
	// FullS11's turnout keeps a run near 20 minutes on a 2-core machine
	// (about 165,000 ballots); at it no threshold MR reaches a majority of
	// the electorate, so they stay open, which S11 checks like any other
	// outcome.
	FullS11 = S11Size{Members: 11000, MRs: 300, Turnout: 10, Workers: 6}
)

type run struct {
	cfg     Config
	ctx     context.Context
	clients []*Client
	caps    []map[string]any
	rep     *Report
	mu      sync.Mutex
	clock   int64

	links []*Link

	sessionsMade []*Session
	s1           *s1State
	latencies    []time.Duration
}

// s1State is what S12 reads of S1's session.
type s1State struct {
	ss                    *Session
	mr, change, pre, head string
	det                   string
}

// abort stops a scenario after a check it cannot go on without.
type abort struct{}

// Run drives the nodes and returns the report. An error is returned only
// when the run could not start (no node answers its capability document).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("harness: no node URL")
	}
	if cfg.Seed == "" {
		cfg.Seed = "witan-harness"
	}
	if cfg.RunID == "" {
		cfg.RunID = time.Now().UTC().Format("20060102T150405.000000000Z")
	}
	if cfg.Roster == 0 {
		cfg.Roster = 10
	}
	if cfg.Roster < 10 {
		return nil, fmt.Errorf("harness: the roster must be at least 10 (the scenarios' thresholds are worked out for it)")
	}
	if cfg.S11.Members == 0 {
		cfg.S11 = SmallS11
	}
	if cfg.S11.Turnout == 0 {
		cfg.S11.Turnout = 60
	}
	if cfg.S11.Workers == 0 {
		cfg.S11.Workers = 4
	}
	if cfg.ConvergeTimeout == 0 {
		cfg.ConvergeTimeout = 60 * time.Second
	}
	if cfg.FinalityTimeout == 0 {
		cfg.FinalityTimeout = 60 * time.Second
	}
	r := &run{cfg: cfg, ctx: ctx}
	for _, spec := range cfg.Links {
		listen, target, err := ParseLink(spec)
		var l *Link
		if err != nil {
			err = fmt.Errorf("harness: %w", err)
		} else {
			l, err = StartLink(listen, target)
		}
		if err != nil {
			for _, l := range r.links {
				l.Close()
			}
			return nil, err
		}
		r.links = append(r.links, l)
		defer l.Close()
	}
	size := "small"
	if cfg.S11.Members >= FullS11.Members {
		size = "full"
	}
	r.rep = &Report{Notice: Notice, Harness: HarnessID{Name: "witan harness", Version: Version, Seed: cfg.Seed, RunID: cfg.RunID, Size: size, Roster: cfg.Roster, S11: cfg.S11}}
	for _, l := range r.links {
		r.rep.Harness.Links = append(r.rep.Harness.Links, l.String())
	}
	start := time.Now()
	for _, u := range cfg.Nodes {
		c := NewClient(u)
		a := c.Get(ctx, "/.well-known/oth")
		if !a.OK() {
			return nil, fmt.Errorf("harness: %s: capability document: %s", u, a)
		}
		r.clients = append(r.clients, c)
		r.caps = append(r.caps, a.JSON)
		info := NodeInfo{URL: c.URL, Implementation: a.JSON["implementation"], Consistency: Str(a.JSON, "consistency"),
			TrustModel: Str(a.JSON, "trust_model"), ConformanceLevel: Str(a.JSON, "conformance_level"), NodeKey: Str(a.JSON, "node_key")}
		if ks, ok := a.JSON["rule_kinds"].([]any); ok {
			for _, k := range ks {
				if s, ok := k.(string); ok {
					info.RuleKinds = append(info.RuleKinds, s)
				}
			}
		}
		r.rep.Nodes = append(r.rep.Nodes, info)
	}
	// The claim checked is the lowest any node makes.
	r.rep.Claimed = r.rep.Nodes[0].ConformanceLevel
	for _, n := range r.rep.Nodes {
		if levelRank(n.ConformanceLevel) < levelRank(r.rep.Claimed) {
			r.rep.Claimed = n.ConformanceLevel
		}
	}
	for _, sc := range scenarios {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, sc.id) {
			continue
		}
		r.logf("%s %s", sc.id, sc.title)
		e := r.runOne(sc)
		r.logf("  %s (%.1f s) %s", e.Result, e.Seconds, e.Reason)
	}
	r.rep.Seconds = time.Since(start).Seconds()
	r.rep.finish()
	return r.rep, nil
}

func (r *run) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, format+"\n", args...)
	}
}

// eventual reports whether every node declares consistency eventual.
func (r *run) eventual() bool {
	for _, n := range r.rep.Nodes {
		if n.Consistency != "eventual" {
			return false
		}
	}
	return true
}

// supports reports whether every node lists rule kind k.
func (r *run) supports(k string) bool {
	for _, n := range r.rep.Nodes {
		if !slices.Contains(n.RuleKinds, k) {
			return false
		}
	}
	return true
}

// scenario is one entry the harness runs.
type scenario struct {
	id, level, title string
	kind             string // "scenario" (default) or "requirement"
	fn               func(s *sc)
}

// sc is a running entry.
type sc struct {
	r *run
	e *Entry
}

func (r *run) runOne(def scenario) (e *Entry) {
	kind := def.kind
	if kind == "" {
		kind = "scenario"
	}
	e = &Entry{ID: def.id, Kind: kind, Level: def.level, Title: def.title, Checks: []Check{}}
	r.rep.Entries = append(r.rep.Entries, e)
	start := time.Now()
	s := &sc{r: r, e: e}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(abort); !ok {
					s.check("no harness panic", false, nil, "%v", v)
				}
			}
		}()
		def.fn(s)
	}()
	e.Seconds = time.Since(start).Seconds()
	for _, c := range e.Checks {
		if !c.OK {
			e.Failures++
		}
	}
	switch {
	case e.Result == NotApplicable || e.Result == NotRun:
	case e.Failures > 0:
		e.Result = Fail
	case len(e.NotRun) > 0:
		e.Result = Partial
	default:
		e.Result = Pass
	}
	return e
}

// check records a check; ev is kept as evidence when it fails.
func (s *sc) check(name string, ok bool, ev *Answer, detail string, args ...any) bool {
	c := Check{Check: name, OK: ok}
	if !ok {
		c.Detail = fmt.Sprintf(detail, args...)
		c.Evidence = ev
	}
	s.e.Checks = append(s.e.Checks, c)
	return ok
}

// must is check that ends the entry when it fails.
func (s *sc) must(name string, ok bool, ev *Answer, detail string, args ...any) {
	if !s.check(name, ok, ev, detail, args...) {
		panic(abort{})
	}
}

// notRun lists a part of the scenario the harness does not drive.
func (s *sc) notRun(part string) { s.e.NotRun = append(s.e.NotRun, part) }

// notApplicable lists a part of the scenario whose own words limit it to
// other nodes (a strong node's, an L3 node's), with the reason.
func (s *sc) notApplicable(part string) { s.e.NotApplicable = append(s.e.NotApplicable, part) }

// ts is the next envelope timestamp: one second apart from a fixed
// start, so the same seed gives the same envelopes (times are
// informational, 30k §4).
func (r *run) ts() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock++
	return time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(r.clock) * time.Second).Format(time.RFC3339)
}

// q adds the session to a path's query.
func q(path, session string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "session=" + url.QueryEscape(session)
}

// converge waits until every node serves the same heads, state hash and
// root snapshot for the session, and records the check.
func (s *sc) converge(sess *Session) (time.Duration, bool) {
	start := time.Now()
	deadline := start.Add(s.r.cfg.ConvergeTimeout)
	var last string
	var ev *Answer
	for {
		views := make([]string, len(s.r.clients))
		okAll := true
		for i, c := range s.r.clients {
			h := c.Get(s.r.ctx, q("/heads", sess.ID))
			l := c.Get(s.r.ctx, q("/law", sess.ID))
			st := c.Get(s.r.ctx, "/sessions/"+sess.ID)
			if !h.OK() || !l.OK() || !st.OK() {
				okAll = false
				ev = h
				if !l.OK() {
					ev = l
				}
				if !st.OK() {
					ev = st
				}
				break
			}
			var hs []string
			for _, x := range Field(h.JSON, "heads").([]any) {
				hs = append(hs, fmt.Sprint(x))
			}
			sort.Strings(hs)
			views[i] = fmt.Sprintf("heads %v state %s root %s", hs, Str(st.JSON, "state_hash"), Str(l.JSON, "snapshot"))
			ev = l
		}
		if okAll {
			same := true
			for _, v := range views[1:] {
				same = same && v == views[0]
			}
			if same {
				d := time.Since(start)
				s.check("every node converges on the same heads, state hash and root snapshot", true, nil, "")
				return d, true
			}
			last = strings.Join(views, " | ")
		}
		if time.Now().After(deadline) {
			s.check("every node converges on the same heads, state hash and root snapshot", false, ev, "not within %s: %s", s.r.cfg.ConvergeTimeout, last)
			return 0, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// advance moves the harness's envelope clock forward by d: witnessed
// time (the largest ts among a causal past's member entries) moves with
// the next member entry, which is how the harness ages keys (key_aging,
// D61) and reaches deadlines without waiting for them.
func (r *run) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock += int64(d / time.Second)
}

// age makes a day and an hour of witnessed time pass in ss: the clock
// moves 25 hours and member m publishes a plain member opinion on the
// spec, so every key registered before is past key_aging (a day).
func (ss *Session) age(m int) {
	ss.s.r.advance(25 * time.Hour)
	ss.Accept(ss.Tx(m, "opinion.publish", opinionBody("member", "Time passes (simulated)", nil)))
}

// nextTS is the time the next envelope will carry (ts).
func (r *run) nextTS() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(r.clock+1) * time.Second)
}
