package node

// This file keeps, durably, what the node found of its peers'
// checkpoints (30k S10), in two node-local spaces of its store (never
// synced, never offered to peers: replica.IsLocalSpace):
//
//	witan-local/peer-checkpoints  per peer and session, the last checkpoint
//	                              of the peer this node verified
//	witan-local/forks             the forks it detected, with both
//	                              checkpoints as evidence
//
// Verified checkpoints: a record is written only when a check moves the
// reference forward (first_seen, or consistent at a larger size), and
// read back at Open, the latest per peer and session, so a restarted node
// holds a peer to what it verified before the restart and catches a
// history rewritten while it was down. A peer is named as the check names
// it: its URL for an HTTP peer, its libp2p peer id otherwise. Bounds: at
// most maxCheckedPeers peers are held (oldest written first out; an
// evicted peer's next check is first_seen again), and the store is
// append-only, so the space takes at most maxVerifiedRecords records
// (past it the log says so once, a reference already held moves in memory
// only, and a new peer or session is not held: its checks are first_seen).
//
// Forks: each fork detected (peer, session, what does not hold, the
// checkpoint verified before and the one that contradicts it, both with
// their signatures) is one record, written once (the same pair again
// writes nothing), at most maxForksPerPeer per peer and maxForks in all;
// past them forks are still reported and logged, but not kept. Forks
// lists them (GET /oth/v0/forks).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
)

// The node-local spaces of this file.
const (
	PeerCheckpointSpace = replica.LocalPrefix + "peer-checkpoints"
	ForkSpace           = replica.LocalPrefix + "forks"
)

// Bounds of the records of this file.
const (
	maxVerifiedRecords = 1 << 16
	MaxForks           = 1024
	MaxForksPerPeer    = 8
	maxForkDetail      = 512
)

// verifiedRecord is one entry of witan-local/peer-checkpoints.
type verifiedRecord struct {
	Checkpoint json.RawMessage `json:"checkpoint"`
	Peer       string          `json:"peer"`
	Session    string          `json:"session"`
}

// Fork is one fork detected: a peer's checkpoint of a session that does
// not extend the last one of the peer this node verified.
type Fork struct {
	// Index is the fork's place in the node's record, from 0.
	Index   uint64 `json:"index"`
	Peer    string `json:"peer"`
	Session string `json:"session"`
	Detail  string `json:"detail"`
	// Verified is the peer's checkpoint this node verified before;
	// Claimed, signed too, contradicts it.
	Verified json.RawMessage `json:"verified"`
	Claimed  json.RawMessage `json:"claimed"`
}

type forkRecord struct {
	Claimed  json.RawMessage `json:"claimed"`
	Detail   string          `json:"detail"`
	Peer     string          `json:"peer"`
	Session  string          `json:"session"`
	Verified json.RawMessage `json:"verified"`
}

// peerRecords is the node's durable record of its peers' checkpoints.
type peerRecords struct {
	mu       gosync.Mutex
	verified map[string]*verifiedPeer
	tick     uint64
	written  int  // records in witan-local/peer-checkpoints
	warned   bool // the full space was logged
	forks    []Fork
	perPeer  map[string]int
	seenFork map[string]bool
}

type verifiedPeer struct {
	cps  map[string]replica.Checkpoint
	used uint64
}

func (pr *peerRecords) init() {
	if pr.verified == nil {
		pr.verified, pr.perPeer, pr.seenFork = map[string]*verifiedPeer{}, map[string]int{}, map[string]bool{}
	}
}

// evict drops the peers written least recently past maxCheckedPeers.
func (pr *peerRecords) evict() {
	for len(pr.verified) > maxCheckedPeers {
		dropLeastUsed(pr.verified, func(v *verifiedPeer) uint64 { return v.used })
	}
}

// dropLeastUsed deletes from m the value whose used tick is lowest.
func dropLeastUsed[K comparable, V any](m map[K]V, used func(V) uint64) {
	var oldest K
	var at uint64
	found := false
	for k, v := range m {
		if u := used(v); !found || u < at {
			oldest, at, found = k, u, true
		}
	}
	if found {
		delete(m, oldest)
	}
}

func (pr *peerRecords) set(peer string, cp replica.Checkpoint) {
	v := pr.verified[peer]
	if v == nil {
		v = &verifiedPeer{cps: map[string]replica.Checkpoint{}}
		pr.verified[peer] = v
	}
	pr.tick++
	v.used = pr.tick
	v.cps[cp.Space] = cp
	pr.evict()
}

func forkKey(peer, session string, verified, claimed json.RawMessage) string {
	return peer + "\x00" + session + "\x00" + string(verified) + "\x00" + string(claimed)
}

// loadPeerRecords reads both spaces back at Open.
func (n *Node) loadPeerRecords(ctx context.Context) error {
	pr := &n.peerRec
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.init()
	err := eachLocal(ctx, n.store, PeerCheckpointSpace, func(e dag.Entry) error {
		var rec verifiedRecord
		if err := strictRecord(e.Data, &rec); err != nil {
			return err
		}
		cp, err := replica.DecodeCheckpoint(rec.Checkpoint)
		if err != nil {
			return err
		}
		if cp.Space != rec.Session && !(cp.Legacy && cp.Space == "") {
			return fmt.Errorf("the checkpoint is of session %q, not %s", cp.Space, rec.Session)
		}
		cp.Space = rec.Session
		pr.written++
		if old, ok := pr.verified[rec.Peer]; !ok || old.cps[rec.Session].Size <= cp.Size {
			pr.set(rec.Peer, cp)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("node: %s: %w", PeerCheckpointSpace, err)
	}
	err = eachLocal(ctx, n.store, ForkSpace, func(e dag.Entry) error {
		var rec forkRecord
		if err := strictRecord(e.Data, &rec); err != nil {
			return err
		}
		pr.addFork(rec)
		return nil
	})
	if err != nil {
		return fmt.Errorf("node: %s: %w", ForkSpace, err)
	}
	return nil
}

func (pr *peerRecords) addFork(rec forkRecord) {
	pr.seenFork[forkKey(rec.Peer, rec.Session, rec.Verified, rec.Claimed)] = true
	pr.perPeer[rec.Peer]++
	pr.forks = append(pr.forks, Fork{Index: uint64(len(pr.forks)), Peer: rec.Peer, Session: rec.Session, Detail: rec.Detail, Verified: rec.Verified, Claimed: rec.Claimed})
}

// eachLocal calls f on each entry of the node-local space in log order.
func eachLocal(ctx context.Context, st dag.Store, space string, f func(dag.Entry) error) error {
	es, err := dag.ReadLog(ctx, st, space, 0, 0)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := f(e); err != nil {
			return fmt.Errorf("record %s: %w", e.ID, err)
		}
	}
	return nil
}

// strictRecord decodes a record, refusing unknown members and trailing
// data.
func strictRecord(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func putLocal(ctx context.Context, st dag.Store, space string, rec any) error {
	b, err := dag.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = st.Put(ctx, dag.Batch{Entries: []dag.Entry{{ID: dag.Sum(b), Space: space, Data: b}}})
	return err
}

// verifiedOf returns the checkpoint of session last verified of peer and
// kept, if any.
func (n *Node) verifiedOf(peer, session string) (replica.Checkpoint, bool) {
	pr := &n.peerRec
	pr.mu.Lock()
	defer pr.mu.Unlock()
	v, ok := pr.verified[peer]
	if !ok {
		return replica.Checkpoint{}, false
	}
	cp, ok := v.cps[session]
	return cp, ok
}

// keepVerified records cp, of session, as the last checkpoint of peer
// this node verified, durably when it moves the kept one forward.
func (n *Node) keepVerified(ctx context.Context, peer, session string, cp replica.Checkpoint) error {
	pr := &n.peerRec
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.init()
	if v, ok := pr.verified[peer]; ok {
		if old, ok := v.cps[session]; ok && old.Size >= cp.Size && old.Node == cp.Node {
			return nil
		}
	}
	cp.Space = session
	if pr.written >= maxVerifiedRecords {
		if !pr.warned {
			pr.warned = true
			n.log.Warn("node: the record of peers' checkpoints is full; what is verified now is kept in memory only", "space", PeerCheckpointSpace, "records", pr.written)
		}
		if v, ok := pr.verified[peer]; ok {
			if _, ok := v.cps[session]; ok {
				pr.set(peer, cp) // held already: memory does not grow
			}
		}
		return nil
	}
	raw, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	if err := putLocal(ctx, n.store, PeerCheckpointSpace, verifiedRecord{Checkpoint: raw, Peer: peer, Session: session}); err != nil {
		return fmt.Errorf("node: keep peer %s's checkpoint: %w", peer, err)
	}
	pr.written++
	pr.set(peer, cp)
	return nil
}

// keepFork records a fork, once, within the bounds.
func (n *Node) keepFork(ctx context.Context, peer, session, detail string, verified, claimed replica.Checkpoint) error {
	vb, err := json.Marshal(verified)
	if err != nil {
		return err
	}
	cb, err := json.Marshal(claimed)
	if err != nil {
		return err
	}
	if len(detail) > maxForkDetail {
		detail = detail[:maxForkDetail]
	}
	rec := forkRecord{Claimed: cb, Detail: detail, Peer: peer, Session: session, Verified: vb}
	pr := &n.peerRec
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.init()
	if pr.seenFork[forkKey(peer, session, vb, cb)] || len(pr.forks) >= MaxForks || pr.perPeer[peer] >= MaxForksPerPeer {
		return nil
	}
	if err := putLocal(ctx, n.store, ForkSpace, rec); err != nil {
		return fmt.Errorf("node: keep fork of peer %s: %w", peer, err)
	}
	pr.addFork(rec)
	return nil
}

// Forks returns the forks the node detected and kept, from index after
// (0-based), at most limit of them (limit ≤ 0: all), and how many it
// holds, and whether it keeps no more (MaxForks reached).
func (n *Node) Forks(after uint64, limit int) ([]Fork, uint64, bool) {
	pr := &n.peerRec
	pr.mu.Lock()
	defer pr.mu.Unlock()
	size := uint64(len(pr.forks))
	if after >= size {
		return []Fork{}, size, size >= MaxForks
	}
	out := pr.forks[after:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return append([]Fork(nil), out...), size, size >= MaxForks
}
