package main

import (
	"context"
	"fmt"
	"os"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/extract"
)

// VerifyExtractCommand checks an evidence extract (GET /extract/{hash},
// D45) with no network access: extract.Verify for one entry,
// extract.VerifyMR for an MR (its tallies recomputed).
type VerifyExtractCommand struct {
	main *Main
}

func (c *VerifyExtractCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("verify-extract", "verify-extract [-signer KEY] [-witness KEY]... FILE\n\nFILE is GET /extract/{hash} of a log entry, or of an MR id: then its opens, ballots and\ndeterminations, every tally it states recomputed from the file alone")
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
	if extract.IsMR(b) {
		return c.runMR(b, pin, witnesses)
	}
	x, cp, err := extract.VerifyWitnessed(b, pin, witnesses)
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

// runMR checks an MR extract (extract.VerifyMR): the MR's opens,
// ballots and determinations, and every tally it states recomputed.
func (c *VerifyExtractCommand) runMR(b []byte, pin dag.Key, witnesses []dag.Key) error {
	x, cp, err := extract.VerifyMR(b, pin, witnesses)
	if err != nil {
		fmt.Fprintf(c.main.Stdout, "FAIL %v\n", err)
		return errVerify
	}
	out := c.main.Stdout
	fmt.Fprintf(out, "ok   MR %s (session %s): %d entries, each in checkpoint size %d, root %s, signed by %s at %s\n",
		x.MR, x.Session, len(x.Entries), cp.Size, cp.Root, cp.Node, cp.TS.UTC().Format("2006-01-02T15:04:05Z"))
	for _, cs := range x.Cosigned {
		fmt.Fprintf(out, "ok   checkpoint co-signed by witness %s\n", cs.Witness)
	}
	t := x.Tally.Tally
	groups := 0
	for _, en := range x.Entries {
		if env, _, _, err := dag.DecodeEnvelope(en.Object); err == nil && (env.Type == dag.TxGroupCreate || env.Type == dag.TxGroupUpdate) {
			groups++
		}
	}
	pinned := "matches the MR's snapshot"
	if groups > 0 {
		pinned = fmt.Sprintf("is the approvers group as its %d group entries define it", groups)
	}
	fmt.Fprintf(out, "ok   electorate of %d %s; tally recomputed over %d ballots: approve %d, reject %d, abstain %d, void %d -> %s (provisional)\n",
		len(x.Electorate), pinned, t.Ballots, t.Approve, t.Reject, t.Abstain, t.Void, x.Tally.IfClosed)
	for _, d := range x.Determinations {
		verdict := "borne out by its ballots"
		if d.IfClosed != d.Outcome {
			verdict = "NOT borne out by its ballots (they give " + string(d.IfClosed) + ")"
		}
		fmt.Fprintf(out, "ok   determination %s says %s over %d ballots (approve %d, reject %d, abstain %d, void %d): %s\n",
			d.Tx, d.Outcome, d.Tally.Ballots, d.Tally.Approve, d.Tally.Reject, d.Tally.Abstain, d.Tally.Void, verdict)
	}
	if groups > 0 {
		fmt.Fprintf(out, "note that these group entries are every write of the approvers group the MR's open saw is the node's word (a log proves what it holds, not what it lacks)\n")
	}
	fmt.Fprintf(out, "note reverts %v and structure_failed %v are the node's findings (the statute text is not in the extract)\n", x.Facts.Reverts, x.Facts.StructureFailed)
	fmt.Fprintf(out, "verified offline (%s: one node's checkpoint, co-signed by %d witnesses)\n", x.Finality, len(x.Cosigned))
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
