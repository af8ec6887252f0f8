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
	fs := c.main.newFlagSet("verify-extract", "verify-extract [-signer KEY] [-witness KEY]... FILE")
	node := fs.String("signer", "", "the node key (ed25519:…) the checkpoint must be signed by (default: any); -node names a node URL in every other verb")
	var witnesses keyList
	fs.Var(&witnesses, "witness", "a witness's node key (ed25519:…) whose cosignature of the checkpoint is required (repeatable)")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	var pin dag.Key
	if *node != "" {
		k, err := dag.ParseKey(*node)
		if err != nil {
			fmt.Fprintf(c.main.Stderr, "witan verify-extract: -signer: %v\n", err)
			return errUsage
		}
		pin = k
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	x, cp, err := httpapi.VerifyExtractWitnessed(b, pin, witnesses)
	if err != nil {
		fmt.Fprintf(c.main.Stdout, "FAIL %v\n", err)
		return errVerify
	}
	fmt.Fprintf(c.main.Stdout, "ok   tx %s (session %s), %d supporting objects\n", x.Tx, x.Session, len(x.Supporting))
	fmt.Fprintf(c.main.Stdout, "ok   leaf %d of checkpoint size %d, root %s, signed by %s at %s\n", x.Inclusion.LeafIndex, cp.Size, cp.Root, cp.Node, cp.TS.UTC().Format("2006-01-02T15:04:05Z"))
	for _, cs := range x.Cosigned {
		fmt.Fprintf(c.main.Stdout, "ok   checkpoint co-signed by witness %s\n", cs.Witness)
	}
	if len(x.Cosigned) == 0 {
		fmt.Fprintln(c.main.Stdout, "verified offline (final_advisory: one node's checkpoint, not co-signed)")
	} else {
		fmt.Fprintf(c.main.Stdout, "verified offline (final_advisory: one node's checkpoint, co-signed by %d witnesses)\n", len(x.Cosigned))
	}
	return nil
}

// keyList is a repeatable flag of node keys.
type keyList []dag.Key

func (l *keyList) String() string { return fmt.Sprint([]dag.Key(*l)) }

func (l *keyList) Set(s string) error {
	k, err := dag.ParseKey(s)
	if err != nil {
		return err
	}
	*l = append(*l, k)
	return nil
}
