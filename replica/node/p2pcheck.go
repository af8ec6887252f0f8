package node

// This file holds libp2p peers to their history, as httppeer.go holds
// HTTP peers: after each pull of a session from a peer over
// /witan/sync/2 (the node's automatic pulls, through sync.Config.AfterPull,
// and Connect's), the node asks the peer for its latest checkpoint with
// the consistency proof from the size it last verified of that peer
// (sync's /witan/checkpoint/1), runs the one check of peercheck.go
// (fork_detected when the peer rewrote its history: logged as an error,
// and in Connect's SyncResult), and sends back its cosignature of a
// checkpoint that holds; and the same every Options.WitnessEvery for the
// sessions its connected peers announce, since a peer's checkpoint of
// entries already pulled brings no pull. The other side is the node as a
// sync.CheckpointServer: it serves its own latest checkpoint and proof,
// and keeps its peers' cosignatures (replica.AddCosignature, the same as
// POST /witness, and Options.Witnesses as httpapi's). What it verified
// of each peer is in memory, for at most maxCheckedPeers peers, and kept
// durably (peerrecords.go), from where a peer forgotten is read again.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/sync"
)

// Codes of a cosignature refused over libp2p, as httpapi's POST /witness
// answers them.
const (
	CodeUnknownCheckpoint dag.Code = "witan:unknown_checkpoint"
	CodeForbidden         dag.Code = "witan:forbidden"
)

// maxCheckedPeers bounds the libp2p peers whose verified checkpoints the
// node remembers; past it the one checked least recently is forgotten
// (its next check is first_seen again).
const maxCheckedPeers = 1024

var _ sync.CheckpointServer = (*Node)(nil)

// CheckpointOf implements sync.CheckpointServer: the node's latest
// checkpoint of session space and, when 0 < from < its size, the
// consistency proof from from (nothing when the proof cannot be made:
// the peer then finds none, which is its fork_detected to report).
func (n *Node) CheckpointOf(ctx context.Context, space string, from uint64) ([]byte, []byte, error) {
	session, err := dag.ParseID(space)
	if err != nil {
		return nil, nil, &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("%q is not a session id", space)}
	}
	cp, ok := n.rep.LastCheckpoint(session)
	if !ok {
		return nil, nil, nil
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return nil, nil, err
	}
	if from == 0 || from >= cp.Size {
		return b, nil, nil
	}
	pr, err := n.rep.ConsistencyProof(ctx, session, from, cp.Size)
	if err != nil {
		return b, nil, nil
	}
	proof, err := json.Marshal(pr)
	if err != nil {
		return nil, nil, err
	}
	return b, proof, nil
}

// KeepCosignature implements sync.CheckpointServer: a peer's cosignature
// of one of this node's checkpoints, kept as POST /witness keeps it.
func (n *Node) KeepCosignature(ctx context.Context, _, space string, checkpoint, cosignature []byte) error {
	cp, err := replica.DecodeCheckpoint(checkpoint)
	if err != nil {
		return &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("checkpoint: %v", err)}
	}
	if cp.Space != space {
		return &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("the checkpoint is of session %q, not %s", cp.Space, space)}
	}
	var cs replica.Cosignature
	d := json.NewDecoder(bytes.NewReader(cosignature))
	d.DisallowUnknownFields()
	if err := d.Decode(&cs); err != nil || !cs.Witness.Valid() {
		return &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("cosignature: %v", err)}
	}
	if len(n.witnesses) > 0 && !slices.Contains(n.witnesses, cs.Witness) {
		return &dag.ProtocolError{Code: CodeForbidden, Detail: fmt.Sprintf("%s is not a witness this node keeps cosignatures of", cs.Witness)}
	}
	if err := n.rep.AddCosignature(ctx, cp, cs); err != nil {
		if errors.Is(err, replica.ErrNotOurCheckpoint) {
			return &dag.ProtocolError{Code: CodeUnknownCheckpoint, Detail: err.Error()}
		}
		return err
	}
	return nil
}

// p2pSource reads a libp2p peer's checkpoints over /witan/checkpoint/1.
type p2pSource struct {
	sn *sync.Node
	p  peer.ID
	// proof is the consistency proof the last checkpoint answer carried.
	proof []byte
}

func (s *p2pSource) String() string { return s.p.String() }

func (s *p2pSource) checkpoint(ctx context.Context, space string, from uint64) ([]byte, error) {
	cp, proof, err := s.sn.PeerCheckpoint(ctx, s.p, space, from)
	switch {
	case errors.Is(err, sync.ErrNoCheckpoints):
		return nil, fmt.Errorf("%w: %w", errNoCheckpoint, err)
	case err != nil:
		return nil, err
	case cp == nil:
		return nil, errNoCheckpoint
	}
	s.proof = proof
	return cp, nil
}

func (s *p2pSource) consistency(_ context.Context, _ string, from, to uint64) (replica.ConsistencyProof, error) {
	var pr replica.ConsistencyProof
	if s.proof == nil {
		return pr, errors.New("the peer's answer carries none")
	}
	d := json.NewDecoder(bytes.NewReader(s.proof))
	d.DisallowUnknownFields()
	if err := d.Decode(&pr); err != nil {
		return pr, fmt.Errorf("the peer's proof %d..%d: %w", from, to, err)
	}
	return pr, nil
}

func (s *p2pSource) cosign(ctx context.Context, space string, c replica.Checkpoint, cs replica.Cosignature) error {
	cb, err := json.Marshal(c)
	if err != nil {
		return err
	}
	sb, err := json.Marshal(cs)
	if err != nil {
		return err
	}
	return s.sn.SendCosignature(ctx, s.p, space, cb, sb)
}

// p2pChecks is what the node verified of its libp2p peers' checkpoints.
type p2pChecks struct {
	mu    gosync.Mutex
	peers map[peer.ID]*p2pChecked
	tick  uint64
}

type p2pChecked struct {
	mu   gosync.Mutex // serialises the checks of one peer
	pc   peerCheckpoints
	used uint64
	// pace is the witness round's pace per session of the peer; under mu.
	pace map[string]*witnessPace
}

// witnessPace spaces out the witness round's checks of one peer's
// checkpoint of one session. A peer signs a new checkpoint only after
// its log grew, and its announcements show that: while the heads it
// announces stay the same, each round that checks doubles the rounds
// skipped before the next check, up to maxWitnessSkip. New heads check
// at the next round again. An idle class of 30 laptops otherwise asks
// each of its 29 peers every round, which is most of its idle traffic.
type witnessPace struct {
	heads      [32]byte // digest of the peer's announced heads at the last check
	skip, wait int      // rounds to skip after a check, and left to skip
}

// maxWitnessSkip bounds the rounds the witness round skips a peer whose
// heads stay the same: a checkpoint it signs later is co-signed within
// maxWitnessSkip+1 rounds (3 minutes at DefaultWitnessEvery).
const maxWitnessSkip = 17

// due reports whether the witness round checks the peer's checkpoint of
// space now, the peer announcing heads.
func (x *p2pChecked) due(space string, heads []dag.ID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := sha256.New()
	for _, id := range heads {
		d := id.Digest()
		h.Write(d[:])
	}
	var d [32]byte
	h.Sum(d[:0])
	if x.pace == nil {
		x.pace = map[string]*witnessPace{}
	}
	ps := x.pace[space]
	if ps == nil || ps.heads != d {
		x.pace[space] = &witnessPace{heads: d}
		return true
	}
	if ps.wait > 0 {
		ps.wait--
		return false
	}
	ps.skip = min(max(1, 2*ps.skip), maxWitnessSkip)
	ps.wait = ps.skip
	return true
}

func (c *p2pChecks) get(p peer.ID) *p2pChecked {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peers == nil {
		c.peers = map[peer.ID]*p2pChecked{}
	}
	c.tick++
	x := c.peers[p]
	if x == nil {
		if len(c.peers) >= maxCheckedPeers {
			dropLeastUsed(c.peers, func(y *p2pChecked) uint64 { return y.used })
		}
		x = &p2pChecked{pc: newPeerCheckpoints()}
		c.peers[p] = x
	}
	x.used = c.tick
	return x
}

// checkPeer checks peer p's checkpoint of session space after a pull
// over libp2p, and co-signs one that holds. A memory space has no
// checkpoints: nothing is checked.
func (n *Node) checkPeer(ctx context.Context, sn *sync.Node, p peer.ID, space string) (PeerCheck, error) {
	if strings.HasPrefix(space, MemoryPrefix) {
		return PeerCheck{}, nil
	}
	x := n.checked.get(p)
	x.mu.Lock()
	defer x.mu.Unlock()
	return n.checkAndWitness(ctx, &p2pSource{sn: sn, p: p}, &x.pc, space)
}

// afterPull is sync.Config.AfterPull: the check of an automatic pull,
// whose findings only the log can tell.
func (n *Node) afterPull(ctx context.Context, p peer.ID, space string) {
	sn := n.Sync()
	if sn == nil {
		return
	}
	n.checkAndLog(ctx, sn, p, space)
}

// checkAndLog checks p's checkpoint of space and logs what only the log
// can tell: a fork, a check that failed, a cosignature sent or refused.
func (n *Node) checkAndLog(ctx context.Context, sn *sync.Node, p peer.ID, space string) {
	r, err := n.checkPeer(ctx, sn, p, space)
	switch {
	case errors.Is(err, ErrForkDetected):
		// Evidence against the peer's operator (S10), as for -peer-http.
		n.log.Error("libp2p peer rewrote its history", "peer", p, "session", space, "code", CodeForkDetected, "err", err)
	case err != nil && ctx.Err() == nil:
		n.log.Warn("libp2p peer checkpoint check failed", "peer", p, "session", space, "err", err)
	case r.Witness == "sent":
		n.log.Info("libp2p peer checkpoint co-signed", "peer", p, "session", space)
	case strings.HasPrefix(r.Witness, "not_kept"):
		n.log.Debug("libp2p peer did not keep our cosignature", "peer", p, "session", space, "why", r.Witness)
	}
}

// startWitnessLoop checks, every period spread by up to a quarter either
// way, the checkpoint of each joined session of each connected peer that
// announces it, as after a pull: a peer signs a checkpoint of entries
// this node already holds, and no announcement then leads to a pull (its
// heads did not move), so without it a witness would co-sign a peer's
// checkpoint only when the peer next wrote something. It returns the
// function that stops the loop and waits for it.
func (n *Node) startWitnessLoop(sn *sync.Node, period time.Duration) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			t := time.NewTimer(period + time.Duration(rand.Int64N(int64(period)/2+1)) - period/4)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			n.witnessRound(ctx, sn)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// witnessRound checks once the checkpoint of every joined session of every
// connected peer that announces it, when it is due (witnessPace). Memory
// spaces have none.
func (n *Node) witnessRound(ctx context.Context, sn *sync.Node) {
	for _, o := range sn.Available() {
		if !o.Joined || strings.HasPrefix(o.Space, MemoryPrefix) {
			continue
		}
		for _, p := range o.Peers {
			if ctx.Err() != nil {
				return
			}
			if !n.checked.get(p).due(o.Space, sn.Engine().Announced(p.String(), o.Space)) {
				continue
			}
			n.checkAndLog(ctx, sn, p, o.Space)
		}
	}
}
