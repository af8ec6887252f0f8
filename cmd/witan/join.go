package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

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
	if err := client.Do(ctx, http.MethodPost, "/join", nil, httpapi.JoinRequest{Space: fs.Arg(0)}, &ans); err != nil {
		return err
	}
	var heads httpapi.HeadsAnswer
	if *wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, *wait)
		defer cancel()
		hc := &httpapi.Client{BaseURL: *node, Session: fs.Arg(0)}
		for {
			err := hc.Get(wctx, "/heads", nil, &heads)
			if err == nil && len(heads.Heads) > 0 {
				break
			}
			var he *httpapi.Error
			// A read cut by the wait's own deadline is the wait ending.
			if err != nil && !errors.As(err, &he) && wctx.Err() == nil {
				return err
			}
			select {
			case <-wctx.Done():
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("joined %s, but no peer sent it within %s: is a peer holding it connected (witan sync PEER)?", fs.Arg(0), *wait)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(struct {
			httpapi.JoinAnswer
			Heads any `json:"heads,omitempty"`
		}{ans, heads.Heads})
	}
	fmt.Fprintf(c.main.Stdout, "joined %s\n", ans.Joined)
	if len(heads.Heads) > 0 {
		fmt.Fprintln(c.main.Stdout, "  arrived; heads:")
		for _, h := range heads.Heads {
			fmt.Fprintf(c.main.Stdout, "    %s\n", h)
		}
	} else {
		fmt.Fprintln(c.main.Stdout, "  the node pulls it from the peers that announce it; witan heads -session shows it arriving")
	}
	return nil
}
