package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/witan-dev/witan/replica/httpapi"
)

// SessionsCommand lists the sessions a node holds or, with -available,
// the sessions (and mem:NAME memory spaces) its connected peers announce:
// what witan join can pull from them.
type SessionsCommand struct {
	main *Main
}

func (c *SessionsCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("sessions", "sessions [-node URL] [-available] [-json]")
	node := fs.String("node", defaultNode(), nodeHelp)
	available := fs.Bool("available", false, "list the sessions the connected peers announce, not the ones the node holds")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	if !*available {
		var s struct {
			Sessions []string `json:"sessions"`
		}
		if err := client.Get(ctx, "/sessions", nil, &s); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(c.main.Stdout).Encode(s)
		}
		if len(s.Sessions) == 0 {
			fmt.Fprintln(c.main.Stdout, "no session held (witan sessions -available lists what peers announce)")
		}
		for _, id := range s.Sessions {
			fmt.Fprintln(c.main.Stdout, id)
		}
		return nil
	}
	var pa httpapi.PeersAnswer
	if err := client.Get(ctx, "/peers", nil, &pa); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(struct {
			Available []httpapi.Offer `json:"available"`
		}{pa.Available})
	}
	if len(pa.Available) == 0 {
		fmt.Fprintf(c.main.Stdout, "no session announced by the %d connected peer(s) (connect one with witan sync PEER)\n", len(pa.Peers))
		return nil
	}
	for _, o := range pa.Available {
		state := "not joined (witan join " + o.Space + ")"
		if o.Joined {
			state = "joined"
		}
		fmt.Fprintf(c.main.Stdout, "%s  %s\n", o.Space, state)
		for _, p := range o.Peers {
			fmt.Fprintf(c.main.Stdout, "  announced by %s\n", p)
		}
	}
	return nil
}
