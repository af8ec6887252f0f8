package sync

// This file is /witan/checkpoint/1, the small protocol beside
// /witan/sync/2 by which a node holds its libp2p peers to their history
// (30k S10) and witnesses their checkpoints (D45): a requester asks a
// peer for its latest signed checkpoint of a space, with the consistency
// proof from the size it last verified of that peer, and sends back its
// cosignature of a checkpoint it verified. sync neither signs nor checks
// checkpoints: the bytes are the replica's wire forms (docs/wire-format.md),
// produced and judged by the Local (CheckpointServer) and by the caller
// (replica/node). docs/sync-protocol.md describes the wire.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	msmux "github.com/multiformats/go-multistream"

	"github.com/witan-dev/witan/dag"
)

// CheckpointProtocolID is the libp2p protocol of checkpoint exchange.
const CheckpointProtocolID = "/witan/checkpoint/1"

// MaxCheckpointMessage bounds one message of /witan/checkpoint/1, in
// bytes (a checkpoint is some 300 bytes, a consistency proof at most 128
// hashes of 71 bytes).
const MaxCheckpointMessage = 64 << 10

// Kinds of CheckpointRequest.
const (
	CheckpointGet     = "checkpoint"
	CheckpointWitness = "witness"
)

// CheckpointRequest is the one message a requester sends on a
// /witan/checkpoint/1 stream.
type CheckpointRequest struct {
	// Kind is CheckpointGet or CheckpointWitness.
	Kind string `json:"kind"`
	// Space is the session the checkpoint is of.
	Space string `json:"space"`
	// From (CheckpointGet) is the size of the last checkpoint of this
	// peer the requester verified, 0 if none: the answer carries the
	// consistency proof from it.
	From uint64 `json:"from,omitempty"`
	// Checkpoint and Cosignature (CheckpointWitness) are the peer's
	// checkpoint and the requester's cosignature of it, in their wire
	// forms.
	Checkpoint  json.RawMessage `json:"checkpoint,omitempty"`
	Cosignature json.RawMessage `json:"cosignature,omitempty"`
}

// CheckpointAnswer is the responder's one message.
type CheckpointAnswer struct {
	// Checkpoint is the responder's latest signed checkpoint of the space
	// (CheckpointGet), absent when it has none; Consistency the proof from
	// the request's From to its size, absent when From is 0 or that size.
	Checkpoint  json.RawMessage `json:"checkpoint,omitempty"`
	Consistency json.RawMessage `json:"consistency,omitempty"`
	// Kept (CheckpointWitness): the cosignature was kept.
	Kept bool `json:"kept,omitempty"`
	// Error says why the request was refused: a 30k or witan code
	// (dag.Code) and a detail of at most 1 KiB.
	Error *CheckpointError `json:"error,omitempty"`
}

// CheckpointError is a refusal on /witan/checkpoint/1; as a Go error it is
// what PeerCheckpoint and SendCosignature return for it.
type CheckpointError struct {
	Code   dag.Code `json:"code"`
	Detail string   `json:"detail"`
}

func (e *CheckpointError) Error() string {
	return fmt.Sprintf("sync: peer refused: %s: %s", e.Code, e.Detail)
}

// ErrNoCheckpoints is wrapped by PeerCheckpoint when the peer does not
// speak /witan/checkpoint/1 (a node that keeps no checkpoints, or an older
// one).
var ErrNoCheckpoints = errors.New("sync: peer does not serve checkpoints")

// CheckpointServer is implemented by a Local that signs checkpoints of its
// spaces and keeps its peers' cosignatures of them (replica/node's Node
// does); Node then serves /witan/checkpoint/1.
type CheckpointServer interface {
	// CheckpointOf returns the latest checkpoint this node signed of
	// space, in its wire form, and when from is neither 0 nor its size
	// the consistency proof from from to its size, in its wire form; a
	// nil checkpoint when it has none.
	CheckpointOf(ctx context.Context, space string, from uint64) (checkpoint, consistency []byte, err error)
	// KeepCosignature keeps peer's cosignature of one of this node's
	// checkpoints of space, or says why not: a dag.ProtocolError's code
	// is sent to the peer, any other error as internal.
	KeepCosignature(ctx context.Context, peer, space string, checkpoint, cosignature []byte) error
}

// writeCheckpointMessage writes v as length:uvarint then its JSON.
func writeCheckpointMessage(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > MaxCheckpointMessage {
		return fmt.Errorf("sync: checkpoint message of %d bytes, over %d", len(b), MaxCheckpointMessage)
	}
	_, err = w.Write(append(binary.AppendUvarint(nil, uint64(len(b))), b...))
	return err
}

// readCheckpointMessage reads one message into v: a minimal uvarint
// length of 1 … MaxCheckpointMessage, then exactly that much JSON, one
// object with no unknown member.
func readCheckpointMessage(r *bufio.Reader, v any) error {
	var n uint64
	for i := 0; ; i++ {
		c, err := r.ReadByte()
		if err != nil {
			if i > 0 && errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF // cut, not malformed
			}
			return err
		}
		n |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if i > 0 && c == 0 {
				return malformed("checkpoint message: length not minimal")
			}
			break
		}
		if i == 2 {
			return malformed("checkpoint message of more than %d bytes", MaxCheckpointMessage)
		}
	}
	if n == 0 || n > MaxCheckpointMessage {
		return malformed("checkpoint message of %d bytes (1 … %d)", n, MaxCheckpointMessage)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return malformed("checkpoint message: %v", err)
	}
	if d.More() {
		return malformed("checkpoint message: trailing data")
	}
	return nil
}

// handleCheckpoint serves one /witan/checkpoint/1 stream: one request,
// one answer. A peer that is cut off, or past its request rate (the
// sync requests' budget, shared), is refused; a malformed request is
// charged to it like a malformed sync stream.
func (n *Node) handleCheckpoint(s network.Stream) {
	cs, ok := n.local.(CheckpointServer)
	n.mu.Lock()
	if n.closed || !ok {
		n.mu.Unlock()
		s.Reset()
		return
	}
	n.wg.Add(1)
	n.mu.Unlock()
	defer n.wg.Done()
	stop := context.AfterFunc(n.ctx, func() { s.Reset() })
	defer stop()
	p := s.Conn().RemotePeer().String()
	rw := &deadlined{s: s, d: n.cfg.StreamTimeout}
	var req CheckpointRequest
	ans := CheckpointAnswer{}
	refuse := func(c dag.Code, format string, args ...any) {
		d := fmt.Sprintf(format, args...)
		if len(d) > 1024 {
			d = d[:1024]
		}
		ans = CheckpointAnswer{Error: &CheckpointError{Code: c, Detail: d}}
	}
	rw.FrameRead() // the request must arrive whole within the deadline
	err := readCheckpointMessage(bufio.NewReader(io.LimitReader(rw, MaxCheckpointMessage+binary.MaxVarintLen32)), &req)
	switch {
	case err != nil && CodeOf(err) == CodeMalformed:
		n.engine.charge(p, chargeMalformed, 1) //nolint:errcheck // the stream ends anyway
		refuse(dag.CodeSchema, "%v", err)
	case err != nil:
		s.Reset()
		return
	case n.engine.refused(p) != nil:
		refuse("witan:refused", "cut off")
	case !n.engine.admit(p):
		refuse("witan:refused", "too many requests; retry within a minute")
	case req.Kind == CheckpointGet && len(req.Checkpoint)+len(req.Cosignature) == 0:
		cp, proof, err := cs.CheckpointOf(n.ctx, req.Space, req.From)
		if err != nil {
			refuse(answerError(err))
			break
		}
		ans.Checkpoint, ans.Consistency = cp, proof
	case req.Kind == CheckpointWitness && req.From == 0 && len(req.Checkpoint) > 0 && len(req.Cosignature) > 0:
		if err := cs.KeepCosignature(n.ctx, p, req.Space, req.Checkpoint, req.Cosignature); err != nil {
			refuse(answerError(err))
			break
		}
		ans.Kept = true
	default:
		n.engine.charge(p, chargeMalformed, 1) //nolint:errcheck // the stream ends anyway
		refuse(dag.CodeSchema, "a %q request with these members is not one of /witan/checkpoint/1", req.Kind)
	}
	rw.FrameWrite()
	if err := writeCheckpointMessage(rw, ans); err != nil {
		n.log.Debug("checkpoint answer", "peer", p, "err", err)
		s.Reset()
		return
	}
	s.Close()
}

// answerError is what a peer is told of err: its dag.Code and text, or,
// for a local failure without a code, "witan:internal" and no more.
func answerError(err error) (dag.Code, string, string) {
	if c := dag.CodeOf(err); c != "" {
		return c, "%s", err.Error()
	}
	return "witan:internal", "%s", "responder failed"
}

// checkpointCall sends req to p on a new /witan/checkpoint/1 stream and
// reads the answer.
func (n *Node) checkpointCall(ctx context.Context, p peer.ID, req CheckpointRequest) (CheckpointAnswer, error) {
	if err := n.engine.refused(p.String()); err != nil {
		return CheckpointAnswer{}, err
	}
	s, err := n.host.NewStream(ctx, p, protocol.ID(CheckpointProtocolID))
	if err != nil {
		if errors.Is(err, msmux.ErrNotSupported[protocol.ID]{}) {
			return CheckpointAnswer{}, fmt.Errorf("%w: %s", ErrNoCheckpoints, p)
		}
		return CheckpointAnswer{}, fmt.Errorf("sync: open checkpoint stream to %s: %w", p, err)
	}
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	rw := &deadlined{s: s, d: n.cfg.StreamTimeout}
	var ans CheckpointAnswer
	rw.FrameWrite()
	if err := writeCheckpointMessage(rw, req); err != nil {
		s.Reset()
		return ans, fmt.Errorf("sync: checkpoint request to %s: %w", p, err)
	}
	if err := s.CloseWrite(); err != nil {
		s.Reset()
		return ans, fmt.Errorf("sync: checkpoint request to %s: %w", p, err)
	}
	rw.FrameRead()
	if err := readCheckpointMessage(bufio.NewReader(io.LimitReader(rw, MaxCheckpointMessage+binary.MaxVarintLen32)), &ans); err != nil {
		s.Reset()
		if CodeOf(err) == CodeMalformed {
			n.engine.charge(p.String(), chargeMalformed, 1) //nolint:errcheck // the error says it
		}
		return ans, fmt.Errorf("sync: checkpoint answer from %s: %w", p, ctxErr(ctx, err))
	}
	s.Close()
	if ans.Error != nil {
		return ans, ans.Error
	}
	return ans, nil
}

// PeerCheckpoint asks peer p for its latest signed checkpoint of space
// and the consistency proof from from (the size of the last checkpoint of
// p the caller verified; 0 for none), over /witan/checkpoint/1. Nothing
// is checked here: the caller verifies both (replica/node). A nil
// checkpoint means p has none; ErrNoCheckpoints that p does not speak the
// protocol; a *CheckpointError that p refused.
func (n *Node) PeerCheckpoint(ctx context.Context, p peer.ID, space string, from uint64) (checkpoint, consistency []byte, err error) {
	ans, err := n.checkpointCall(ctx, p, CheckpointRequest{Kind: CheckpointGet, Space: space, From: from})
	if err != nil {
		return nil, nil, err
	}
	if ans.Kept {
		return nil, nil, fmt.Errorf("sync: checkpoint answer from %s: %w", p, malformed("\"kept\" in the answer to a checkpoint request"))
	}
	return nonNull(ans.Checkpoint), nonNull(ans.Consistency), nil
}

// nonNull is b, or nil for an absent or null member.
func nonNull(b json.RawMessage) []byte {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// SendCosignature sends peer p the caller's cosignature of p's checkpoint
// of space (both in their wire forms) over /witan/checkpoint/1. nil means
// p kept it; a *CheckpointError says why p did not.
func (n *Node) SendCosignature(ctx context.Context, p peer.ID, space string, checkpoint, cosignature []byte) error {
	ans, err := n.checkpointCall(ctx, p, CheckpointRequest{Kind: CheckpointWitness, Space: space, Checkpoint: checkpoint, Cosignature: cosignature})
	if err != nil {
		return err
	}
	if !ans.Kept {
		return fmt.Errorf("sync: checkpoint answer from %s: %w", p, malformed("a cosignature neither kept nor refused"))
	}
	return nil
}
