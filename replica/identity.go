package replica

// This file ties a store to the node key it was first opened with. Its
// receipts, checkpoints and refusal log are that key's word; opened with
// another key, the node would sign new checkpoints of the same logs as a
// second identity, and its earlier evidence would no longer be its own.
// The key is recorded once, in the node-local space witan-local/identity
// (never synced), and Open refuses any other.

import (
	"context"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// IdentitySpace is the node-local space that names the store's node key.
const IdentitySpace = LocalPrefix + "identity"

// ErrOtherNodeKey is wrapped by Open when the store was first opened with
// another node key.
var ErrOtherNodeKey = errors.New("replica: the store belongs to another node key")

type identityRecord struct {
	Node dag.Key `json:"node"`
}

// checkIdentity records r's node key in a store that names none, and
// refuses a store that names another.
func (r *Replica) checkIdentity(ctx context.Context) error {
	es, err := localLog(ctx, r.store, IdentitySpace)
	if err != nil {
		return err
	}
	if len(es) > 0 {
		var rec identityRecord
		if err := strictJSON(es[0].Data, &rec); err != nil {
			return fmt.Errorf("%w: identity %s: %w", errLocalRecord, es[0].ID, err)
		}
		if rec.Node != r.key.Key() {
			return fmt.Errorf("%w: it was opened with %s, not %s (keep the node key with its data)", ErrOtherNodeKey, rec.Node, r.key.Key())
		}
		return nil
	}
	b, err := dag.Marshal(identityRecord{Node: r.key.Key()})
	if err != nil {
		return err
	}
	e := dag.Entry{ID: dag.Sum(b), Space: IdentitySpace, Data: b}
	if _, err := r.store.Put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		return fmt.Errorf("replica: record the node key: %w", err)
	}
	return nil
}
