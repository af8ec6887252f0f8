package replica

// This file is the node's refusal log (30k §5 and D40): every rejection
// this node signs for a submission that is well-formed and correctly
// signed is appended to an append-only log of records
// {index, session, envelope, type, author, code, checkpoint_size} — the
// envelope by its hash only: the submitter holds the envelope and can
// present it — with an RFC 9162 root over the records' canonical JSON and
// a signed checkpoint of its own. The receipt of the rejection carries the
// record's refusal_index, so a node cannot later deny a refusal without
// its log failing a consistency or inclusion proof.
//
// The log is the node's, never synced: its records are entries of the
// node-local space witan-local/refusals (IsLocalSpace), each the child of
// the one before, written in the same call that signs the receipt, before
// the receipt is returned; Open reads them back.
//
// Bounded: schema and bad_signature rejections are not logged (D40 allows
// it, and they are what a stranger can send at no cost), nor rate_limited
// ones (answered at the door before the node signs anything), and the log
// holds at most Options.MaxRefusals records. Once it is full the node
// still refuses with a signed receipt, but with refusal_index null, and
// the capability document says the log is full; the log is append-only,
// so nothing in it is ever evicted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/checkpoint"
	"github.com/witan-dev/witan/replica/mlog"
)

// DomainRefusalCheckpoint prefixes the JCS of a refusal-log checkpoint
// without "sig" when it is signed, so that it can never be taken for a
// checkpoint of a session's log (docs/deviations.md).
const DomainRefusalCheckpoint = "oth/0.10-refusal-checkpoint\n"

// RefusalSpace is the node-local space of the refusal log.
const RefusalSpace = checkpoint.RefusalSpace // LocalPrefix + "refusals"

// DefaultMaxRefusals is Options.MaxRefusals's default.
const DefaultMaxRefusals = 1 << 20

// RefusalRecord is one record of the refusal log.
type RefusalRecord struct {
	Index          uint64   `json:"index"`
	Session        string   `json:"session"`
	Envelope       dag.ID   `json:"envelope"`
	Type           string   `json:"type"`
	Author         dag.Key  `json:"author"`
	Code           dag.Code `json:"code"`
	CheckpointSize uint64   `json:"checkpoint_size"`
}

// LeafHash returns the record's RFC 9162 leaf hash: of its canonical JSON.
func (f RefusalRecord) LeafHash() ([]byte, error) {
	b, err := dag.Marshal(f)
	if err != nil {
		return nil, err
	}
	return mlog.LeafHash(b), nil
}

// RefusalCheckpoint is a signed head of the refusal log, signed under
// DomainRefusalCheckpoint.
type RefusalCheckpoint struct{ Checkpoint }

// Verify checks the checkpoint's signature by its node key.
func (c RefusalCheckpoint) Verify() error {
	msg, err := c.SigningBytes()
	if err != nil {
		return err
	}
	if !dag.Verify(c.Node, DomainRefusalCheckpoint, msg, c.Sig) {
		return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "refusal checkpoint signature does not verify"}
	}
	return nil
}

// refusalLog is the refusal log in memory: its records' leaf hashes and
// the proof index over them.
type refusalLog struct {
	max    int
	recs   []RefusalRecord
	leaves [][]byte
	tree   *mlog.Tree
	head   dag.ID // id of the last record's entry
	lastTS time.Time
}

func newRefusalLog(max int) *refusalLog {
	l := &refusalLog{max: max}
	l.tree = mlog.New(func(i uint64) []byte { return l.leaves[i] }, 0)
	return l
}

// loggable reports whether a rejection with code c goes to the log.
func loggable(c dag.Code) bool {
	return c != "" && c != dag.CodeSchema && c != dag.CodeBadSignature && c != dag.CodeRateLimited
}

// loadRefusals reads the refusal log back from the store.
func (r *Replica) loadRefusals(ctx context.Context, max int) error {
	l := newRefusalLog(max)
	es, err := localLog(ctx, r.store, RefusalSpace)
	if err != nil {
		return err
	}
	var prev dag.ID
	for i, e := range es {
		var f RefusalRecord
		if err := strictJSON(e.Data, &f); err != nil {
			return fmt.Errorf("%w: refusal %s: %w", errLocalRecord, e.ID, err)
		}
		want := []dag.ID{}
		if prev.Valid() {
			want = []dag.ID{prev}
		}
		if f.Index != uint64(i) || !slices.Equal(e.Parents, want) && len(e.Parents)+len(want) > 0 {
			return fmt.Errorf("%w: refusal %s is not number %d of the log", errLocalRecord, e.ID, i)
		}
		l.recs = append(l.recs, f)
		l.leaves = append(l.leaves, mlog.LeafHash(e.Data))
		prev = e.ID
	}
	l.head = prev
	l.tree.Grow(uint64(len(l.leaves)))
	r.refusals = l
	return nil
}

// logRefusal appends the rejection of env (the submitted bytes' hash is
// envHash) in session with code to the refusal log and returns its index;
// ok is false when it is not logged (its code is not logged, or the log is
// full). Called with r.mu held.
func (r *Replica) logRefusal(ctx context.Context, session string, env *dag.Envelope, envHash dag.ID, code dag.Code, cpSize uint64) (uint64, bool, error) {
	l := r.refusals
	if l == nil || env == nil || !loggable(code) || len(l.recs) >= l.max {
		return 0, false, nil
	}
	f := RefusalRecord{Index: uint64(len(l.recs)), Session: session, Envelope: envHash, Type: string(env.Type), Author: env.Author, Code: code, CheckpointSize: cpSize}
	b, err := dag.Marshal(f)
	if err != nil {
		return 0, false, err
	}
	e := dag.Entry{ID: dag.Sum(b), Space: RefusalSpace, Data: b}
	if l.head.Valid() {
		e.Parents = []dag.ID{l.head}
	}
	res, err := r.put(ctx, dag.Batch{Entries: []dag.Entry{e}})
	if err != nil {
		return 0, false, fmt.Errorf("replica: store refusal: %w", err)
	}
	if !slices.Contains(res.Applied, e.ID) {
		return 0, false, fmt.Errorf("replica: store refusal: entry %s not applied (%+v)", e.ID, res)
	}
	l.recs = append(l.recs, f)
	l.leaves = append(l.leaves, mlog.LeafHash(b))
	l.head = e.ID
	l.tree.Grow(uint64(len(l.leaves)))
	return f.Index, true, nil
}

// RefusalLog returns up to limit records of the refusal log after index
// after-1 (from index after), and the log's size.
func (r *Replica) RefusalLog(after uint64, limit int) ([]RefusalRecord, uint64) {
	r.lock()
	defer r.mu.Unlock()
	l := r.refusals
	if l == nil {
		return nil, 0
	}
	n := uint64(len(l.recs))
	if after >= n {
		return []RefusalRecord{}, n
	}
	end := n
	if limit > 0 && after+uint64(limit) < end {
		end = after + uint64(limit)
	}
	return slices.Clone(l.recs[after:end]), n
}

// RefusalLogFull reports whether the refusal log holds Options.MaxRefusals
// records (new refusals are then not logged).
func (r *Replica) RefusalLogFull() bool {
	r.lock()
	defer r.mu.Unlock()
	return r.refusals != nil && len(r.refusals.recs) >= r.refusals.max
}

// RefusalCheckpoint signs a checkpoint of the refusal log as it is now, at
// the Clock's time (never before the previous one's). The log is
// append-only and durable before any receipt names an index in it, so
// every checkpoint handed out stays consistent with it after a restart.
func (r *Replica) RefusalCheckpoint() (RefusalCheckpoint, error) {
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return RefusalCheckpoint{}, ErrClosed
	}
	l := r.refusals
	ts := r.clock().UTC()
	if ts.Before(l.lastTS) {
		ts = l.lastTS
	}
	l.lastTS = ts
	root, err := l.tree.Root(uint64(len(l.leaves)))
	if err != nil {
		return RefusalCheckpoint{}, err
	}
	c := Checkpoint{Space: RefusalSpace, Size: uint64(len(l.leaves)), Root: ids([][]byte{root})[0], TS: ts, Node: r.key.Key()}
	msg, err := c.SigningBytes()
	if err != nil {
		return RefusalCheckpoint{}, err
	}
	c.Sig = r.key.Sign(DomainRefusalCheckpoint, msg)
	return RefusalCheckpoint{c}, nil
}

// RefusalInclusion proves that record index is in the refusal log of its
// first size records; the leaf is the record's LeafHash.
func (r *Replica) RefusalInclusion(index, size uint64) (RefusalRecord, [][]byte, []byte, error) {
	r.lock()
	defer r.mu.Unlock()
	l := r.refusals
	p, err := l.tree.Inclusion(index, size)
	if err != nil {
		return RefusalRecord{}, nil, nil, err
	}
	root, err := l.tree.Root(size)
	if err != nil {
		return RefusalRecord{}, nil, nil, err
	}
	return l.recs[index], p, root, nil
}

// RefusalConsistency proves that the refusal log of from records is a
// prefix of the log of to records; it returns the proof and both roots.
func (r *Replica) RefusalConsistency(from, to uint64) ([][]byte, []byte, []byte, error) {
	r.lock()
	defer r.mu.Unlock()
	l := r.refusals
	p, err := l.tree.Consistency(from, to)
	if err != nil {
		return nil, nil, nil, err
	}
	r1, err1 := l.tree.Root(from)
	r2, err2 := l.tree.Root(to)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, nil, err
	}
	return p, r1, r2, nil
}
