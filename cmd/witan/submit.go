package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/httpapi"
)

// SubmitCommand signs an envelope described in JSON with a key file and
// posts it to a node. The input is
//
//	{"type":"ballot.cast","session":"sha256:…","parents":["sha256:…"],
//	 "body":{…},"ts":"…","attachments":[{…}]}
//
// where session is computed for session.create, parents default to the
// node's current heads of the session (what this author has seen), and ts
// defaults to now. An attachment is a JSON object, or a JSON string for a
// plain-text document (a rule's text). The signed receipt is printed; a
// rejection exits 1.
type SubmitCommand struct {
	main *Main
	now  func() time.Time
}

// draft is the JSON a user writes.
type draft struct {
	Type        dag.TxType        `json:"type"`
	Session     *dag.ID           `json:"session"`
	Parents     *[]dag.ID         `json:"parents"`
	Body        json.RawMessage   `json:"body"`
	TS          string            `json:"ts"`
	Attachments []json.RawMessage `json:"attachments"`
}

func (c *SubmitCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("submit", "submit -key FILE [-node URL] [-json] [-dry-run] ENVELOPE.json|-")
	keyPath := fs.String("key", "witan.key", "key file (witan keygen)")
	node := fs.String("node", defaultNode(), nodeHelp)
	asJSON := fs.Bool("json", false, "print the receipt as JSON")
	dry := fs.Bool("dry-run", false, "print the signed envelope instead of posting it")
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	var in io.Reader = c.main.Stdin
	name := "stdin"
	if p := fs.Arg(0); p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, p
	}
	raw, err := io.ReadAll(io.LimitReader(in, httpapi.DefaultMaxBodyBytes))
	if err != nil {
		return err
	}
	var d draft
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return draftError(name, raw, dec.InputOffset(), err)
	}
	signer, err := readKeyFile(*keyPath)
	if err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	body, err := dag.Canonicalize(d.Body)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	// The author API seals the draft: the same code embedders use.
	dr := author.Draft{Type: d.Type, Body: json.RawMessage(body), TS: d.TS}
	switch {
	case d.Session != nil:
		dr.Session = *d.Session
	case d.Type == dag.TxSessionCreate:
	default:
		return errors.New("envelope draft: session is required")
	}
	if d.Parents != nil {
		dr.Parents = *d.Parents
	} else if d.Type != dag.TxSessionCreate && *dry {
		return errors.New("envelope draft: -dry-run needs explicit parents")
	}
	atts := make([][]byte, len(d.Attachments))
	for i, a := range d.Attachments {
		// A JSON string is a plain-text document, such as a rule's text
		// (docs/wire-format.md, open point 1).
		if atts[i], err = dag.AttachmentObject(a); err != nil {
			return fmt.Errorf("attachment %d: %w", i, err)
		}
	}
	dr.Attach = atts
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	a, err := author.New(author.Options{Signer: signer, Clock: now, Heads: clientHeads{client}})
	if err != nil {
		return err
	}
	tx, err := a.Seal(ctx, dr)
	if err != nil {
		return err
	}
	data, id, env := tx.Bytes, tx.ID, tx.Env
	if *dry {
		return json.NewEncoder(c.main.Stdout).Encode(httpapi.Transaction{Envelope: data, Attachments: d.Attachments})
	}
	rc, err := client.Submit(ctx, data, atts)
	if rc == nil {
		return err
	}
	if *asJSON {
		if e := json.NewEncoder(c.main.Stdout).Encode(rc); e != nil {
			return e
		}
	} else {
		w := c.main.Stdout
		fmt.Fprintf(w, "%s  %s\n", rc.Status, id)
		fmt.Fprintf(w, "  session     %s\n", env.Session)
		if rc.LogIndex != nil {
			// The receipt's log_index, from 0, as witan log numbers
			// entries.
			fmt.Fprintf(w, "  log index   %d\n", *rc.LogIndex)
		}
		for _, e := range rc.Errors {
			fmt.Fprintf(w, "  error       %s: %s\n", e.Code, httpapi.PlainDetail(e.Detail))
		}
		fmt.Fprintf(w, "  node        %s (receipt signature verified)\n", rc.Node)
	}
	if rc.Status != "accepted" {
		return errRejected
	}
	return nil
}

// errRejected: the node refused what was submitted; the receipt says why.
var errRejected = errors.New("rejected")

// clientHeads reads a session's heads from a node over HTTP, for the
// author API: the parents of a draft that names none.
type clientHeads struct{ c *httpapi.Client }

func (h clientHeads) Heads(ctx context.Context, space string) ([]dag.ID, error) {
	var a httpapi.HeadsAnswer
	if err := h.c.Get(ctx, "/heads", map[string][]string{"session": {space}}, &a); err != nil {
		return nil, fmt.Errorf("reading the node's heads for parents: %w", err)
	}
	return a.Heads, nil
}

// draftError says where a draft is not the JSON witan submit reads: the
// file, line and column, as editors number them, and what is wrong there.
func draftError(name string, raw []byte, at int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	what := strings.TrimPrefix(err.Error(), "json: ")
	switch {
	case errors.As(err, &se):
		at, what = se.Offset-1, "not valid JSON: "+what // Offset is just past the bad byte
	case errors.As(err, &te):
		at = te.Offset
		what = fmt.Sprintf("%q must be a JSON %s, not %s", te.Field, dag.JSONKind(te.Type.Kind()), te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		at, what = int64(len(raw)), "the JSON ends too early (an object not closed?)"
	case strings.HasPrefix(what, "unknown field"):
		what += ` (a draft has "type", "session", "parents", "body", "ts" and "attachments")`
	}
	line, col := 1, 1
	for _, c := range raw[:min(max(at, 0), int64(len(raw)))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("%s:%d:%d: %s", name, line, col, what)
}
