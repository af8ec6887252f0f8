package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/witan-dev/witan/replica/httpapi"
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
	node := fs.String("node", defaultNode(), "URL of the local node (witan up)")
	var spaces listFlag
	fs.Var(&spaces, "session", "session id or mem:NAME to pull (repeatable; default: every session the node holds)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
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
	var ans httpapi.ConnectAnswer
	done := make(chan error, 1)
	go func() {
		done <- client.Do(ctx, http.MethodPost, "/peers", nil, httpapi.ConnectRequest{Addr: fs.Arg(0), Spaces: spaces}, &ans)
	}()
	if err := c.watch(ctx, client, done); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(ans)
	}
	fmt.Fprintf(c.main.Stdout, "connected %s\n", ans.Connected)
	failed := 0
	for _, r := range ans.Synced {
		fmt.Fprintf(c.main.Stdout, "  %s  received %d: %d accepted, %d already held, %d quarantined, in %d round(s)", r.Space, r.Received, r.Accepted, r.Duplicate, r.Rejected, r.Rounds)
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

// watch draws the node's running pulls as a progress bar until the
// request in flight ends, and returns its error.
func (c *SyncCommand) watch(ctx context.Context, client *httpapi.Client, done <-chan error) error {
	bar := newProgress(c.main.Stderr, "sync", 0)
	defer bar.done()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if bar.w == nil {
				continue // not a terminal: nothing to draw
			}
			var pa httpapi.PeersAnswer
			if client.Get(ctx, "/peers", nil, &pa) != nil {
				continue
			}
			var n, total uint64
			for _, p := range pa.Pulls {
				n += p.EntriesDone
				total += p.EntriesExpected
			}
			if total > 0 {
				bar.set(int(n), int(total))
			}
		}
	}
}
