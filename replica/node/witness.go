package node

// This file is the witness side of checkpoint witnessing
// (replica/witness.go): after a pull verified a peer's checkpoint — its
// signature, and its consistency with every earlier checkpoint of the
// peer this node verified (checkCheckpoint) — the node co-signs it with
// its node key and POSTs it back to the peer's /oth/v0/witness, which
// keeps it (after checking it) and puts it in its extracts (D45). A peer
// that refuses it or has no such endpoint changes nothing else: the pull
// stands.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxWitnessAnswer bounds the peer's answer to a POST /witness read back.
const maxWitnessAnswer = 4 << 10

func (n *Node) witness(ctx context.Context, p *HTTPPeer, space string, r *HTTPPullResult) {
	cp := p.seen[space]
	if last, ok := p.cosigned[space]; ok && last == string(cp.Sig) {
		r.Witness = "already_sent"
		return
	}
	cs, err := n.rep.Cosign(cp)
	if err != nil {
		r.Witness = "not_kept: " + err.Error()
		return
	}
	body, err := json.Marshal(struct {
		Checkpoint any `json:"checkpoint"`
		Cosig      any `json:"cosignature"`
	}{cp, cs})
	if err != nil {
		r.Witness = "not_kept: " + err.Error()
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/oth/v0/witness", bytes.NewReader(body))
	if err != nil {
		r.Witness = "not_kept: " + err.Error()
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		r.Witness = "not_kept: " + err.Error()
		return
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(io.LimitReader(resp.Body, maxWitnessAnswer))
	if resp.StatusCode != http.StatusOK {
		r.Witness = fmt.Sprintf("not_kept: %s %s", resp.Status, bytes.TrimSpace(ans))
		return
	}
	p.cosigned[space] = string(cp.Sig)
	r.Witness = "sent"
}
