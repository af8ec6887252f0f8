package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/witan-dev/witan/replica/httpapi"
)

// LeaveCommand undoes witan join for a session (or mem:NAME space) the
// running node holds nothing of: the node stops pulling it, and its peers
// stop listing it as this node's. A session the node holds entries of is
// refused (witan:held): it stays synced.
type LeaveCommand struct {
	main *Main
}

func (c *LeaveCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("leave", "leave [-node URL] [-json] SESSION")
	node := fs.String("node", defaultNode(), nodeHelp)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	var ans httpapi.LeaveAnswer
	if err := client.Do(ctx, http.MethodPost, "/leave", nil, httpapi.LeaveRequest{Space: fs.Arg(0)}, &ans); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(ans)
	}
	fmt.Fprintf(c.main.Stdout, "left %s\n", ans.Left)
	return nil
}
