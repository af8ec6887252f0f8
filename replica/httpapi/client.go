package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// Client talks to a witan node's HTTP API. The zero HTTP uses a client
// with a 30 s timeout.
type Client struct {
	// BaseURL is the node's address, e.g. "http://127.0.0.1:8030"; a
	// trailing /oth/v0 is accepted.
	BaseURL string
	HTTP    *http.Client
	// Session, if set, is sent as ?session= where the node needs one.
	Session string
}

// MaxAnswerBytes bounds an answer the Client reads.
const MaxAnswerBytes = 64 << 20

// Error is a problem answer from a node.
type Error struct {
	Status  int
	Problem RejectionProblem
}

func (e *Error) Error() string {
	if e.Problem.Detail != "" {
		return fmt.Sprintf("%s: %s", string(e.Problem.Code), e.Problem.Detail)
	}
	return fmt.Sprintf("HTTP %d (%s)", e.Status, string(e.Problem.Code))
}

// Code returns the problem's code.
func (e *Error) Code() dag.Code { return e.Problem.Code }

func (c *Client) base() string {
	b := strings.TrimRight(c.BaseURL, "/")
	if !strings.HasPrefix(b, "http://") && !strings.HasPrefix(b, "https://") {
		b = "http://" + b
	}
	return strings.TrimSuffix(b, Base)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// Do sends a request to path (under /oth/v0 unless it starts with
// "/.well-known") and decodes a JSON answer into out (nil to drop it).
// A problem answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	req, err := c.newRequest(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return c.decode(resp, out)
}

// newRequest makes Do's request.
func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	u := c.base()
	if !strings.HasPrefix(path, "/.well-known") {
		u += Base
	}
	u += path
	if c.Session != "" {
		if q == nil {
			q = url.Values{}
		}
		if q.Get("session") == "" {
			q.Set("session", c.Session)
		}
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		bb, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(bb)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// decode reads an answer into out (nil to drop it); a problem answer is
// an *Error.
func (c *Client) decode(resp *http.Response, out any) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode}
		if err := json.Unmarshal(b, &e.Problem); err != nil {
			e.Problem.Detail = strings.TrimSpace(string(b))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = b
		return nil
	}
	return json.Unmarshal(b, out)
}

// Get is Do with GET.
func (c *Client) Get(ctx context.Context, path string, q url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, path, q, nil, out)
}

// Submit posts an envelope with its attachments. An accepted envelope
// returns its receipt; a rejected one returns the signed rejection receipt
// and an *Error. The receipt's signature is checked either way.
func (c *Client) Submit(ctx context.Context, envelope []byte, attachments [][]byte) (*replica.Receipt, error) {
	tx := Transaction{Envelope: envelope, Attachments: make([]json.RawMessage, len(attachments))}
	for i, a := range attachments {
		w, err := dag.AttachmentWire(a)
		if err != nil {
			return nil, err
		}
		tx.Attachments[i] = w
	}
	var ok ReceiptAnswer
	err := c.Do(ctx, http.MethodPost, "/transactions", nil, tx, &ok)
	raw := ok.Receipt
	var e *Error
	if errors.As(err, &e) {
		raw = e.Problem.Receipt
	} else if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, err
	}
	rc, derr := DecodeReceipt(raw)
	if derr != nil {
		return nil, derr
	}
	if verr := rc.Verify(); verr != nil {
		return nil, fmt.Errorf("httpapi: node's receipt: %w", verr)
	}
	return rc, err
}

// DecodeReceipt reads a signed receipt as a node serves it.
func DecodeReceipt(b []byte) (*replica.Receipt, error) {
	// Receipt has a MarshalJSON only; decode into its plain fields.
	type plain replica.Receipt
	var p struct {
		plain
		Sig string `json:"sig"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("httpapi: receipt: %w", err)
	}
	rc := replica.Receipt(p.plain)
	sig, err := decodeSig(p.Sig)
	if err != nil {
		return nil, err
	}
	rc.Sig = sig
	if rc.Errors == nil {
		rc.Errors = []replica.ErrorEntry{}
	}
	return &rc, nil
}

// DecodeCheckpoint reads a signed checkpoint as a node serves it
// (replica.DecodeCheckpoint).
func DecodeCheckpoint(b []byte) (replica.Checkpoint, error) { return replica.DecodeCheckpoint(b) }

func decodeSig(s string) ([]byte, error) {
	b, err := base64RawURL.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("httpapi: sig: %w", err)
	}
	return b, nil
}

var base64RawURL = base64.RawURLEncoding
