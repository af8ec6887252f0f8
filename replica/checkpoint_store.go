package replica

// This file keeps the node's checkpoints durable. Each checkpoint the node
// signs is one entry of the node-local space
// witan-local/checkpoints/<session>, the child of the one before, written
// in one store transaction before Checkpoint returns it: a checkpoint the
// node has handed out survives a crash, and one it has not written was
// never handed out. The entries the checkpoint covers are already
// committed when it is signed (it covers the applied log as it is), so
// nothing it depends on can be lost with it. Open reads the chain back,
// checks each checkpoint's signature and its root against the replayed
// log, and so answers Finality exactly as before the restart.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
)

// ErrCheckpointMismatch is wrapped by Open when a stored checkpoint does
// not match the stored log (its root is not the Merkle root of the log's
// first Size entries, or the log is shorter than Size), or does not
// verify: the store is damaged or was changed under the replica. The
// replica refuses to open rather than label entries with a finality it
// cannot back.
var ErrCheckpointMismatch = errors.New("replica: stored checkpoint does not match the log")

// checkpointRecord is one entry of witan-local/checkpoints/<session>: the
// signed checkpoint, the session it is of, and its 1-based sequence number
// in the chain (which makes every record's id distinct, even for two
// checkpoints of the same log at the same time).
type checkpointRecord struct {
	Node    dag.Key `json:"node"`
	Root    dag.ID  `json:"root"`
	Seq     uint64  `json:"seq"`
	Session string  `json:"session"`
	Sig     string  `json:"sig"`
	Size    uint64  `json:"size"`
	TS      string  `json:"ts"`
}

// checkpointEntry returns the store entry of checkpoint c, the seq-th of
// its session, after the entry prev (zero for the first).
func checkpointEntry(c Checkpoint, seq uint64, prev dag.ID) (dag.Entry, error) {
	ts := c.TS.UTC().Format(time.RFC3339Nano) // the wire form's ts
	b, err := dag.Marshal(checkpointRecord{Node: c.Node, Root: c.Root, Seq: seq, Session: c.Space, Sig: b64(c.Sig), Size: c.Size, TS: ts})
	if err != nil {
		return dag.Entry{}, err
	}
	e := dag.Entry{ID: dag.Sum(b), Space: checkpointSpace(c.Space), Data: b}
	if prev.Valid() {
		e.Parents = []dag.ID{prev}
	}
	return e, nil
}

// decodeCheckpoint reads the checkpoint back from its entry.
func decodeCheckpoint(session string, e dag.Entry) (Checkpoint, uint64, error) {
	var rec checkpointRecord
	if err := strictJSON(e.Data, &rec); err != nil {
		return Checkpoint{}, 0, fmt.Errorf("%w: checkpoint %s: %w", errLocalRecord, e.ID, err)
	}
	if rec.Session != session {
		return Checkpoint{}, 0, fmt.Errorf("%w: checkpoint %s names session %s", errLocalRecord, e.ID, rec.Session)
	}
	ts, err := time.Parse(time.RFC3339Nano, rec.TS)
	if err != nil {
		return Checkpoint{}, 0, fmt.Errorf("%w: checkpoint %s: %w", errLocalRecord, e.ID, err)
	}
	sig, err := b64d(rec.Sig)
	if err != nil {
		return Checkpoint{}, 0, fmt.Errorf("%w: checkpoint %s: %w", errLocalRecord, e.ID, err)
	}
	c := Checkpoint{Space: session, Size: rec.Size, Root: rec.Root, TS: ts.UTC(), Node: rec.Node, Sig: sig}
	return c, rec.Seq, nil
}

// storeCheckpoint writes c, the next checkpoint of sp, in one Put, and
// returns its entry's id.
func (r *Replica) storeCheckpoint(ctx context.Context, sp *space, c Checkpoint) (dag.ID, error) {
	e, err := checkpointEntry(c, uint64(len(sp.cps))+1, sp.cpHead)
	if err != nil {
		return dag.ID{}, err
	}
	res, err := r.put(ctx, dag.Batch{Entries: []dag.Entry{e}})
	if err != nil {
		return dag.ID{}, fmt.Errorf("replica: store checkpoint of %s: %w", sp.name, err)
	}
	if !slices.Contains(res.Applied, e.ID) {
		// A Duplicate would mean the chain in memory is behind the store:
		// another writer, which the store's contract does not allow.
		return dag.ID{}, fmt.Errorf("replica: store checkpoint of %s: entry %s not applied (%+v)", sp.name, e.ID, res)
	}
	return e.ID, nil
}

// loadCheckpoints reads the chain of session's checkpoints, oldest first,
// and the id of the last one's entry. It checks the chain (each entry the
// child of the one before, sequence numbers 1, 2, …, sizes and times never
// decreasing) and every signature, in one batch; load checks the roots
// against the log.
func (r *Replica) loadCheckpoints(ctx context.Context, session string) ([]Checkpoint, dag.ID, error) {
	es, err := localLog(ctx, r.store, checkpointSpace(session))
	if err != nil || len(es) == 0 {
		return nil, dag.ID{}, err
	}
	cps := make([]Checkpoint, 0, len(es))
	bv := dag.NewBatchVerifierCache(r.keys)
	var prev dag.ID
	for i, e := range es {
		c, seq, err := decodeCheckpoint(session, e)
		if err != nil {
			return nil, dag.ID{}, err
		}
		wantParents := []dag.ID{}
		if prev.Valid() {
			wantParents = []dag.ID{prev}
		}
		switch {
		case seq != uint64(i)+1 || !slices.Equal(e.Parents, wantParents) && len(e.Parents)+len(wantParents) > 0:
			return nil, dag.ID{}, fmt.Errorf("%w: %s: checkpoint %s is not number %d of the chain", ErrCheckpointMismatch, session, e.ID, i+1)
		case i > 0 && (c.Size < cps[i-1].Size || c.TS.Before(cps[i-1].TS)):
			return nil, dag.ID{}, fmt.Errorf("%w: %s: checkpoint %s goes back in size or time", ErrCheckpointMismatch, session, e.ID)
		}
		msg, err := c.SigningBytes()
		if err != nil {
			return nil, dag.ID{}, err
		}
		bv.Add(c.Node, DomainCheckpoint, msg, c.Sig)
		cps = append(cps, c)
		prev = e.ID
	}
	if ok, valid := bv.Verify(); !ok {
		// A checkpoint stored before the session was signed with it
		// verifies without it: it is kept, marked Legacy, and served in
		// the form it was signed in.
		for i, v := range valid {
			if v {
				continue
			}
			c := cps[i]
			c.Legacy = true
			if c.Verify() != nil {
				return nil, dag.ID{}, fmt.Errorf("%w: %s: checkpoint %d does not verify", ErrCheckpointMismatch, session, i+1)
			}
			cps[i] = c
		}
	}
	return cps, prev, nil
}

// checkRoot checks c's root against sp's log as replayed so far (its
// length is c.Size).
func checkRoot(sp *space, c Checkpoint) error {
	if got := rootOf(sp.tree.End(), func() ([]byte, error) { return sp.tree.GetRootHash(nil) }); got != c.Root {
		return fmt.Errorf("%w: %s: checkpoint of size %d has root %s, the log's is %s", ErrCheckpointMismatch, sp.name, c.Size, c.Root, got)
	}
	return nil
}
