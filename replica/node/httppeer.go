package node

// This file is HTTP federation (30k §9): the node pulls another node's
// sessions over plain HTTP — GET /oth/v0/sessions, then each session's
// /oth/v0/log in the peer's order, page by page from where the last pull
// stopped — and hands every entry, with its attachments, to its one peer
// write path (Ingest): decoded strictly, signatures verified, admitted
// causally against its own state, refused entries quarantined with their
// code. Nothing the peer derived (state, tallies, determinations'
// outcomes) is read: the node re-derives everything. The peer's signed
// checkpoints are read to hold the peer to its history (S10): after each
// pull the node checks the peer's latest checkpoint against the last one
// it verified from that peer (peercheck.go, the same check as over
// libp2p; a fork is fork_detected), and co-signs one that holds as a
// witness, POSTing it back to the peer (witness.go). So witan
// federates with any conforming node that serves /log, libp2p or not
// (witan up -peer-http URL). The wire forms read here are those of
// docs/http-api.md (the /log page and its attachments).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/sync"
)

var errNotFound = errors.New("404 Not Found")

// maxPeerPage bounds one /log page read from a peer (bytes).
const maxPeerPage = 64 << 20

// HTTPPeer pulls from one peer over HTTP. Pulls are serialised.
type HTTPPeer struct {
	URL    string
	client *http.Client
	mu     gosync.Mutex
	after  map[string]string // the /log cursor reached, per session
	// checked is what this node verified and co-signed of the peer's
	// checkpoints (peercheck.go).
	checked peerCheckpoints
}

var _ checkpointSource = (*HTTPPeer)(nil)

// String names the peer by its URL.
func (p *HTTPPeer) String() string { return p.URL }

// NewHTTPPeer returns a puller of the node at base (its URL, without
// /oth/v0). A nil client means http.DefaultClient.
func NewHTTPPeer(base string, client *http.Client) *HTTPPeer {
	if client == nil {
		client = http.DefaultClient
	}
	return &HTTPPeer{URL: strings.TrimRight(base, "/"), client: client, after: map[string]string{}, checked: newPeerCheckpoints()}
}

// HTTPPullResult is what one Pull did in one session.
type HTTPPullResult struct {
	Session     string `json:"session"`
	Received    int    `json:"received"`
	Accepted    int    `json:"accepted"`
	Duplicate   int    `json:"duplicate"`
	Pending     int    `json:"pending"`
	Quarantined int    `json:"quarantined"`
	// PeerCheck is what the check of the peer's checkpoint found, and
	// what became of this node's cosignature of it.
	PeerCheck
}

// CodeForkDetected: a peer's checkpoints contradict each other (30k §9,
// S10: the peer rewrote its history).
const CodeForkDetected dag.Code = "fork_detected"

// ErrForkDetected is wrapped by PullHTTP's error when a peer's history
// does not extend what the node verified from it before.
var ErrForkDetected = errors.New("node: peer rewrote its history (fork_detected)")

func (p *HTTPPeer) get(ctx context.Context, path string, q url.Values, out any) error {
	u := p.URL + "/oth/v0" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("GET %s: %w", path, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxPeerPage)).Decode(out)
}

// PullHTTP pulls every session the peer p lists (or only sessions, if given)
// into n, and returns what it did per session.
func (n *Node) PullHTTP(ctx context.Context, p *HTTPPeer, sessions ...dag.ID) ([]HTTPPullResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(sessions) == 0 {
		var sa struct {
			Sessions []string `json:"sessions"`
		}
		if err := p.get(ctx, "/sessions", nil, &sa); err != nil {
			return nil, fmt.Errorf("node: peer %s: sessions: %w", p.URL, err)
		}
		for _, sp := range sa.Sessions {
			id, err := dag.ParseID(sp)
			if err != nil {
				return nil, fmt.Errorf("node: peer %s lists session %q: %w", p.URL, sp, err)
			}
			sessions = append(sessions, id)
		}
	}
	var out []HTTPPullResult
	for _, id := range sessions {
		r, err := n.pullHTTPSession(ctx, p, id.String())
		if err == nil {
			r.PeerCheck, err = n.checkAndWitness(ctx, p, &p.checked, id.String())
		}
		out = append(out, r)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// wireObject is the object a /log attachment carries: a JSON string's
// value as raw bytes (a plain-text document), else the canonical form of
// the JSON value.
func wireObject(raw json.RawMessage) ([]byte, error) {
	raw = json.RawMessage(strings.TrimLeft(string(raw), " \t\r\n"))
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s == "" {
			return nil, dag.Errorf(dag.CodeSchema, "node: attachment is not a document")
		}
		return []byte(s), nil
	}
	return dag.Canonicalize(raw)
}

func (n *Node) pullHTTPSession(ctx context.Context, p *HTTPPeer, space string) (HTTPPullResult, error) {
	res := HTTPPullResult{Session: space}
	q := url.Values{"session": {space}, "limit": {strconv.Itoa(1000)}}
	for {
		if c := p.after[space]; c != "" {
			q.Set("after", c)
		}
		var page struct {
			Entries []struct {
				Envelope    json.RawMessage   `json:"envelope"`
				Attachments []json.RawMessage `json:"attachments"`
			} `json:"entries"`
			Next *string `json:"next"`
		}
		if err := p.get(ctx, "/log", q, &page); err != nil {
			return res, fmt.Errorf("node: peer %s: log of %s: %w", p.URL, space, err)
		}
		items := make([]sync.Item, len(page.Entries))
		for i, e := range page.Entries {
			items[i] = sync.Item{Data: e.Envelope}
			for _, a := range e.Attachments {
				if obj, err := wireObject(a); err == nil {
					items[i].Objects = append(items[i].Objects, dag.NewObject(obj))
				}
			}
		}
		if len(items) > 0 {
			ir, err := n.Ingest(ctx, space, items)
			if err != nil {
				return res, err
			}
			res.Received += len(items)
			res.Accepted += ir.Count(sync.Accepted)
			res.Duplicate += ir.Count(sync.Duplicate)
			res.Pending += ir.Count(sync.Pending)
			res.Quarantined += ir.Count(sync.Quarantined)
		}
		if page.Next == nil {
			// The last page is read again next time (entries may be
			// appended to it): the cursor stays at the last full page.
			return res, nil
		}
		p.after[space] = *page.Next
	}
}

// checkpoint reads the peer's GET /checkpoint (a 404 is none).
func (p *HTTPPeer) checkpoint(ctx context.Context, space string, _ uint64) ([]byte, error) {
	var ca struct {
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	if err := p.get(ctx, "/checkpoint", url.Values{"session": {space}}, &ca); err != nil {
		if errors.Is(err, errNotFound) {
			return nil, fmt.Errorf("%w: %w", errNoCheckpoint, err)
		}
		return nil, err
	}
	return ca.Checkpoint, nil
}

// consistency reads the peer's GET /proofs/consistency.
func (p *HTTPPeer) consistency(ctx context.Context, space string, from, to uint64) (replica.ConsistencyProof, error) {
	var pr replica.ConsistencyProof
	q := url.Values{"session": {space}, "from": {strconv.FormatUint(from, 10)}, "to": {strconv.FormatUint(to, 10)}}
	err := p.get(ctx, "/proofs/consistency", q, &pr)
	return pr, err
}
