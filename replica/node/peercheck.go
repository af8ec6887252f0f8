package node

// This file is the one check of a peer's checkpoints (30k S10: a
// replica holds its peers to their history when it syncs), whichever way
// the peer was synced: over HTTP (httppeer.go, GET /checkpoint and
// /proofs/consistency) or over libp2p (p2pcheck.go, /witan/checkpoint/1).
// A checkpointSource reads the peer; peerCheckpoints remembers, per
// session, the last checkpoint of the peer this node verified and the
// last one it co-signed. After each pull of a session the node verifies
// the peer's latest checkpoint (its signature, its session) and that it
// extends the one verified before: same node key, size not smaller, the
// same root at the same size, else an RFC 9162 consistency proof from the
// old size to the new one, served by the peer, whose roots are the two
// signed roots and which verifies. What holds is remembered; what does
// not is fork_detected, and the old checkpoint stays the reference.
// Entries are never refused for it: each is judged on its own signature
// and causal past; a fork is evidence against the peer's operator. A
// checkpoint that holds is co-signed as a witness and sent back to the
// peer (witness.go).

import (
	"context"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/replica"
)

// checkpointSource is where a peer's checkpoints are read, and this
// node's cosignatures of them sent.
type checkpointSource interface {
	// String names the peer in errors.
	String() string
	// checkpoint returns the peer's latest signed checkpoint of space in
	// its wire form, or an error wrapping errNoCheckpoint when it has
	// none. from is the size of the last checkpoint of the peer this node
	// verified (0 if none), for a source that sends the consistency proof
	// with the checkpoint.
	checkpoint(ctx context.Context, space string, from uint64) ([]byte, error)
	// consistency returns the peer's RFC 9162 consistency proof of space
	// from size from to size to.
	consistency(ctx context.Context, space string, from, to uint64) (replica.ConsistencyProof, error)
	// cosign sends the peer this node's cosignature cs of its checkpoint
	// c; nil when the peer kept it.
	cosign(ctx context.Context, space string, c replica.Checkpoint, cs replica.Cosignature) error
}

// errNoCheckpoint: the peer has no checkpoint of the session (or keeps
// none at all).
var errNoCheckpoint = errors.New("node: the peer has no checkpoint")

// peerCheckpoints is what this node verified of one peer's checkpoints.
// Its user serialises the calls on one peer.
type peerCheckpoints struct {
	// seen is the last checkpoint verified from the peer, per session.
	seen map[string]replica.Checkpoint
	// cosigned is the signature of the last checkpoint co-signed and
	// kept by the peer, per session.
	cosigned map[string]string
}

func newPeerCheckpoints() peerCheckpoints {
	return peerCheckpoints{seen: map[string]replica.Checkpoint{}, cosigned: map[string]string{}}
}

// PeerCheck is what the check of a peer's checkpoint of a session found
// after a pull.
type PeerCheck struct {
	// Checkpoint is "none" (the peer has none), "first_seen",
	// "consistent", or "fork_detected" with ForkDetail saying what does
	// not hold.
	Checkpoint string `json:"checkpoint"`
	ForkDetail string `json:"fork_detail,omitempty"`
	// Witness is what became of this node's cosignature of the peer's
	// checkpoint (after "first_seen" or "consistent"): "sent" (the peer
	// kept it), "already_sent" (the same checkpoint was co-signed
	// before), "not_kept: <why>" (the peer refused it or does not keep
	// cosignatures: a conforming node need not), or "" (nothing to
	// co-sign).
	Witness string `json:"witness,omitempty"`
	// claimed is the peer's checkpoint that contradicts the one
	// verified before (with fork_detected).
	claimed replica.Checkpoint
}

// check verifies src's latest checkpoint of space against what pc
// remembers of it, and records it when it holds. The error wraps
// ErrForkDetected for a fork; any other error means the check could not
// be made (r.Checkpoint is then empty).
func (pc *peerCheckpoints) check(ctx context.Context, src checkpointSource, space string, r *PeerCheck) error {
	prev, ok := pc.seen[space]
	raw, err := src.checkpoint(ctx, space, prev.Size)
	if errors.Is(err, errNoCheckpoint) {
		r.Checkpoint = "none"
		return nil
	}
	var cp replica.Checkpoint
	if err == nil {
		cp, err = replica.DecodeCheckpoint(raw)
	}
	if err == nil {
		err = cp.Verify()
	}
	if err == nil && !cp.Legacy && cp.Space != space {
		err = fmt.Errorf("the checkpoint is of session %s", cp.Space)
	}
	if err != nil {
		return fmt.Errorf("node: peer %s: checkpoint of %s: %w", src, space, err)
	}
	fork := func(format string, args ...any) error {
		r.Checkpoint, r.ForkDetail, r.claimed = string(CodeForkDetected), fmt.Sprintf(format, args...), cp
		return fmt.Errorf("%w: peer %s, session %s: %s", ErrForkDetected, src, space, r.ForkDetail)
	}
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
		pr, err := src.consistency(ctx, space, prev.Size, cp.Size)
		if err != nil {
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
	pc.seen[space] = cp
	return nil
}

// checkAndWitness checks src's checkpoint of space and, when it holds,
// co-signs it back (witness.go).
func (n *Node) checkAndWitness(ctx context.Context, src checkpointSource, pc *peerCheckpoints, space string) (PeerCheck, error) {
	var r PeerCheck
	if _, ok := pc.seen[space]; !ok {
		// What a check before a restart verified (peerrecords.go).
		if cp, ok := n.verifiedOf(src.String(), space); ok {
			pc.seen[space] = cp
		}
	}
	prev := pc.seen[space]
	err := pc.check(ctx, src, space, &r)
	switch {
	case err == nil && (r.Checkpoint == "first_seen" || r.Checkpoint == "consistent"):
		if kerr := n.keepVerified(ctx, src.String(), space, pc.seen[space]); kerr != nil {
			n.log.Warn("node: peer checkpoint verified but not kept", "peer", src.String(), "session", space, "err", kerr)
		}
		r.Witness = n.witness(ctx, src, pc, space)
	case errors.Is(err, ErrForkDetected):
		if kerr := n.keepFork(ctx, src.String(), space, r.ForkDetail, prev, r.claimed); kerr != nil {
			n.log.Warn("node: fork detected but not kept", "peer", src.String(), "session", space, "err", kerr)
		}
	}
	return r, err
}
