// Package checkpoint is the form of what a witan node signs over a log
// and hands out as evidence (30k §5, D45): its checkpoints, witnesses'
// cosignatures of them, RFC 9162 inclusion and consistency proofs against
// them, and the finality labels they give. It decodes and verifies them
// and nothing else: pure (no store, no network, no clock), so that an
// offline verifier (replica/extract, witan verify-extract) links neither
// Badger nor net/http nor libp2p. The replica (the write core) signs
// checkpoints and builds proofs; its names for these types are aliases.
package checkpoint

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
)

// RefusalSpace is the node-local space of the refusal log, whose
// checkpoints are node-wide: their wire form names no session.
const RefusalSpace = "witan-local/refusals"

// Domain prefixes the JCS of a checkpoint without "sig" when it
// is signed. 30k §5 names domains for envelopes and receipts only; witan
// uses this one for checkpoints (docs/deviations.md).
const Domain = "oth/0.10-checkpoint\n"

// Finality labels (30k §5). An eventual node never emits "final".
type Finality string

// The two labels an eventual node emits.
const (
	Provisional   Finality = "provisional"
	FinalAdvisory Finality = "final_advisory"
)

// Checkpoint is a signed log head of one space (30k §5):
// {"size":N,"root":"sha256:...","ts":"...","node":"ed25519:...","sig":"..."}.
// Root is the RFC 9162 Merkle tree hash over the 32-byte digests of the tx
// ids in this replica's log order (the empty tree's root for size 0).
type Checkpoint struct {
	Space string    `json:"-"`
	Size  uint64    `json:"size"`
	Root  dag.ID    `json:"root"`
	TS    time.Time `json:"-"`
	Node  dag.Key   `json:"node"`
	Sig   []byte    `json:"-"`
	// Legacy marks a checkpoint signed before the session was part of the
	// signed bytes (loaded from an older store): its wire form has no
	// "session", so that its signature still verifies.
	Legacy bool `json:"-"`
}

// wireCheckpoint is a checkpoint's wire form: 30k §5's members and
// "session", the space it is a head of, so that a checkpoint of one
// session cannot be passed off as another's (docs/deviations.md). A
// refusal-log checkpoint (node-wide) and a legacy one have no session.
type wireCheckpoint struct {
	Size    uint64  `json:"size"`
	Root    dag.ID  `json:"root"`
	TS      string  `json:"ts"`
	Node    dag.Key `json:"node"`
	Session string  `json:"session,omitempty"`
	Sig     *string `json:"sig,omitempty"`
}

func (c Checkpoint) wire() wireCheckpoint {
	w := wireCheckpoint{Size: c.Size, Root: c.Root, TS: c.TS.UTC().Format(time.RFC3339Nano), Node: c.Node}
	if !c.Legacy && c.Space != RefusalSpace {
		w.Session = c.Space
	}
	return w
}

// SigningBytes returns JCS(checkpoint without "sig").
func (c Checkpoint) SigningBytes() ([]byte, error) { return dag.Marshal(c.wire()) }

// MarshalJSON writes the checkpoint's canonical JSON, signature included.
func (c Checkpoint) MarshalJSON() ([]byte, error) {
	w := c.wire()
	s := b64(c.Sig)
	w.Sig = &s
	return dag.Marshal(w)
}

// Decode reads a signed checkpoint in its wire form
// ({size, root, ts, node, sig}, as GET /checkpoint serves it). It does not
// verify the signature (Verify does). A checkpoint without "session" (a
// legacy one) decodes with Legacy set and Space empty.
func Decode(b []byte) (Checkpoint, error) {
	var w struct {
		Size    uint64  `json:"size"`
		Root    dag.ID  `json:"root"`
		TS      string  `json:"ts"`
		Node    dag.Key `json:"node"`
		Session string  `json:"session"`
		Sig     string  `json:"sig"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	ts, err := time.Parse(time.RFC3339Nano, w.TS)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint ts: %w", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(w.Sig)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint sig: %w", err)
	}
	return Checkpoint{Space: w.Session, Size: w.Size, Root: w.Root, TS: ts, Node: w.Node, Sig: sig, Legacy: w.Session == ""}, nil
}

// Verify checks the checkpoint's signature by its node key.
func (c Checkpoint) Verify() error {
	msg, err := c.SigningBytes()
	if err != nil {
		return err
	}
	if !dag.Verify(c.Node, Domain, msg, c.Sig) {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "checkpoint signature does not verify"}
	}
	return nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func b64d(s string) ([]byte, error) { return base64.RawURLEncoding.Strict().DecodeString(s) }
