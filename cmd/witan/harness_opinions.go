package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/witan-dev/witan/cmd/witan/harness"
	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/httpapi"
)

// publishOpinions is witan harness publish-opinions: it publishes every
// opinion of docs/opinions.md into a session as an implementation's
// opinion on the spec (30k §12: "publish an implementation opinion").
// An implementation key is a non-member's: it is registered first
// (-register), and publishes once key_aging has passed (D61).
func (c *HarnessCommand) publishOpinions(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("harness publish-opinions", "harness publish-opinions -key FILE -session ID [-register] [-doc docs/opinions.md] [-node URL]")
	keyPath := fs.String("key", "witan.key", "the implementation's key file (witan keygen)")
	node := fs.String("node", defaultNode(), nodeHelp)
	session := fs.String("session", "", "the session to publish into")
	doc := fs.String("doc", "docs/opinions.md", "the opinions document")
	register := fs.Bool("register", false, "only register the key (key.register); publish after the node's key_aging")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	space, err := dag.ParseID(*session)
	if err != nil {
		return fmt.Errorf("%w: -session %q: a session id is sha256:<64 lowercase hex> (witan sessions lists them)", errUsage, *session)
	}
	signer, err := readKeyFile(*keyPath)
	if err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	a, err := author.New(author.Options{Signer: signer, Clock: time.Now, Heads: clientHeads{client}})
	if err != nil {
		return err
	}
	submit := func(tx author.Tx, what string) error {
		rc, err := client.Submit(ctx, tx.Bytes, tx.Attach)
		if rc == nil {
			return err
		}
		fmt.Fprintf(c.main.Stdout, "%s  %s  %s\n", rc.Status, tx.ID, what)
		for _, e := range rc.Errors {
			fmt.Fprintf(c.main.Stdout, "  error %s: %s\n", e.Code, httpapi.PlainDetail(e.Detail))
		}
		if rc.Status != "accepted" {
			return errRejected
		}
		return nil
	}
	if *register {
		tx, err := a.KeyRegister(ctx, space, nil)
		if err != nil {
			return err
		}
		return submit(tx, "key.register "+signer.Key().String())
	}
	raw, err := os.ReadFile(*doc)
	if err != nil {
		return err
	}
	ops, err := harness.ParseOpinions(string(raw))
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range ops {
		body, err := json.Marshal(harness.ImplementationOpinion(o))
		if err != nil {
			return err
		}
		tx, err := a.Seal(ctx, author.Draft{Type: dag.TxOpinionPublish, Session: space, Body: json.RawMessage(body)})
		if err != nil {
			return err
		}
		errs = append(errs, submit(tx, o.Summary))
	}
	return errors.Join(errs...)
}
