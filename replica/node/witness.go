package node

// This file is the witness side of checkpoint witnessing
// (replica/witness.go): after a pull verified a peer's checkpoint — its
// signature, and its consistency with every earlier checkpoint of the
// peer this node verified (peercheck.go) — the node co-signs it with its
// node key and sends it back to the peer: over HTTP to its
// /oth/v0/witness, over libp2p on /witan/checkpoint/1. The peer keeps it
// (after checking it) and puts it in its extracts (D45). A peer that
// refuses it or does not keep cosignatures changes nothing else: the
// pull stands. The other side, keeping a peer's cosignature of this
// node's checkpoint, is KeepCosignature (p2pcheck.go) and httpapi's POST
// /witness, both through replica.AddCosignature.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/witan-dev/witan/replica"
)

// maxWitnessAnswer bounds the peer's answer to a POST /witness read back.
const maxWitnessAnswer = 4 << 10

// witness co-signs the checkpoint of space just verified from src and
// sends it, once per checkpoint, and says what became of it
// (PeerCheck.Witness).
func (n *Node) witness(ctx context.Context, src checkpointSource, pc *peerCheckpoints, space string) string {
	cp := pc.seen[space]
	if last, ok := pc.cosigned[space]; ok && last == string(cp.Sig) {
		return "already_sent"
	}
	cs, err := n.rep.Cosign(cp)
	if err == nil {
		err = src.cosign(ctx, space, cp, cs)
	}
	if err != nil {
		return "not_kept: " + err.Error()
	}
	pc.cosigned[space] = string(cp.Sig)
	return "sent"
}

// cosign POSTs cs of c to the peer's /oth/v0/witness.
func (p *HTTPPeer) cosign(ctx context.Context, _ string, c replica.Checkpoint, cs replica.Cosignature) error {
	body, err := json.Marshal(struct {
		Checkpoint any `json:"checkpoint"`
		Cosig      any `json:"cosignature"`
	}{c, cs})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/oth/v0/witness", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(io.LimitReader(resp.Body, maxWitnessAnswer))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s", resp.Status, bytes.TrimSpace(ans))
	}
	return nil
}
