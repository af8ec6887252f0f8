package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/witan-dev/witan/cmd/witan/harness"
)

// research is witan harness research: sessions of programmed voters that
// differ only in their rules (30k §10 research mode), written as
// research-report.json, research-summary.txt and replication.json; with
// -replicate FILE it re-runs a replication.json and exits 3 unless every
// final log root is the same byte for byte. Everything it writes is
// labelled hypothetical.
func (c *HarnessCommand) research(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("harness research", "harness research [-seed S] [-out DIR] [-replicate replication.json] [-node URL]")
	node := fs.String("node", defaultNode(), nodeHelp)
	seed := fs.String("seed", "witan-research", "seed of the programmed voters, seats and rule assignment")
	out := fs.String("out", ".", "directory for research-report.json, research-summary.txt and replication.json")
	replicate := fs.String("replicate", "", "a replication.json to re-run (the same seed, run id and preference model)")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	var rep *harness.ResearchReport
	var want *harness.Replication
	var err error
	if *replicate != "" {
		raw, err := os.ReadFile(*replicate)
		if err != nil {
			return err
		}
		want = &harness.Replication{}
		if err := json.Unmarshal(raw, want); err != nil {
			return fmt.Errorf("%s: %w", *replicate, err)
		}
		rep, err = harness.Replicate(ctx, *node, *want, nil)
		if err != nil {
			return err
		}
	} else if rep, err = harness.Research(ctx, harness.ResearchConfig{Node: *node, Seed: *seed}); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, v := range map[string]any{"research-report.json": rep, "replication.json": rep.Replication} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(*out, "research-summary.txt"))
	if err != nil {
		return err
	}
	rep.WriteSummary(f)
	if err := f.Close(); err != nil {
		return err
	}
	rep.WriteSummary(c.main.Stdout)
	if rep.Failed {
		return fmt.Errorf("%w: a research check failed", errVerify)
	}
	if want != nil {
		for label, root := range want.FinalLogRoots {
			if got := rep.Replication.FinalLogRoots[label]; got != root {
				return fmt.Errorf("%w: %s: final log root %s, replication.json has %s", errVerify, label, got, root)
			}
		}
		fmt.Fprintln(c.main.Stdout, "replicated: every final log root is the same")
	}
	return nil
}
