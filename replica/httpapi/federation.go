package httpapi

// This file is HTTP federation (30k §9): a node pulls another node's
// sessions over plain HTTP — GET /sessions, then each session's /log in
// the peer's order, page by page from where the last pull stopped — and
// hands every entry, with its attachments, to the node's one peer write
// path (node.Node.Ingest): decoded strictly, signatures verified,
// admitted causally against its own state, refused entries quarantined
// with their code. Nothing the peer derived (state, tallies,
// determinations' outcomes, checkpoints) is read: the node re-derives
// everything. So witan can federate with any conforming node that serves
// /log, libp2p or not (witan up -peer-http URL).

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// HTTPPeer pulls from one peer over HTTP. Safe for one Pull at a time.
type HTTPPeer struct {
	URL    string
	client *Client
	mu     gosync.Mutex
	after  map[string]string // the /log cursor reached, per session
}

// NewHTTPPeer returns a puller of the node at base (its URL without
// /oth/v0).
func NewHTTPPeer(base string) *HTTPPeer {
	return &HTTPPeer{URL: base, client: &Client{BaseURL: base}, after: map[string]string{}}
}

// HTTPPullResult is what one Pull did in one session.
type HTTPPullResult struct {
	Session     string `json:"session"`
	Received    int    `json:"received"`
	Accepted    int    `json:"accepted"`
	Duplicate   int    `json:"duplicate"`
	Pending     int    `json:"pending"`
	Quarantined int    `json:"quarantined"`
}

// Pull pulls every session the peer lists (or only sessions, if given)
// into n, and returns what it did per session.
func (p *HTTPPeer) Pull(ctx context.Context, n *node.Node, sessions ...string) ([]HTTPPullResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(sessions) == 0 {
		var sa struct {
			Sessions []string `json:"sessions"`
		}
		if err := p.client.Get(ctx, "/sessions", nil, &sa); err != nil {
			return nil, fmt.Errorf("httpapi: peer %s: sessions: %w", p.URL, err)
		}
		sessions = sa.Sessions
	}
	var out []HTTPPullResult
	for _, sp := range sessions {
		id, err := dag.ParseID(sp)
		if err != nil {
			return out, fmt.Errorf("httpapi: peer %s lists session %q: %w", p.URL, sp, err)
		}
		r, err := p.pullSession(ctx, n, id.String())
		out = append(out, r)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (p *HTTPPeer) pullSession(ctx context.Context, n *node.Node, space string) (HTTPPullResult, error) {
	res := HTTPPullResult{Session: space}
	q := url.Values{"session": {space}, "limit": {strconv.Itoa(MaxLogLimit)}}
	for {
		if c := p.after[space]; c != "" {
			q.Set("after", c)
		}
		var page LogPage
		if err := p.client.Get(ctx, "/log", q, &page); err != nil {
			return res, fmt.Errorf("httpapi: peer %s: log of %s: %w", p.URL, space, err)
		}
		items := make([]sync.Item, len(page.Entries))
		for i, e := range page.Entries {
			items[i] = sync.Item{Data: e.Envelope}
			for _, a := range e.Attachments {
				obj, err := AttachmentObject(a)
				if err != nil {
					continue // an attachment that is not an object: the entry will wait or be refused
				}
				items[i].Objects = append(items[i].Objects, dag.NewObject(obj))
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
			// appended to it): keep the cursor of the last full page.
			return res, nil
		}
		p.after[space] = *page.Next
	}
}
