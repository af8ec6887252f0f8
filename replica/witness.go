package replica

// This file is checkpoint witnessing (30k D45's co-signed checkpoints): a
// node B that verified node A's checkpoint of a session — its signature,
// and its consistency with every earlier checkpoint of A that B verified
// (replica/node's peer check, S10, over HTTP or libp2p) — co-signs it
// with its own node key. The cosignature means "I, B, saw this checkpoint
// of A, and it extends every earlier one of A I saw": it is a witness's
// cosignature in the manner of C2SP's tlog-witness, not a second log (B's
// log orders its entries differently and says nothing about A's tree). A
// keeps the latest cosignature of each witness per session, after
// checking that it is over a checkpoint A itself signed; its extracts
// carry them.
//
// Kept durably: each cosignature A keeps is one root entry of the
// node-local space witan-local/witness/<session> (never synced), written
// before AddCosignature returns, and read back (each checked again
// against the session's stored checkpoints and the witness's key) when
// the session is loaded, so extracts carry them after a restart.
// Bounded: a witness's record is written only when it moves that
// witness's kept checkpoint forward (a larger size, or the same size
// signed later); the same checkpoint co-signed again, with whatever
// signature, writes nothing. So the space holds at most MaxWitnesses
// records per checkpoint A signed of the session, whatever witnesses
// send.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/checkpoint"
)

// DomainWitness prefixes a checkpoint's signing bytes when a witness
// co-signs it (checkpoint.DomainWitness).
const DomainWitness = checkpoint.DomainWitness

// MaxWitnesses bounds the witnesses whose cosignatures a node keeps per
// session; a cosignature from one more witness is refused.
const MaxWitnesses = 32

// Cosignature is a witness's signature over a checkpoint of another node
// (checkpoint.Cosignature).
type Cosignature = checkpoint.Cosignature

// Cosign returns this node's cosignature of c, a checkpoint of another
// node that the caller has verified (signature and consistency).
func (r *Replica) Cosign(c Checkpoint) (Cosignature, error) {
	msg, err := c.SigningBytes()
	if err != nil {
		return Cosignature{}, err
	}
	return Cosignature{Witness: r.key.Key(), Sig: b64(r.key.Sign(DomainWitness, msg))}, nil
}

// witnessed holds the cosignatures this node keeps, per session and
// witness key: the latest (largest checkpoint size, then latest time) of
// each. mu is held across a record's write to the store, so the store and
// the map move together.
type witnessed struct {
	mu sync.Mutex
	m  map[string]map[dag.Key]witnessedCosig
}

type witnessedCosig struct {
	cp Checkpoint
	cs Cosignature
}

// ErrNotOurCheckpoint: a cosignature was sent for a checkpoint this node
// did not sign.
var ErrNotOurCheckpoint = errors.New("replica: the cosigned checkpoint is not one this node signed")

// witnessSpace is the node-local space of the cosignatures kept of
// session's checkpoints.
func witnessSpace(session string) string { return LocalPrefix + "witness/" + session }

// witnessRecord is one entry of witan-local/witness/<session>: the
// checkpoint (its members and signature, "cp_sig") and the cosignature.
type witnessRecord struct {
	CpSig   string  `json:"cp_sig"`
	Node    dag.Key `json:"node"`
	Root    dag.ID  `json:"root"`
	Session string  `json:"session"`
	Sig     string  `json:"sig"`
	Size    uint64  `json:"size"`
	TS      string  `json:"ts"`
	Witness dag.Key `json:"witness"`
}

func witnessEntry(c Checkpoint, cs Cosignature) (dag.Entry, error) {
	ts := c.TS.UTC().Format(time.RFC3339Nano) // the wire form's ts
	b, err := dag.Marshal(witnessRecord{CpSig: b64(c.Sig), Node: c.Node, Root: c.Root, Session: c.Space, Sig: cs.Sig, Size: c.Size, TS: ts, Witness: cs.Witness})
	if err != nil {
		return dag.Entry{}, err
	}
	return dag.Entry{ID: dag.Sum(b), Space: witnessSpace(c.Space), Data: b}, nil
}

func decodeWitness(session string, e dag.Entry) (Checkpoint, Cosignature, error) {
	var rec witnessRecord
	if err := strictJSON(e.Data, &rec); err != nil {
		return Checkpoint{}, Cosignature{}, fmt.Errorf("%w: cosignature %s: %w", errLocalRecord, e.ID, err)
	}
	if rec.Session != session {
		return Checkpoint{}, Cosignature{}, fmt.Errorf("%w: cosignature %s names session %s", errLocalRecord, e.ID, rec.Session)
	}
	ts, err := time.Parse(time.RFC3339Nano, rec.TS)
	if err != nil {
		return Checkpoint{}, Cosignature{}, fmt.Errorf("%w: cosignature %s: %w", errLocalRecord, e.ID, err)
	}
	sig, err := b64d(rec.CpSig)
	if err != nil {
		return Checkpoint{}, Cosignature{}, fmt.Errorf("%w: cosignature %s: %w", errLocalRecord, e.ID, err)
	}
	c := Checkpoint{Space: session, Size: rec.Size, Root: rec.Root, TS: ts.UTC(), Node: rec.Node, Sig: sig}
	return c, Cosignature{Witness: rec.Witness, Sig: rec.Sig}, nil
}

// laterCheckpoint reports whether a comes after b in a node's chain of
// checkpoints of one session (larger, or as large and signed later).
func laterCheckpoint(a, b Checkpoint) bool {
	return a.Size > b.Size || a.Size == b.Size && a.TS.After(b.TS)
}

// keep decides what cs of c does to per (one session's kept
// cosignatures): whether it is to be kept, or refused for want of room.
func keep(per map[dag.Key]witnessedCosig, c Checkpoint, cs Cosignature) (bool, error) {
	old, had := per[cs.Witness]
	if !had && len(per) >= MaxWitnesses {
		return false, &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("this node keeps the cosignatures of at most %d witnesses per session", MaxWitnesses)}
	}
	return !had || laterCheckpoint(c, old.cp), nil
}

// loadWitnessed reads the cosignatures kept of sp's checkpoints back from
// the store, each checked again: over a checkpoint of sp's chain, by a
// witness other than this node, and verifying. A record that does not is
// ErrCheckpointMismatch: the store was changed under the replica.
func (r *Replica) loadWitnessed(ctx context.Context, sp *space) error {
	es, err := localLog(ctx, r.store, witnessSpace(sp.name))
	if err != nil {
		return err
	}
	per := map[dag.Key]witnessedCosig{}
	for _, e := range es {
		c, cs, err := decodeWitness(sp.name, e)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(sp.cps, func(o Checkpoint) bool { return sameCheckpoint(o, c) }) || cs.Witness == r.key.Key() {
			return fmt.Errorf("%w: %s: cosignature %s is not of one of this node's checkpoints", ErrCheckpointMismatch, sp.name, e.ID)
		}
		if err := cs.Verify(c); err != nil {
			return fmt.Errorf("%w: %s: cosignature %s: %w", ErrCheckpointMismatch, sp.name, e.ID, err)
		}
		if ok, err := keep(per, c, cs); err != nil {
			return fmt.Errorf("%w: %s: cosignature %s: %w", ErrCheckpointMismatch, sp.name, e.ID, err)
		} else if ok {
			per[cs.Witness] = witnessedCosig{cp: c, cs: cs}
		}
	}
	w := &r.witnessed
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]map[dag.Key]witnessedCosig{}
	}
	w.m[sp.name] = per
	return nil
}

// AddCosignature keeps a witness's cosignature of one of this node's
// checkpoints, durably, after checking that the checkpoint is exactly one
// this node signed (its node key, session, size, root, ts and signature)
// and that the cosignature verifies. A witness's cosignature replaces its
// earlier one of the session when it is of a later checkpoint (larger,
// or as large and signed later); otherwise it changes nothing and is not
// written (nil). A witness cannot co-sign its own checkpoints (the
// node's key).
func (r *Replica) AddCosignature(ctx context.Context, c Checkpoint, cs Cosignature) error {
	if c.Node != r.key.Key() || c.Legacy || c.Space == RefusalSpace {
		return fmt.Errorf("%w: signed by %s", ErrNotOurCheckpoint, c.Node)
	}
	if cs.Witness == r.key.Key() {
		return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "a node does not witness its own checkpoints"}
	}
	if !slices.ContainsFunc(r.checkpoints(c.Space), func(o Checkpoint) bool { return sameCheckpoint(o, c) }) {
		return fmt.Errorf("%w: session %s, size %d, root %s", ErrNotOurCheckpoint, c.Space, c.Size, c.Root)
	}
	if err := cs.Verify(c); err != nil {
		return err
	}
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	w := &r.witnessed
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]map[dag.Key]witnessedCosig{}
	}
	per := w.m[c.Space]
	if per == nil {
		per = map[dag.Key]witnessedCosig{}
		w.m[c.Space] = per
	}
	if ok, err := keep(per, c, cs); err != nil || !ok {
		return err
	}
	e, err := witnessEntry(c, cs)
	if err != nil {
		return err
	}
	if _, err := r.put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		return fmt.Errorf("replica: store cosignature: %w", err)
	}
	per[cs.Witness] = witnessedCosig{cp: c, cs: cs}
	return nil
}

// Cosignatures returns the cosignatures this node holds of its
// checkpoint c (the very one: size, root, ts and signature), sorted by
// witness key.
func (r *Replica) Cosignatures(c Checkpoint) []Cosignature {
	w := &r.witnessed
	w.mu.Lock()
	defer w.mu.Unlock()
	out := []Cosignature{}
	for _, x := range w.m[c.Space] {
		if sameCheckpoint(x.cp, c) {
			out = append(out, x.cs)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Witness.String() < out[j].Witness.String() })
	return out
}

// CosignedCheckpoints returns this node's checkpoints of session that hold
// at least one cosignature, largest first.
func (r *Replica) CosignedCheckpoints(session dag.ID) []Checkpoint {
	space := session.String()
	w := &r.witnessed
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Checkpoint
	for _, x := range w.m[space] {
		if !slices.ContainsFunc(out, func(c Checkpoint) bool { return sameCheckpoint(c, x.cp) }) {
			out = append(out, x.cp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Size != out[j].Size {
			return out[i].Size > out[j].Size
		}
		return out[i].TS.After(out[j].TS)
	})
	return out
}

func sameCheckpoint(a, b Checkpoint) bool {
	return a.Space == b.Space && a.Size == b.Size && a.Root == b.Root && a.TS.Equal(b.TS) && a.Node == b.Node && string(a.Sig) == string(b.Sig)
}
