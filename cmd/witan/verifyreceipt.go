package main

// This file is witan verify's check against withholding (S10): a receipt
// the node signed is its word that an entry is in its log at log_index
// (accepted; 0-based), or that a refusal is in its refusal log at refusal_index
// (rejected). A node that later serves a log without that entry there,
// or a refusal log without that record, withheld what it acknowledged;
// verify names each such receipt as a problem (exit 3).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/httpapi"
)

// maxReceiptFile bounds a -receipt file read.
const maxReceiptFile = 1 << 20

// namedReceipt is a receipt read from a file, with the file's name.
type namedReceipt struct {
	file string
	rc   *replica.Receipt
}

// readReceipts reads and checks each file named by -receipt: a receipt, or an answer of POST
// /transactions that holds one, whose signature verifies by the node key
// it names. Which node that must be is checked against the node verified.
func readReceipts(names []string) ([]namedReceipt, error) {
	out := make([]namedReceipt, 0, len(names))
	for _, name := range names {
		b, err := readBounded(name, maxReceiptFile)
		if err != nil {
			return nil, fmt.Errorf("-receipt %s: %w", name, err)
		}
		var answer struct {
			Receipt json.RawMessage `json:"receipt"`
		}
		if json.Unmarshal(b, &answer) == nil && len(answer.Receipt) > 0 && !bytes.Equal(answer.Receipt, []byte("null")) {
			b = answer.Receipt
		}
		rc, err := httpapi.DecodeReceipt(b)
		if err != nil {
			return nil, fmt.Errorf("-receipt %s: %w", name, err)
		}
		if err := rc.Verify(); err != nil {
			return nil, fmt.Errorf("-receipt %s: %w", name, err)
		}
		out = append(out, namedReceipt{name, rc})
	}
	return out, nil
}

// readBounded reads a file of at most max bytes, refusing a larger one
// after reading max+1 bytes of it.
func readBounded(name string, max int64) ([]byte, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("more than %d bytes", max)
	}
	return b, nil
}

// receipt checks one receipt against the log served (lc.ids, in the
// served order) and, for a logged refusal, against the node's refusal log.
func (lc *logCheck) receipt(ctx context.Context, client *httpapi.Client, node dag.Key, nr namedReceipt) {
	rc := nr.rc
	if rc.Node != node {
		lc.fail("receipt %s: signed by %s, not by this node (%s)", nr.file, rc.Node, node)
		return
	}
	switch rc.Status {
	case "accepted":
		if rc.LogIndex == nil {
			lc.fail("receipt %s: accepted without a log_index", nr.file)
			return
		}
		i := *rc.LogIndex // 0-based
		switch {
		case i >= uint64(len(lc.ids)):
			lc.fail("withheld: receipt %s acknowledged tx %s at log_index %d, but the log served has %d entries", nr.file, rc.Tx, i, len(lc.ids))
		case lc.ids[i] != rc.Tx:
			if lc.seen[rc.Tx] {
				lc.fail("reordered: receipt %s acknowledged tx %s at log_index %d, but the log serves %s there", nr.file, rc.Tx, i, lc.ids[i])
			} else {
				lc.fail("withheld: receipt %s acknowledged tx %s at log_index %d, but the log serves %s there and never serves it", nr.file, rc.Tx, i, lc.ids[i])
			}
		}
	case "rejected":
		if rc.RefusalIndex == nil {
			return // not logged (the node's log was full, or the code is not logged)
		}
		r := *rc.RefusalIndex
		var page httpapi.RefusalsPage
		q := url.Values{"after": {strconv.FormatUint(r, 10)}, "limit": {"1"}}
		if err := client.Get(ctx, "/refusals", q, &page); err != nil {
			lc.fail("withheld: receipt %s names refusal_index %d, but /refusals does not answer: %v", nr.file, r, err)
			return
		}
		if len(page.Refusals) == 0 || page.Refusals[0].Index != r {
			lc.fail("withheld: receipt %s names refusal_index %d, but the refusal log (size %d) does not serve it", nr.file, r, page.Size)
			return
		}
		if f := page.Refusals[0]; f.Envelope != rc.Envelope {
			lc.fail("withheld: receipt %s names refusal_index %d for envelope %s, but the refusal log has %s there", nr.file, r, rc.Envelope, f.Envelope)
		}
	default:
		lc.fail("receipt %s: status %q", nr.file, rc.Status)
	}
}
