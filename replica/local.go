package replica

// This file is the replica's node-local spaces: what one node keeps about
// a session for itself, in the same store and through the same dag.Store
// API as the session, so that it is written atomically and survives a
// crash like everything else. A node-local space is never a session and
// must never be offered to peers: its entries are this node's own
// bookkeeping (its signed checkpoints, the entries it holds back), not
// part of any session's DAG.
//
//	witan-local/checkpoints/<session>  the node's signed checkpoints of the
//	                                   session, oldest first, each entry
//	                                   the child of the one before
//	witan-local/held/<session>         the envelopes of the session's
//	                                   entries held back for an object
//	                                   (dag.ErrHold), one root entry each
//	witan-local/refusals               the node's refusal log (refusals.go)
//	witan-local/drafts                 restricted drafts deposited with
//	                                   this node (drafts.go), one root
//	                                   entry each
//	witan-local/witness/<session>      witnesses' cosignatures of the
//	                                   node's checkpoints of the session
//	                                   (witness.go), one root entry each
//
// replica/node keeps two more (its peer checks, node/peerrecords.go):
// witan-local/peer-checkpoints and witan-local/forks.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// LocalPrefix starts the name of every node-local space in the store.
// No session can have such a name (a session's space is its id,
// "sha256:…"), nor can a memory space ("mem:…").
const LocalPrefix = "witan-local/"

// IsLocalSpace reports whether the store's space name is one of a
// replica's node-local spaces. Whatever lists the store's spaces for
// peers (sync's dag.Index.Spaces, its Heads, Log and Get for a space a
// peer asks for) must leave these out: they hold this node's own
// bookkeeping, not a session's entries.
func IsLocalSpace(name string) bool { return strings.HasPrefix(name, LocalPrefix) }

func checkpointSpace(session string) string { return LocalPrefix + "checkpoints/" + session }

func heldSpace(session string) string { return LocalPrefix + "held/" + session }

// errLocalRecord is wrapped when a node-local record in the store does not
// decode: the store was written by something else, or is damaged.
var errLocalRecord = errors.New("replica: malformed node-local record")

// heldRecord is one entry of witan-local/held/<session>: the exact bytes
// of a session entry that Admit held back for an object. The store cannot
// give a pending entry's bytes back (dag.Getter returns applied entries
// only), so the replica keeps them here to judge the entry again after a
// restart. The record is content-addressed and has no parents: holding
// the same entry again writes nothing.
type heldRecord struct {
	Entry   string `json:"entry"` // base64url (no padding) of the envelope
	Session string `json:"session"`
	Tx      dag.ID `json:"tx"`
}

func heldEntry(session string, tx dag.ID, data []byte) (dag.Entry, error) {
	b, err := dag.Marshal(heldRecord{Entry: b64(data), Session: session, Tx: tx})
	if err != nil {
		return dag.Entry{}, err
	}
	return dag.Entry{ID: dag.Sum(b), Space: heldSpace(session), Data: b}, nil
}

// decodeHeld returns the envelope bytes a held record keeps, checked
// against the record's tx id and session.
func decodeHeld(session string, e dag.Entry) (dag.ID, []byte, error) {
	var rec heldRecord
	if err := strictJSON(e.Data, &rec); err != nil {
		return dag.ID{}, nil, fmt.Errorf("%w: held %s: %w", errLocalRecord, e.ID, err)
	}
	data, err := b64d(rec.Entry)
	switch {
	case err != nil:
		return dag.ID{}, nil, fmt.Errorf("%w: held %s: %w", errLocalRecord, e.ID, err)
	case rec.Session != session:
		return dag.ID{}, nil, fmt.Errorf("%w: held %s names session %s", errLocalRecord, e.ID, rec.Session)
	case dag.Sum(data) != rec.Tx:
		return dag.ID{}, nil, fmt.Errorf("%w: held %s: the entry is not %s", errLocalRecord, e.ID, rec.Tx)
	}
	return rec.Tx, data, nil
}

// b64d decodes base64url without padding, strictly (one spelling).
func b64d(s string) ([]byte, error) { return base64.RawURLEncoding.Strict().DecodeString(s) }

// strictJSON decodes b into v, refusing unknown members, trailing data,
// and any b that is not the canonical form of what it decodes to: a
// record has one spelling, the one the replica wrote.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	again, err := dag.Marshal(v)
	if err != nil {
		return err
	}
	if string(again) != string(b) {
		return errors.New("not in canonical form")
	}
	return nil
}

// localLog returns the entries of a node-local space in log order.
func localLog(ctx context.Context, st dag.Store, space string) ([]dag.Entry, error) {
	return dag.ReadLog(ctx, st, space, 0, 0)
}
