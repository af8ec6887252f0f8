package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/witan-dev/witan/replica/httpapi"
	wsync "github.com/witan-dev/witan/sync"
)

// SyncCommand asks the running node to connect to a peer and pull
// sessions (and memory spaces) from it now, instead of waiting for the
// next announcement. PEER is the peer's libp2p multiaddr with its /p2p/
// part, as witan up prints it.
type SyncCommand struct {
	main *Main
}

func (c *SyncCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("sync", "sync [-node URL] [-session ID]... [-json] PEER")
	node := fs.String("node", defaultNode(), nodeHelp)
	var spaces listFlag
	fs.Var(&spaces, "session", "session id or mem:NAME to pull (repeatable; default: every session the node holds)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	if err := wsync.CheckPeerAddr(fs.Arg(0)); err != nil {
		fmt.Fprintln(c.main.Stderr, "witan sync:", strings.TrimPrefix(err.Error(), "sync: "))
		return errUsage
	}
	client := &httpapi.Client{BaseURL: *node}
	if len(spaces) == 0 {
		var s struct {
			Sessions []string `json:"sessions"`
		}
		if err := client.Get(ctx, "/sessions", nil, &s); err != nil {
			return err
		}
		spaces = s.Sessions
	}
	// No overall timeout: the node ends a pull whose peer stops sending
	// (sync.Config.StreamTimeout), and the stream shows it moving.
	client.HTTP = &http.Client{}
	bar := c.main.newProgress("sync", 0)
	tr := newSyncTracker(peerOf(fs.Arg(0)), spaces)
	running := map[string]httpapi.Pull{}
	ans, err := client.ConnectStream(ctx, httpapi.ConnectRequest{Addr: fs.Arg(0), Spaces: spaces}, func(p httpapi.Pull, done bool) {
		// Each report is the node's own, made as a batch is ingested:
		// the bar moves with the transfer.
		if done {
			delete(running, p.Space)
		} else {
			running[p.Space] = p
		}
		tr.observe(slices.SortedFunc(maps.Values(running), func(a, b httpapi.Pull) int { return strings.Compare(a.Space, b.Space) }))
		bar.show(tr.fraction())
	})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(ans)
	}
	fmt.Fprintf(c.main.Stdout, "connected %s\n", ans.Connected)
	failed := 0
	for _, r := range ans.Synced {
		// What the node stored during the call comes first: a pull the
		// connection itself started may have stored what this one then
		// found already held.
		fmt.Fprintf(c.main.Stdout, "  %s  %d new entries stored (%d held now)\n", r.Space, r.HeldAfter-r.HeldBefore, r.HeldAfter)
		fmt.Fprintf(c.main.Stdout, "    this pull received %d: %d accepted, %d already held, %d quarantined, in %d round(s)", r.Received, r.Accepted, r.Duplicate, r.Rejected, r.Rounds)
		if r.Checkpoint != "" {
			// S10: the peer's history checked against what this node
			// verified of it before (fork_detected also sets Error).
			fmt.Fprintf(c.main.Stdout, "; the peer's checkpoint: %s", r.Checkpoint)
			if r.Witness != "" {
				fmt.Fprintf(c.main.Stdout, " (our cosignature: %s)", r.Witness)
			}
		}
		if r.Error != "" {
			failed++
			fmt.Fprintf(c.main.Stdout, "  error: %s", r.Error)
		}
		fmt.Fprintln(c.main.Stdout)
	}
	if len(ans.Synced) == 0 {
		fmt.Fprintln(c.main.Stdout, "  no session named: connected only (the node syncs as peers announce)")
	}
	if failed > 0 {
		return fmt.Errorf("%d space(s) failed to sync", failed)
	}
	return nil
}

// peerOf returns the peer id of a multiaddr's /p2p/ part, or "".
func peerOf(addr string) string {
	_, id, ok := strings.Cut(addr, "/p2p/")
	if !ok {
		return ""
	}
	id, _, _ = strings.Cut(id, "/")
	return id
}

// syncTracker sums the pulls of one witan sync from snapshots of its
// running pulls, which witan sync rebuilds from every report the node
// streams (POST /peers as ndjson). Each report is a pull's current round
// (entries and bytes announced by the peer's header, and received so
// far), and a pull ends with a last report, so the tracker keeps, per
// space, what earlier rounds brought and counts a pull that left the
// snapshot as complete.
type syncTracker struct {
	peer   string
	want   map[string]bool // the spaces asked for; empty: any
	spaces map[string]*spaceProgress
	order  []string // spaces in the order first seen
}

type spaceProgress struct {
	round                 int
	base                  httpapi.Pull // what finished rounds brought (Done == Expected)
	cur                   httpapi.Pull // the round running now
	running, everFinished bool
}

func newSyncTracker(peer string, spaces []string) *syncTracker {
	t := &syncTracker{peer: peer, want: map[string]bool{}, spaces: map[string]*spaceProgress{}}
	for _, s := range spaces {
		t.want[s] = true
	}
	return t
}

// observe folds one snapshot of the node's running pulls.
func (t *syncTracker) observe(pulls []httpapi.Pull) {
	seen := map[string]bool{}
	for _, p := range pulls {
		if (t.peer != "" && p.Peer != t.peer) || (len(t.want) > 0 && !t.want[p.Space]) || seen[p.Space] {
			continue
		}
		seen[p.Space] = true
		sp := t.spaces[p.Space]
		if sp == nil {
			sp = &spaceProgress{}
			t.spaces[p.Space] = sp
			t.order = append(t.order, p.Space)
		}
		if sp.running && p.Round != sp.round {
			sp.closeRound() // a new request: the last one's entries all came
		}
		sp.round, sp.cur, sp.running = p.Round, p, true
	}
	for _, name := range t.order {
		if sp := t.spaces[name]; sp.running && !seen[name] {
			sp.closeRound()
			sp.running, sp.everFinished = false, true
		}
	}
}

func (sp *spaceProgress) closeRound() {
	sp.base.EntriesDone += sp.cur.EntriesExpected
	sp.base.EntriesExpected += sp.cur.EntriesExpected
	sp.base.BytesDone += max(sp.cur.BytesExpected, sp.cur.BytesDone)
	sp.base.BytesExpected += max(sp.cur.BytesExpected, sp.cur.BytesDone)
	sp.cur = httpapi.Pull{}
}

// totals sums every space: entries and bytes received and expected, and
// how many spaces finished of those asked for (or seen).
func (t *syncTracker) totals() (tot httpapi.Pull, finished, spaces int) {
	for _, name := range t.order {
		sp := t.spaces[name]
		tot.EntriesDone += sp.base.EntriesDone + sp.cur.EntriesDone
		tot.EntriesExpected += sp.base.EntriesExpected + sp.cur.EntriesExpected
		tot.BytesDone += sp.base.BytesDone + sp.cur.BytesDone
		tot.BytesExpected += sp.base.BytesExpected + max(sp.cur.BytesExpected, sp.cur.BytesDone)
		if sp.everFinished && !sp.running {
			finished++
		}
	}
	return tot, finished, max(len(t.want), len(t.order))
}

// fraction returns the bar's fill (bytes when the peer announced any,
// else entries) and its text.
func (t *syncTracker) fraction() (done, total uint64, text string) {
	tot, finished, spaces := t.totals()
	text = fmt.Sprintf("%d/%d entries", tot.EntriesDone, tot.EntriesExpected)
	done, total = tot.EntriesDone, tot.EntriesExpected
	if tot.BytesExpected > 0 {
		done, total = tot.BytesDone, tot.BytesExpected
		text += fmt.Sprintf(", %s/%s", byteSize(tot.BytesDone), byteSize(tot.BytesExpected))
	}
	if spaces > 1 {
		text += fmt.Sprintf(", %d/%d spaces", finished, spaces)
	}
	return done, total, text
}

// byteSize formats n bytes in binary units with one decimal.
func byteSize(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%d.%d %ciB", n/div, n%div*10/div, "KMGTP"[exp])
}
