package replica

// This file is the node's store of restricted drafts (30k §4: "Content is
// served only to authorized owner-group members";
// docs/restricted-branches.md, "Drafts"). A drafter may deposit the
// content behind a commitment of a restricted branch with a node; the
// node keeps it in the node-local space witan-local/drafts (IsLocalSpace),
// one root entry per draft, so that it survives a restart, and never in
// the object store, a session's log or anything sync or an answer reads.
// What to serve, and to whom, is httpapi's (drafts.go): the replica only
// keeps the drafts and gives one back by session and commitment.
//
// Bounded: at most Options.MaxDrafts drafts and Options.MaxDraftBytes
// bytes of deposited objects, counted over everything the space holds.
// The store is append-only, so a draft stays held after its branch is
// revealed (its content is then public anyway) and the bounds are for
// the node's lifetime: past them a deposit is refused (ErrDraftsFull) and
// nothing is written. Only a member of the branch's owner group can make
// a commitment a draft can match (httpapi checks the commitment is in the
// branch's state before depositing), so a stranger cannot fill them.

import (
	"context"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// DraftSpace is the node-local space of the deposited drafts.
const DraftSpace = LocalPrefix + "drafts"

// Defaults of Options.MaxDrafts and Options.MaxDraftBytes.
const (
	DefaultMaxDrafts     = 1024
	DefaultMaxDraftBytes = 32 << 20
)

// ErrDraftsFull is returned by DepositDraft when the draft store holds
// Options.MaxDrafts drafts or a deposit would take it past
// Options.MaxDraftBytes.
var ErrDraftsFull = errors.New("replica: draft store full")

// Draft is the content behind one commitment of a restricted branch: the
// change, its salt, and the deposited objects (the change first, then the
// node objects its result adds), each exactly as the drafter sent it.
type Draft struct {
	Session    string
	Branch     string
	Commitment dag.ID
	Change     dag.ID
	Salt       []byte
	Objects    [][]byte
}

// draftRecord is one entry of witan-local/drafts.
type draftRecord struct {
	Branch     string   `json:"branch"`
	Change     dag.ID   `json:"change"`
	Commitment dag.ID   `json:"commitment"`
	Objects    []string `json:"objects"` // base64url (no padding) of each object as deposited
	Salt       string   `json:"salt"`
	Session    string   `json:"session"`
}

type draftKey struct{ session, commitment string }

// draftStore indexes witan-local/drafts: which entry holds which draft.
type draftStore struct {
	maxCount, maxBytes int
	at                 map[draftKey]dag.ID
	bytes              int
}

func draftSize(objs [][]byte) int {
	n := 0
	for _, o := range objs {
		n += len(o)
	}
	return n
}

func decodeDraft(e dag.Entry) (Draft, error) {
	var rec draftRecord
	if err := strictJSON(e.Data, &rec); err != nil {
		return Draft{}, fmt.Errorf("%w: draft %s: %w", errLocalRecord, e.ID, err)
	}
	d := Draft{Session: rec.Session, Branch: rec.Branch, Commitment: rec.Commitment, Change: rec.Change}
	var err error
	if d.Salt, err = b64d(rec.Salt); err != nil || len(d.Salt) != house.SaltSize {
		return Draft{}, fmt.Errorf("%w: draft %s: bad salt", errLocalRecord, e.ID)
	}
	for _, s := range rec.Objects {
		o, err := b64d(s)
		if err != nil {
			return Draft{}, fmt.Errorf("%w: draft %s: %w", errLocalRecord, e.ID, err)
		}
		d.Objects = append(d.Objects, o)
	}
	if len(d.Objects) == 0 || house.Commitment(d.Salt, d.Change) != d.Commitment {
		return Draft{}, fmt.Errorf("%w: draft %s does not match its commitment", errLocalRecord, e.ID)
	}
	return d, nil
}

// draftEntry is d's record in witan-local/drafts: a root entry, named by
// the hash of its canonical JSON.
func draftEntry(d Draft) (dag.Entry, error) {
	rec := draftRecord{Branch: d.Branch, Change: d.Change, Commitment: d.Commitment, Salt: b64(d.Salt), Session: d.Session}
	for _, o := range d.Objects {
		rec.Objects = append(rec.Objects, b64(o))
	}
	b, err := dag.Marshal(rec)
	if err != nil {
		return dag.Entry{}, err
	}
	return dag.Entry{ID: dag.Sum(b), Space: DraftSpace, Data: b}, nil
}

// loadDrafts reads the draft index back from the store.
func (r *Replica) loadDrafts(ctx context.Context, maxCount, maxBytes int) error {
	ds := &draftStore{maxCount: maxCount, maxBytes: maxBytes, at: map[draftKey]dag.ID{}}
	es, err := localLog(ctx, r.store, DraftSpace)
	if err != nil {
		return err
	}
	for _, e := range es {
		d, err := decodeDraft(e)
		if err != nil {
			return err
		}
		k := draftKey{d.Session, d.Commitment.String()}
		if _, ok := ds.at[k]; !ok {
			ds.at[k] = e.ID
		}
		ds.bytes += draftSize(d.Objects)
	}
	r.drafts = ds
	return nil
}

// DepositDraft keeps d in the node-local draft store, durably, and
// reports whether it was new (a draft already held for d's session and
// commitment is kept as it is). The caller checks that d.Commitment is a
// commitment of d.Branch in the session's state; DepositDraft checks that
// sha256(salt || change) is d.Commitment. Past the bounds it returns
// ErrDraftsFull and writes nothing.
func (r *Replica) DepositDraft(ctx context.Context, d Draft) (bool, error) {
	if len(d.Objects) == 0 || len(d.Salt) != house.SaltSize || house.Commitment(d.Salt, d.Change) != d.Commitment {
		return false, errors.New("replica: draft does not match its commitment")
	}
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return false, ErrClosed
	}
	ds := r.drafts
	k := draftKey{d.Session, d.Commitment.String()}
	if ds != nil {
		if _, ok := ds.at[k]; ok {
			return false, nil
		}
	}
	size := draftSize(d.Objects)
	if ds == nil || len(ds.at) >= ds.maxCount || ds.bytes+size > ds.maxBytes {
		return false, ErrDraftsFull
	}
	e, err := draftEntry(d)
	if err != nil {
		return false, err
	}
	if _, err := r.put(ctx, dag.Batch{Entries: []dag.Entry{e}}); err != nil {
		return false, fmt.Errorf("replica: store draft: %w", err)
	}
	ds.at[k] = e.ID
	ds.bytes += size
	return true, nil
}

// Draft returns the draft deposited for commitment in session, if this
// node holds one.
func (r *Replica) Draft(ctx context.Context, session dag.ID, commitment dag.ID) (Draft, bool, error) {
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return Draft{}, false, ErrClosed
	}
	if r.drafts == nil {
		return Draft{}, false, nil
	}
	id, ok := r.drafts.at[draftKey{session.String(), commitment.String()}]
	if !ok {
		return Draft{}, false, nil
	}
	e, err := r.store.Get(ctx, id)
	if err != nil {
		return Draft{}, false, err
	}
	d, err := decodeDraft(e)
	if err != nil {
		return Draft{}, false, err
	}
	return d, true, nil
}
