package replica

// This file is the write endpoint (POST /transactions): Submit ingests a
// client's envelope through the group commit (groupcommit.go) and answers
// with a signed receipt (30k §5, D39), accepted or rejected; a signed
// rejection is evidence the node cannot deny.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

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
	r.lock()
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

// ErrRejected is matched (errors.Is) by every Rejection.
var ErrRejected = errors.New("replica: rejected")

// Rejection is a rejected submission as a Go error, carrying the node's
// signed receipt (the evidence a rejection is: keep it). errors.As finds
// it; errors.Is matches ErrRejected; dag.CodeOf gives the receipt's first
// code, the spec's code of the refusal.
type Rejection struct {
	Receipt *Receipt
}

func (e *Rejection) Error() string {
	if len(e.Receipt.Errors) == 0 {
		return "replica: rejected " + e.Receipt.Tx.String()
	}
	x := e.Receipt.Errors[0]
	return fmt.Sprintf("replica: rejected %s: %s: %s", e.Receipt.Tx, x.Code, x.Detail)
}

// Is matches ErrRejected.
func (e *Rejection) Is(target error) bool { return target == ErrRejected }

// Unwrap is the receipt's first error as a *dag.ProtocolError, so that
// dag.CodeOf and errors.As(err, **dag.ProtocolError) read its code.
func (e *Rejection) Unwrap() error {
	if len(e.Receipt.Errors) == 0 {
		return nil
	}
	return &dag.ProtocolError{Code: e.Receipt.Errors[0].Code, Detail: e.Receipt.Errors[0].Detail}
}

// Err returns nil for an accepted receipt and a *Rejection carrying it
// for a rejected one, so a caller can write
//
//	rc, err := n.Submit(ctx, env, atts)
//	if err == nil {
//		err = rc.Err()
//	}
//
// and test a rejection with errors.As or errors.Is instead of comparing
// Status with a string.
func (rc *Receipt) Err() error {
	if rc == nil || rc.Status == string(Accepted) {
		return nil
	}
	return &Rejection{Receipt: rc}
}
