package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/httpapi"
)

// LogCommand lists a session's accepted envelopes in the node's log order,
// each with its finality.
type LogCommand struct {
	main *Main
}

func (c *LogCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("log", "log [-node URL] [-session ID] [-limit N] [-json]")
	f := addNodeFlags(fs, "session id (default: the node's only session)", "print one JSON log entry per line")
	limit := fs.Int("limit", 0, "show at most N entries (0: all)")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	node, session, asJSON := f.node, f.session, f.json
	client := &httpapi.Client{BaseURL: *node, Session: *session}
	enc := json.NewEncoder(c.main.Stdout)
	shown := 0
	q := url.Values{}
	for {
		page := min(httpapi.MaxLogLimit, remaining(*limit, shown))
		q.Set("limit", strconv.Itoa(page))
		var p httpapi.LogPage
		if err := client.Get(ctx, "/log", q, &p); err != nil {
			return err
		}
		for _, e := range p.Entries {
			if *asJSON {
				if err := enc.Encode(e); err != nil {
					return err
				}
			} else {
				env, _, _, err := dag.DecodeEnvelope(e.Envelope)
				if err != nil {
					return fmt.Errorf("log index %d: %w", e.Position-1, err)
				}
				// People read the protocol's 0-based log_index, as receipts
				// carry it; /log's position counts from 1.
				fmt.Fprintf(c.main.Stdout, "%5d  %s  %-14s  %s  %s  %s\n", e.Position-1, e.Tx, env.Type, env.Author, env.TS, e.Finality)
			}
			shown++
		}
		if p.Next == nil || (*limit > 0 && shown >= *limit) {
			return nil
		}
		q.Set("after", *p.Next)
	}
}

func remaining(limit, shown int) int {
	if limit <= 0 {
		return httpapi.MaxLogLimit
	}
	return limit - shown
}
