package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/witan-dev/witan/cmd/witan/harness"
)

// HarnessCommand runs the 30k conformance harness (cmd/witan/harness)
// against one or more nodes: the §10 scenarios over /oth/v0 with the
// harness's own signing and ids, the convergence check across the nodes,
// the §10 metrics, conformance-report.json and a readable summary. It
// exits 3 when a scenario at or below the level the nodes claim fails or is
// not shown whole (partial, not run).
type HarnessCommand struct {
	main *Main
}

func (c *HarnessCommand) Run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "publish-opinions" {
		return c.publishOpinions(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "research" {
		return c.research(ctx, args[1:])
	}
	fs := c.main.newFlagSet("harness", "harness [flags] [NODE_URL...]  (default: $WITAN_NODE, else http://127.0.0.1:8030)")
	seed := fs.String("seed", "witan-harness", "seed of the synthetic roster, blocs and choices")
	out := fs.String("out", ".", "directory for conformance-report.json and conformance-summary.txt")
	only := fs.String("only", "", "comma-separated entries to run (S1,S2,…,L0; default all)")
	full := fs.Bool("s11-full", os.Getenv("WITAN_HARNESS_S11_FULL") != "", "run S11 at full size (11,000 members, 300 MRs; also WITAN_HARNESS_S11_FULL=1)")
	members := fs.Int("s11-members", 0, "S11 roster size (overrides -s11-full)")
	mrs := fs.Int("s11-mrs", 0, "S11 MR count (overrides -s11-full)")
	workers := fs.Int("s11-workers", 0, "S11 parallel submitters")
	turnout := fs.Int("s11-turnout", 0, "S11 turnout per threshold MR, in percent of the roster")
	var data listFlag
	fs.Var(&data, "data", "a node's data directory, in the order of the URLs, to measure storage growth (repeatable)")
	var links listFlag
	fs.Var(&links, "link", "LISTEN=TARGET: a link the harness owns, listening on LISTEN (host:port) and forwarding HTTP to TARGET (a node's URL); point the nodes' peer sync at the links (witan up -peer-http http://LISTEN) and S9 cuts them to partition the nodes, then heals them (repeatable)")
	verbose := fs.Bool("v", false, "print progress to stderr")
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, l := range links {
		if _, _, err := harness.ParseLink(l); err != nil {
			fmt.Fprintf(c.main.Stderr, "witan harness: -link: %v\n", err)
			return errUsage
		}
	}
	nodes := fs.Args()
	if len(nodes) == 0 {
		nodes = []string{defaultNode()}
	}
	cfg := harness.Config{Nodes: nodes, Seed: *seed, DataDirs: data, Links: links}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	cfg.S11 = harness.SmallS11
	if *full {
		cfg.S11 = harness.FullS11
	}
	if *members > 0 {
		cfg.S11.Members = *members
	}
	if *mrs > 0 {
		cfg.S11.MRs = *mrs
	}
	if *turnout > 0 {
		cfg.S11.Turnout = *turnout
	}
	if *workers > 0 {
		cfg.S11.Workers = *workers
	}
	if *verbose {
		cfg.Log = c.main.Stderr
	}
	rep, err := harness.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := writeReport(*out, rep); err != nil {
		return err
	}
	rep.WriteSummary(c.main.Stdout)
	if rep.Failed() {
		return fmt.Errorf("%w: %s", errVerify, rep.Verdict)
	}
	return nil
}

// writeReport writes conformance-report.json and conformance-summary.txt
// into dir.
func writeReport(dir string, rep *harness.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "conformance-report.json"))
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	s, err := os.Create(filepath.Join(dir, "conformance-summary.txt"))
	if err != nil {
		return err
	}
	rep.WriteSummary(s)
	return errors.Join(s.Close())
}
