package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Base is the API's base path (30k §5).
const Base = "/oth/v0"

// Client talks to one node.
type Client struct {
	// URL is the node's origin (http://host:port); a trailing /oth/v0
	// given on the command line is cut off.
	URL  string
	HTTP *http.Client
}

// NewClient returns a client for a node URL.
func NewClient(url string) *Client {
	url = strings.TrimSuffix(strings.TrimSuffix(url, "/"), Base)
	return &Client{URL: url, HTTP: &http.Client{Timeout: 120 * time.Second}}
}

// Answer is one HTTP exchange, kept as evidence.
type Answer struct {
	Node   string         `json:"node"`
	Method string         `json:"method"`
	Path   string         `json:"path"`
	Tx     string         `json:"tx,omitempty"`
	TxType string         `json:"tx_type,omitempty"`
	Status int            `json:"status"`
	Type   string         `json:"content_type,omitempty"`
	Body   []byte         `json:"-"`
	JSON   map[string]any `json:"-"`
	Err    string         `json:"error,omitempty"`
	// Excerpt is the start of the answer's body.
	Excerpt string `json:"excerpt,omitempty"`
}

func excerpt(b []byte) string {
	const max = 400
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

func (c *Client) do(ctx context.Context, method, path string, body []byte) *Answer {
	a := &Answer{Node: c.URL, Method: method, Path: path}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	url := c.URL + Base + path
	if strings.HasPrefix(path, "/.well-known/") {
		url = c.URL + path
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	a.Type = resp.Header.Get("Content-Type")
	a.Body, err = io.ReadAll(resp.Body)
	if err != nil {
		a.Err = err.Error()
	}
	a.Excerpt = excerpt(a.Body)
	if v, err := decodeJSON(a.Body); err == nil {
		a.JSON, _ = v.(map[string]any)
	}
	return a
}

// Get reads path (under /oth/v0, query included).
func (c *Client) Get(ctx context.Context, path string) *Answer {
	return c.do(ctx, http.MethodGet, path, nil)
}

// Submit posts tx to POST /transactions: {envelope, attachments}, plain
// text attachments as JSON strings.
func (c *Client) Submit(ctx context.Context, tx Tx) *Answer {
	atts := make([]json.RawMessage, 0, len(tx.Attach))
	for _, a := range tx.Attach {
		if len(a) > 0 && (a[0] == '{' || a[0] == '[') {
			atts = append(atts, a)
			continue
		}
		s, _ := json.Marshal(string(a))
		atts = append(atts, s)
	}
	body, _ := json.Marshal(map[string]any{"envelope": json.RawMessage(tx.Bytes), "attachments": atts})
	a := c.do(ctx, http.MethodPost, "/transactions", body)
	a.Tx, a.TxType = tx.ID, tx.Type
	return a
}

// OK reports a 200 JSON answer.
func (a *Answer) OK() bool {
	return a.Err == "" && a.Status == http.StatusOK && a.JSON != nil
}

// Field walks a JSON answer along keys (object members, or int indexes).
func Field(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k < 0 || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// Str is Field as a string ("" if it is not one).
func Str(v any, path ...any) string {
	s, _ := Field(v, path...).(string)
	return s
}

// Int is Field as an integer (-1 if it is not one).
func Int(v any, path ...any) int64 {
	switch n := Field(v, path...).(type) {
	case json.Number:
		i, err := n.Int64()
		if err == nil {
			return i
		}
	}
	return -1
}

func (a *Answer) String() string {
	if a.Err != "" {
		return fmt.Sprintf("%s %s: %s", a.Method, a.Path, a.Err)
	}
	return fmt.Sprintf("%s %s: %d %s", a.Method, a.Path, a.Status, a.Excerpt)
}

// PostJSON posts v as JSON to path (under /oth/v0).
func (c *Client) PostJSON(ctx context.Context, path string, v any) *Answer {
	body, err := json.Marshal(v)
	if err != nil {
		return &Answer{Node: c.URL, Method: http.MethodPost, Path: path, Err: err.Error()}
	}
	return c.do(ctx, http.MethodPost, path, body)
}
