package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/witan-dev/witan/replica/httpapi"
)

// HeadsCommand shows a session's causal frontier on a node: the tx ids no
// accepted entry lists as a parent. Two replicas holding the same entries
// show the same heads.
type HeadsCommand struct {
	main *Main
}

func (c *HeadsCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("heads", "heads [-node URL] [-session ID] [-json]")
	f := addNodeFlags(fs, "session id (default: the node's only session)", "print JSON")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	node, session, asJSON := f.node, f.session, f.json
	client := &httpapi.Client{BaseURL: *node, Session: *session}
	var h httpapi.HeadsAnswer
	if err := client.Get(ctx, "/heads", nil, &h); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(h)
	}
	fmt.Fprintf(c.main.Stdout, "session %s (%s)\n", h.Session, h.Finality)
	for _, id := range h.Heads {
		fmt.Fprintf(c.main.Stdout, "  %s\n", id)
	}
	return nil
}
