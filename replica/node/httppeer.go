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
// pull the node verifies the peer's latest checkpoint and, against the
// last one it verified from that peer, the peer's RFC 9162 consistency
// proof; a log that shrank, a root that changed at the same size, a proof
// that does not verify or a changed node key is fork_detected
// (checkPeerCheckpoint). Entries are never refused for it: each is
// judged on its own signature and causal past, a fork is evidence
// against the peer's operator. A checkpoint that holds is co-signed as a
// witness and sent back to the peer (witness.go). So witan
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
	// seen is the last checkpoint verified from the peer, per session.
	seen map[string]replica.Checkpoint
	// cosigned is the signature of the last checkpoint co-signed and
	// sent to the peer, per session (witness.go).
	cosigned map[string]string
}

// NewHTTPPeer returns a puller of the node at base (its URL, without
// /oth/v0). A nil client means http.DefaultClient.
func NewHTTPPeer(base string, client *http.Client) *HTTPPeer {
	if client == nil {
		client = http.DefaultClient
	}
	return &HTTPPeer{URL: strings.TrimRight(base, "/"), client: client, after: map[string]string{}, seen: map[string]replica.Checkpoint{}, cosigned: map[string]string{}}
}

// HTTPPullResult is what one Pull did in one session.
type HTTPPullResult struct {
	Session     string `json:"session"`
	Received    int    `json:"received"`
	Accepted    int    `json:"accepted"`
	Duplicate   int    `json:"duplicate"`
	Pending     int    `json:"pending"`
	Quarantined int    `json:"quarantined"`
	// Checkpoint is what the peer's checkpoint check found: "none" (the
	// peer has none), "first_seen", "consistent", or "fork_detected" with
	// ForkDetail saying what does not hold.
	Checkpoint string `json:"checkpoint"`
	ForkDetail string `json:"fork_detail,omitempty"`
	// Witness is what became of this node's cosignature of the peer's
	// checkpoint (after "first_seen" or "consistent"): "sent" (the peer
	// kept it), "already_sent" (the same checkpoint was co-signed
	// before), "not_kept: <why>" (the peer refused it or has no POST
	// /witness: a conforming node need not), or "" (nothing to co-sign).
	Witness string `json:"witness,omitempty"`
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
func (n *Node) PullHTTP(ctx context.Context, p *HTTPPeer, sessions ...string) ([]HTTPPullResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(sessions) == 0 {
		var sa struct {
			Sessions []string `json:"sessions"`
		}
		if err := p.get(ctx, "/sessions", nil, &sa); err != nil {
			return nil, fmt.Errorf("node: peer %s: sessions: %w", p.URL, err)
		}
		sessions = sa.Sessions
	}
	var out []HTTPPullResult
	for _, sp := range sessions {
		id, err := dag.ParseID(sp)
		if err != nil {
			return out, fmt.Errorf("node: peer %s lists session %q: %w", p.URL, sp, err)
		}
		r, err := n.pullHTTPSession(ctx, p, id.String())
		if err == nil {
			err = p.checkCheckpoint(ctx, id.String(), &r)
		}
		if err == nil && (r.Checkpoint == "first_seen" || r.Checkpoint == "consistent") {
			n.witness(ctx, p, id.String(), &r)
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

// checkCheckpoint verifies the peer's latest checkpoint of space (its
// signature) and that it extends the last one verified from the peer:
// same node key, size not smaller, the same root at the same size, else
// an RFC 9162 consistency proof from the old size to the new one, served
// by the peer (/proofs/consistency), whose roots are the two signed roots
// and which verifies. What holds is remembered; what does not is
// fork_detected, and the old checkpoint stays remembered.
func (p *HTTPPeer) checkCheckpoint(ctx context.Context, space string, r *HTTPPullResult) error {
	var ca struct {
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	if err := p.get(ctx, "/checkpoint", url.Values{"session": {space}}, &ca); err != nil {
		if errors.Is(err, errNotFound) {
			r.Checkpoint = "none"
			return nil
		}
		return fmt.Errorf("node: peer %s: checkpoint of %s: %w", p.URL, space, err)
	}
	cp, err := replica.DecodeCheckpoint(ca.Checkpoint)
	if err == nil {
		err = cp.Verify()
	}
	if err == nil && !cp.Legacy && cp.Space != space {
		err = fmt.Errorf("the checkpoint is of session %s", cp.Space)
	}
	if err != nil {
		return fmt.Errorf("node: peer %s: checkpoint of %s: %w", p.URL, space, err)
	}
	fork := func(format string, args ...any) error {
		r.Checkpoint, r.ForkDetail = string(CodeForkDetected), fmt.Sprintf(format, args...)
		return fmt.Errorf("%w: peer %s, session %s: %s", ErrForkDetected, p.URL, space, r.ForkDetail)
	}
	prev, ok := p.seen[space]
	switch {
	case !ok:
		r.Checkpoint = "first_seen"
	case cp.Node != prev.Node:
		return fork("the checkpoint is signed by %s, the last one verified by %s", cp.Node, prev.Node)
	case cp.Size < prev.Size:
		return fork("the log shrank from %d to %d entries", prev.Size, cp.Size)
	case cp.Size == prev.Size:
		if cp.Root != prev.Root {
			return fork("at size %d the root changed from %s to %s", cp.Size, prev.Root, cp.Root)
		}
		r.Checkpoint = "consistent"
	default:
		var pr replica.ConsistencyProof
		q := url.Values{"session": {space}, "from": {strconv.FormatUint(prev.Size, 10)}, "to": {strconv.FormatUint(cp.Size, 10)}}
		if err := p.get(ctx, "/proofs/consistency", q, &pr); err != nil {
			return fork("no consistency proof from %d to %d: %v", prev.Size, cp.Size, err)
		}
		if pr.FirstSize != prev.Size || pr.SecondSize != cp.Size || pr.FirstRoot != prev.Root || pr.SecondRoot != cp.Root {
			return fork("the consistency proof %d..%d names roots %s, %s, not the signed %s, %s", pr.FirstSize, pr.SecondSize, pr.FirstRoot, pr.SecondRoot, prev.Root, cp.Root)
		}
		if err := pr.Verify(); err != nil {
			return fork("%v", err)
		}
		r.Checkpoint = "consistent"
	}
	p.seen[space] = cp
	return nil
}
