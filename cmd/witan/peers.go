package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/witan-dev/witan/replica/httpapi"
)

// PeersCommand lists a node's libp2p peers and how each is connected:
// direct, hole-punched or relayed (and through which relay), since when;
// and the pulls running now. It reads GET /peers.
type PeersCommand struct {
	main *Main
}

func (c *PeersCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("peers", "peers [-node URL] [-json]")
	node := fs.String("node", defaultNode(), nodeHelp)
	asJSON := fs.Bool("json", false, "print GET /peers's answer")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	var pa httpapi.PeersAnswer
	if err := client.Get(ctx, "/peers", nil, &pa); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(c.main.Stdout).Encode(pa)
	}
	w := c.main.Stdout
	if len(pa.Peers) == 0 {
		fmt.Fprintln(w, "no peer connected (witan up -bootstrap ADDR -discover SPACE finds peers beyond the LAN; docs/networking.md)")
	}
	now := time.Now()
	for _, p := range pa.Peers {
		fmt.Fprintln(w, p.ID)
		for _, cn := range p.Conns {
			via := ""
			if cn.Relay != "" {
				via = " via " + cn.Relay
			}
			if cn.Limited {
				via += " (limited)"
			}
			fmt.Fprintf(w, "  %-12s %s %s%s, since %s (%s ago)\n", cn.Kind, cn.Direction, cn.Addr, via,
				cn.Since.UTC().Format(time.RFC3339), now.Sub(cn.Since).Round(time.Second))
		}
	}
	for _, pl := range pa.Pulls {
		fmt.Fprintf(w, "pull %s from %s: round %d, %d/%d entries, %d/%d bytes\n", pl.Space, pl.Peer, pl.Round,
			pl.EntriesDone, pl.EntriesExpected, pl.BytesDone, pl.BytesExpected)
	}
	return nil
}
