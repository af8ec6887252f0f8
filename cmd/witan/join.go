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
)

// JoinCommand makes the running node join a session (or mem:NAME memory
// space) that a peer holds: the node subscribes to the session's
// announcements and pulls it from the connected peers that announce it.
// With -wait it waits until the session has arrived. Session ids are
// agreed out of band (30k §4): the peer's owner reads theirs from
// witan log or witan heads.
type JoinCommand struct {
	main *Main
}

func (c *JoinCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("join", "join [-node URL] [-wait DURATION] [-json] SESSION")
	node := fs.String("node", defaultNode(), nodeHelp)
	wait := fs.Duration("wait", 0, "wait this long for the session to arrive (0: return at once)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	var ans httpapi.JoinAnswer
	if *wait <= 0 {
		if err := client.Do(ctx, http.MethodPost, "/join", nil, httpapi.JoinRequest{Space: fs.Arg(0)}, &ans); err != nil {
			return err
		}
	} else {
		// The node streams the reports of the session's pulls, from
		// every peer it pulls from, until it holds the session; the bar
		// moves with each.
		wctx, cancel := context.WithTimeout(ctx, *wait)
		defer cancel()
		client.HTTP = &http.Client{} // -wait bounds it
		bar := c.main.newProgress("join", 0)
		tr := newSyncTracker("", nil)
		running := map[string]httpapi.Pull{}
		got, err := client.JoinStream(wctx, fs.Arg(0), func(p httpapi.Pull, done bool) {
			p.Space = p.Peer // one line of the tracker per peer
			if done {
				delete(running, p.Peer)
			} else {
				running[p.Peer] = p
			}
			tr.observe(slices.SortedFunc(maps.Values(running), func(a, b httpapi.Pull) int { return strings.Compare(a.Space, b.Space) }))
			bar.show(tr.fraction())
		})
		bar.done()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if (err != nil && wctx.Err() != nil) || (err == nil && len(got.Heads) == 0) {
			// The node undoes a join that brought nothing when the wait
			// ends (POST /join, streamed), unless it had joined before.
			return fmt.Errorf("no peer sent %s within %s, so the node did not keep the join: is a peer holding it connected? witan sessions -available lists what connected peers announce; witan sync PEER connects one", fs.Arg(0), *wait)
		}
		if err != nil {
			return err
		}
		ans = *got
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(ans)
	}
	fmt.Fprintf(c.main.Stdout, "joined %s\n", ans.Joined)
	if len(ans.Heads) > 0 {
		fmt.Fprintln(c.main.Stdout, "  arrived; heads:")
		for _, h := range ans.Heads {
			fmt.Fprintf(c.main.Stdout, "    %s\n", h)
		}
	} else {
		fmt.Fprintln(c.main.Stdout, "  the node pulls it from the peers that announce it; witan heads -session shows it arriving (witan leave undoes the join)")
	}
	return nil
}
