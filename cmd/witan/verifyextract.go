package main

import (
	"context"
	"fmt"
	"os"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/httpapi"
)

// VerifyExtractCommand checks an evidence extract (GET /extract/{hash},
// D45) with no network access: httpapi.VerifyExtract.
type VerifyExtractCommand struct {
	main *Main
}

func (c *VerifyExtractCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("verify-extract", "verify-extract [-signer KEY] FILE")
	node := fs.String("signer", "", "the node key (ed25519:…) the checkpoint must be signed by (default: any); -node names a node URL in every other verb")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	var pin dag.Key
	if *node != "" {
		k, err := dag.ParseKey(*node)
		if err != nil {
			fmt.Fprintf(c.main.Stderr, "witan verify-extract: -node: %v\n", err)
			return errUsage
		}
		pin = k
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	x, cp, err := httpapi.VerifyExtract(b, pin)
	if err != nil {
		fmt.Fprintf(c.main.Stdout, "FAIL %v\n", err)
		return errVerify
	}
	fmt.Fprintf(c.main.Stdout, "ok   tx %s (session %s), %d supporting objects\n", x.Tx, x.Session, len(x.Supporting))
	fmt.Fprintf(c.main.Stdout, "ok   leaf %d of checkpoint size %d, root %s, signed by %s at %s\n", x.Inclusion.LeafIndex, cp.Size, cp.Root, cp.Node, cp.TS.UTC().Format("2006-01-02T15:04:05Z"))
	fmt.Fprintln(c.main.Stdout, "verified offline (final_advisory: one node's checkpoint, not co-signed)")
	return nil
}
