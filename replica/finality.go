package replica

// This file is finality (30k §5): per-replica checkpoints over an RFC 9162
// Merkle tree of tx ids in this replica's log order, signed by the node
// key; the finality label of anything the replica serves; and signed
// receipts for submissions.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/witan-dev/witan/dag"
)

// DomainCheckpoint prefixes the JCS of a checkpoint without "sig" when it
// is signed. 30k §5 names domains for envelopes and receipts only; witan
// uses this one for checkpoints (docs/deviations.md).
const DomainCheckpoint = "oth/0.10-checkpoint\n"

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

// DecodeCheckpoint reads a signed checkpoint in its wire form
// ({size, root, ts, node, sig}, as GET /checkpoint serves it). It does not
// verify the signature (Verify does). A checkpoint without "session" (a
// legacy one) decodes with Legacy set and Space empty.
func DecodeCheckpoint(b []byte) (Checkpoint, error) {
	var w struct {
		Size    uint64  `json:"size"`
		Root    dag.ID  `json:"root"`
		TS      string  `json:"ts"`
		Node    dag.Key `json:"node"`
		Session string  `json:"session"`
		Sig     string  `json:"sig"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Checkpoint{}, fmt.Errorf("replica: checkpoint: %w", err)
	}
	ts, err := time.Parse(time.RFC3339Nano, w.TS)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("replica: checkpoint ts: %w", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(w.Sig)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("replica: checkpoint sig: %w", err)
	}
	return Checkpoint{Space: w.Session, Size: w.Size, Root: w.Root, TS: ts, Node: w.Node, Sig: sig, Legacy: w.Session == ""}, nil
}

// Verify checks the checkpoint's signature by its node key.
func (c Checkpoint) Verify() error {
	msg, err := c.SigningBytes()
	if err != nil {
		return err
	}
	if !dag.Verify(c.Node, DomainCheckpoint, msg, c.Sig) {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "checkpoint signature does not verify"}
	}
	return nil
}

// MerkleRoot returns the RFC 9162 root over ids (their 32-byte digests as
// leaves), the checkpoint's root for a log of ids.
func MerkleRoot(ids []dag.ID) dag.ID {
	r := rangeFactory.NewEmptyRange(0)
	for _, id := range ids {
		d := id.Digest()
		_ = r.Append(rfc6962.DefaultHasher.HashLeaf(d[:]), nil)
	}
	return rootOf(r.End(), func() ([]byte, error) { return r.GetRootHash(nil) })
}

func rootOf(size uint64, get func() ([]byte, error)) dag.ID {
	var h []byte
	if size == 0 {
		h = rfc6962.DefaultHasher.EmptyRoot()
	} else {
		var err error
		if h, err = get(); err != nil {
			panic(err) // a non-empty compact range always has a root
		}
	}
	var d [32]byte
	copy(d[:], h)
	return dag.IDFromDigest(d)
}

// Checkpoint signs a checkpoint over the whole log of space as it is now,
// at the Clock's time, and keeps it: entries in it become final_advisory.
// A checkpoint time never goes backwards: a clock that does is clamped to
// the previous checkpoint's time. The checkpoint is written to the store
// (the node-local space witan-local/checkpoints/<space>) before it is
// returned, in one transaction: every checkpoint the node has handed out
// survives a restart or a crash, and Finality answers the same after one.
// When the write fails, no checkpoint is made. A space with no
// session.create applied is not checkpointed (ErrUnknownSpace).
func (r *Replica) Checkpoint(ctx context.Context, spaceName string) (Checkpoint, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Only a session this replica holds is checkpointed: a checkpoint of
	// a name with nothing applied would commit to nothing, and would be
	// kept (and signed) for any name a caller makes up.
	if r.closed {
		return Checkpoint{}, ErrClosed
	}
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(sp.log) == 0 {
		return Checkpoint{}, fmt.Errorf("%w: %s has no entry in this replica's log", ErrUnknownSpace, spaceName)
	}
	ts := r.clock().UTC()
	if n := len(sp.cps); n > 0 && ts.Before(sp.cps[n-1].TS) {
		ts = sp.cps[n-1].TS
	}
	c := Checkpoint{Space: spaceName, Size: uint64(len(sp.log)), TS: ts, Node: r.key.Key()}
	c.Root = rootOf(sp.tree.End(), func() ([]byte, error) { return sp.tree.GetRootHash(nil) })
	msg, err := c.SigningBytes()
	if err != nil {
		return Checkpoint{}, err
	}
	c.Sig = r.key.Sign(DomainCheckpoint, msg)
	id, err := r.storeCheckpoint(ctx, sp, c)
	if err != nil {
		return Checkpoint{}, err
	}
	sp.cps, sp.cpHead = append(sp.cps, c), id
	return c, nil
}

// Checkpoints returns the space's checkpoints, oldest first: every one
// this node has signed, before a restart too.
func (r *Replica) Checkpoints(spaceName string) []Checkpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp := r.spaces[spaceName]; sp != nil {
		return append([]Checkpoint(nil), sp.cps...)
	}
	return nil
}

// LastCheckpoint returns the space's latest checkpoint, if it has one. It
// is Checkpoints' last element without copying them all, for callers that
// watch finality move (the HTTP API's event stream asks it often).
func (r *Replica) LastCheckpoint(spaceName string) (Checkpoint, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sp := r.spaces[spaceName]; sp != nil && len(sp.cps) > 0 {
		return sp.cps[len(sp.cps)-1], true
	}
	return Checkpoint{}, false
}

// position returns an entry's 1-based log position in this replica, or 0.
func (r *Replica) position(ctx context.Context, id dag.ID) uint64 {
	p, err := r.store.Position(ctx, id)
	if err != nil {
		return 0
	}
	return p
}

// checkpointOf returns the first checkpoint of sp that includes log
// position pos.
func (sp *space) checkpointOf(pos uint64) (Checkpoint, bool) {
	if pos == 0 {
		return Checkpoint{}, false
	}
	i := sort.Search(len(sp.cps), func(i int) bool { return sp.cps[i].Size >= pos })
	if i == len(sp.cps) {
		return Checkpoint{}, false
	}
	return sp.cps[i], true
}

func (r *Replica) finality(ctx context.Context, sp *space, id dag.ID) Finality {
	if _, ok := sp.checkpointOf(r.position(ctx, id)); ok {
		return FinalAdvisory
	}
	return Provisional
}

// Finality returns the finality of an accepted entry: final_advisory once a
// checkpoint of this replica includes it, else provisional.
func (r *Replica) Finality(ctx context.Context, spaceName string, id dag.ID) (Finality, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.space(ctx, spaceName)
	if err != nil {
		return "", err
	}
	if !sp.h.Has(id) {
		return "", fmt.Errorf("replica: %s: %w", id, dag.ErrNotFound)
	}
	return r.finality(ctx, sp, id), nil
}

// Receipt is the signed answer to a submission (30k §5, D39).
type Receipt struct {
	Tx             dag.ID       `json:"tx"`
	Envelope       dag.ID       `json:"envelope"`
	Status         string       `json:"status"` // accepted | rejected
	LogIndex       *uint64      `json:"log_index"`
	RefusalIndex   *uint64      `json:"refusal_index"` // the rejection's index in the refusal log, or null
	Errors         []ErrorEntry `json:"errors"`
	CheckpointSize uint64       `json:"checkpoint_size"`
	Node           dag.Key      `json:"node"`
	Sig            []byte       `json:"-"`
}

// ErrorEntry is one error of a receipt.
type ErrorEntry struct {
	Code   dag.Code `json:"code"`
	Detail string   `json:"detail"`
}

type plainReceipt Receipt // without MarshalJSON

// SigningBytes returns JCS(receipt without "sig").
func (rc Receipt) SigningBytes() ([]byte, error) {
	if b, ok := rc.appendCanonical(make([]byte, 0, 512), false); ok { // receipt_json.go
		return b, nil
	}
	return dag.Marshal(plainReceipt(rc))
}

// MarshalJSON writes the receipt's canonical JSON, signature included.
func (rc Receipt) MarshalJSON() ([]byte, error) {
	if b, ok := rc.appendCanonical(make([]byte, 0, 512), true); ok {
		return b, nil
	}
	s := b64(rc.Sig)
	return dag.Marshal(struct {
		plainReceipt
		Sig string `json:"sig"`
	}{plainReceipt(rc), s})
}

// Verify checks the receipt's signature by its node key.
func (rc Receipt) Verify() error {
	msg, err := rc.SigningBytes()
	if err != nil {
		return err
	}
	if !dag.Verify(rc.Node, dag.DomainReceipt, msg, rc.Sig) {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "receipt signature does not verify"}
	}
	return nil
}

// Submit is the write endpoint (POST /transactions): it ingests one
// envelope with its attachments and returns a signed receipt. Unlike a
// peer's entry, a submission whose parents this replica does not hold is
// rejected (unknown_parent), not held.
func (r *Replica) Submit(ctx context.Context, envelope []byte, attachments [][]byte) (*Receipt, error) {
	return r.submit(ctx, Submission{Envelope: envelope, Attachments: attachments})
}

// SubmitSigned is Submit for an envelope its caller has decoded: se must
// be dag.DecodeSigned(envelope) (the HTTP API decodes it to apply its
// node policy). It is not decoded again.
func (r *Replica) SubmitSigned(ctx context.Context, envelope []byte, se dag.SignedEnvelope, attachments [][]byte) (*Receipt, error) {
	return r.submit(ctx, Submission{Envelope: envelope, Attachments: attachments, signed: &se})
}

func (r *Replica) submit(ctx context.Context, sub Submission) (*Receipt, error) {
	q := r.submitOne(ctx, sub) // groupcommit.go
	if q.err != nil {
		return nil, q.err
	}
	var rc *Receipt
	if q.facts {
		// Accepted, its facts read with its group's: no lock here.
		digest := q.digest
		if digest == (dag.ID{}) {
			digest = dag.Sum(sub.Envelope)
		}
		rc = r.acceptedReceipt(q.out.Tx, digest, q.cpSize, q.pos)
	} else {
		var err error
		if rc, err = r.receipt(ctx, sub.Envelope, q.out); err != nil {
			return nil, err
		}
	}
	// Signed outside the lock: concurrent submissions sign in parallel.
	msg, err := rc.SigningBytes()
	if err != nil {
		return nil, err
	}
	rc.Sig = r.key.Sign(dag.DomainReceipt, msg)
	return rc, nil
}

// acceptedReceipt is the receipt, not yet signed, of accepted entry tx
// whose envelope's digest is envelope, at 1-based log position pos (0 if
// unknown) when the newest checkpoint has cpSize entries.
func (r *Replica) acceptedReceipt(tx, envelope dag.ID, cpSize, pos uint64) *Receipt {
	rc := &Receipt{Tx: tx, Envelope: envelope, Status: "accepted", Errors: []ErrorEntry{}, CheckpointSize: cpSize, Node: r.key.Key()}
	if pos > 0 {
		idx := pos - 1
		rc.LogIndex = &idx
	}
	return rc
}

// receipt is Submit's receipt for outcome o, not yet signed.
func (r *Replica) receipt(ctx context.Context, envelope []byte, o Outcome) (*Receipt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rc := &Receipt{Tx: o.Tx, Envelope: dag.Sum(envelope), Errors: []ErrorEntry{}, Node: r.key.Key()}
	var sp *space
	if o.Space != "" && o.Status == Accepted {
		sp, _ = r.space(ctx, o.Space) // loaded again if a failed write dropped it
	} else if o.Space != "" {
		sp = r.spaces[o.Space] // a refused entry makes no space
	}
	if o.Status == Pending {
		detail := o.Detail // an object the entry names, not held (missingObjectDetail)
		o.Status, o.Code, o.Detail = Rejected, dag.CodeUnknownParent, "a parent is not held by this node"
		if detail != "" {
			o.Detail = detail
		} else if sp == nil || sp.h.Counts().Entries == 0 {
			// Nothing of the session is here: say so, not which parent.
			o.Detail = fmt.Sprintf("unknown session %s: this node holds none of it (sync it from a peer that does)", o.Space)
		}
	}
	if sp != nil && len(sp.cps) > 0 {
		rc.CheckpointSize = sp.cps[len(sp.cps)-1].Size
	}
	if o.Status == Accepted {
		return r.acceptedReceipt(o.Tx, rc.Envelope, rc.CheckpointSize, r.position(ctx, o.Tx)), nil
	}
	rc.Status = "rejected"
	rc.Errors = append(rc.Errors, ErrorEntry{Code: o.Code, Detail: o.Detail})
	if env, _, _, err := dag.DecodeEnvelope(envelope); err == nil && o.Space != "" {
		idx, ok, err := r.logRefusal(ctx, o.Space, env, rc.Envelope, o.Code, rc.CheckpointSize)
		if err != nil {
			return nil, err
		}
		if ok {
			rc.RefusalIndex = &idx
		}
	}
	return rc, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
