package replica

// This file is checkpoint witnessing (30k D45's co-signed checkpoints): a
// node B that verified node A's checkpoint of a session — its signature,
// and its consistency with every earlier checkpoint of A that B verified
// (node.HTTPPeer's check, S10) — co-signs it with its own node key. The
// cosignature means "I, B, saw this checkpoint of A, and it extends every
// earlier one of A I saw": it is a witness's cosignature in the manner of
// C2SP's tlog-witness, not a second log (B's log orders its entries
// differently and says nothing about A's tree). A keeps the latest
// cosignature of each witness per session, in memory only, after checking
// that it is over a checkpoint A itself signed; its extracts carry them.

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/witan-dev/witan/dag"
)

// DomainWitness prefixes a checkpoint's signing bytes (the JCS of the
// checkpoint without "sig", SigningBytes) when a witness co-signs it
// (docs/wire-format.md).
const DomainWitness = "oth/0.10-witness\n"

// MaxWitnesses bounds the witnesses whose cosignatures a node keeps per
// session; a cosignature from one more witness is refused.
const MaxWitnesses = 32

// Cosignature is a witness's signature over a checkpoint of another node:
// {"witness":"ed25519:…","sig":"<base64url>"} over
// DomainWitness + checkpoint.SigningBytes().
type Cosignature struct {
	Witness dag.Key `json:"witness"`
	Sig     string  `json:"sig"`
}

// Cosign returns this node's cosignature of c, a checkpoint of another
// node that the caller has verified (signature and consistency).
func (r *Replica) Cosign(c Checkpoint) (Cosignature, error) {
	msg, err := c.SigningBytes()
	if err != nil {
		return Cosignature{}, err
	}
	return Cosignature{Witness: r.key.Key(), Sig: b64(r.key.Sign(DomainWitness, msg))}, nil
}

// Verify checks that cs is a valid cosignature of c.
func (cs Cosignature) Verify(c Checkpoint) error {
	msg, err := c.SigningBytes()
	if err != nil {
		return err
	}
	sig, err := b64d(cs.Sig)
	if err != nil || !dag.Verify(cs.Witness, DomainWitness, msg, sig) {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: fmt.Sprintf("cosignature by %s does not verify", cs.Witness)}
	}
	return nil
}

// witnessed holds the cosignatures this node received, per session and
// witness key: the latest (largest checkpoint size) of each.
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

// AddCosignature keeps a witness's cosignature of one of this node's
// checkpoints, after checking that the checkpoint is exactly one this
// node signed (its node key, session, size, root, ts and signature) and
// that the cosignature verifies. A witness's cosignature replaces its
// earlier one of the session unless that one is of a larger checkpoint.
// A witness cannot co-sign its own checkpoints (the node's key).
func (r *Replica) AddCosignature(c Checkpoint, cs Cosignature) error {
	if c.Node != r.key.Key() || c.Legacy || c.Space == RefusalSpace {
		return fmt.Errorf("%w: signed by %s", ErrNotOurCheckpoint, c.Node)
	}
	if cs.Witness == r.key.Key() {
		return &dag.ProtocolError{Code: dag.CodeSchema, Detail: "a node does not witness its own checkpoints"}
	}
	ours := false
	for _, o := range r.Checkpoints(c.Space) {
		if sameCheckpoint(o, c) {
			ours = true
			break
		}
	}
	if !ours {
		return fmt.Errorf("%w: session %s, size %d, root %s", ErrNotOurCheckpoint, c.Space, c.Size, c.Root)
	}
	if err := cs.Verify(c); err != nil {
		return err
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
	old, had := per[cs.Witness]
	if !had && len(per) >= MaxWitnesses {
		return &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("this node keeps the cosignatures of at most %d witnesses per session", MaxWitnesses)}
	}
	if had && old.cp.Size > c.Size {
		return nil
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

// CosignedCheckpoints returns this node's checkpoints of space that hold
// at least one cosignature, largest first.
func (r *Replica) CosignedCheckpoints(space string) []Checkpoint {
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
