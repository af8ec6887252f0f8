package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/witan-dev/witan/replica/httpapi"
)

// QuarantineCommand lists the entries a node refused, each with the 30k
// code and the reason.
type QuarantineCommand struct {
	main *Main
}

func (c *QuarantineCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("quarantine", "quarantine [-node URL] [-session ID] [-json]")
	f := addNodeFlags(fs, "only this session", "print JSON")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	node, session, asJSON := f.node, f.session, f.json
	client := &httpapi.Client{BaseURL: *node}
	q := url.Values{}
	if *session != "" {
		q.Set("session", *session)
	}
	var ans struct {
		Quarantine []httpapi.QuarantineEntry `json:"quarantine"`
		Finality   string                    `json:"finality"`
	}
	if err := client.Get(ctx, "/quarantine", q, &ans); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(ans)
	}

	if len(ans.Quarantine) == 0 {
		fmt.Fprintln(c.main.Stdout, "quarantine is empty")
		return nil
	}
	for _, e := range ans.Quarantine {
		fmt.Fprintf(c.main.Stdout, "%s  %-16s %s\n  session %s\n", e.ID, e.Code, e.Detail, e.Session)
	}
	return nil
}
