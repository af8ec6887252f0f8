package replica

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transparency-dev/merkle/compact"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/internal/par"
	"github.com/witan-dev/witan/replica/mlog"
)

// Options configures a Replica. Exactly one of Store, Dir and InMemory
// chooses the storage; NodeKey is required.
type Options struct {
	// Store is a store the caller opened; the replica does not close it.
	Store dag.Store
	// Dir is the directory of a Badger store the replica opens and closes.
	Dir string
	// InMemory opens a Badger store in memory (tests, benchmarks).
	InMemory bool
	// NodeKey signs receipts and checkpoints. It is the node's identity in
	// 30k terms ("node" in receipts and checkpoints), distinct from any
	// member key and from the libp2p peer key.
	NodeKey *dag.Signer
	// Clock gives checkpoint times; time.Now when nil. It is read only
	// when a checkpoint is made, never when state is derived.
	Clock func() time.Time
	// Logger receives rare operational events; discarded when nil.
	Logger *slog.Logger
	// PendingCache bounds, in bytes of envelope, what the replica keeps in
	// memory of the entries it has verified that wait in the store for a
	// parent, so that their promotion needs neither decoding nor
	// verifying them again. Zero means DefaultPendingCache; negative
	// keeps nothing (every promoted entry is decoded and verified again).
	PendingCache int
	// MaxRefusals bounds the refusal log (refusals.go): once it holds this
	// many records, refusals are still signed but not logged. Zero means
	// DefaultMaxRefusals; negative keeps no refusal log at all.
	MaxRefusals int
	// MaxDrafts and MaxDraftBytes bound the node-local store of deposited
	// restricted drafts (drafts.go), in drafts and in bytes of deposited
	// objects, for the node's lifetime (the store is append-only). Zero
	// means DefaultMaxDrafts and DefaultMaxDraftBytes; negative keeps no
	// drafts (every deposit is refused).
	MaxDrafts, MaxDraftBytes int
	// QuarantinePerSource and QuarantineMax bound the quarantine's record
	// of refused entries per source (dag.WithSource: a peer, an HTTP
	// client) and in all; the oldest are forgotten first. Zero means
	// DefaultQuarantinePerSource and DefaultQuarantineMax.
	QuarantinePerSource, QuarantineMax int
	// PendingPerSource, PendingPerSpace and PendingMax bound the entries
	// waiting for parents, charged to the source that sent them
	// (dag.WithSource), per space and in all; past a bound the oldest are
	// removed from the store. Zero means DefaultPendingPerSource,
	// DefaultPendingPerSpace and DefaultPendingMax.
	PendingPerSource, PendingPerSpace, PendingMax int
	// GCAfterDropped is how many bytes of evicted pending entries make
	// the replica run the store's value-log GC in the background (a store
	// with a GC method: badgerstore). Zero means DefaultGCAfterDropped;
	// negative never runs it.
	GCAfterDropped int64
}

// DefaultPendingCache is Options.PendingCache's default: 32 MiB.
const DefaultPendingCache = 32 << 20

// ErrClosed is returned by every method of a closed Replica.
var ErrClosed = errors.New("replica: closed")

// ErrUnknownSpace is wrapped when a space has no session.create applied.
var ErrUnknownSpace = errors.New("replica: unknown space")

// Replica is one eventual 30k node's local state: a store of entries, a
// House per session deriving its state, per-space checkpoints, and the
// quarantine. It is safe for concurrent use; ingest and reads are
// serialised.
type Replica struct {
	mu        sync.Mutex
	store     dag.Store
	ownsStore bool
	key       *dag.Signer
	clock     func() time.Time
	log       *slog.Logger
	spaces    map[string]*space
	keys      *dag.KeyCache    // members' keys, expanded once; batch verifiers over it (Verifier)
	pre       *dag.VerifiedSet // entries PreVerify found valid, not yet ingested
	// pend holds the decoded envelopes of entries this process verified
	// and left pending, for the Admit hook to take when they are promoted.
	pend *pendingCache
	// quar is the bounded record of refused entries: nothing refused is
	// stored (docs/security.md).
	quar *quarantine
	// wait charges pending entries to their sources and bounds them.
	wait *waiting
	// reverified counts the promoted entries the Admit hook had to decode
	// and verify again (not in pend): tests and benchmarks read it.
	reverified int
	closed     bool
	// refusals is the node's refusal log (refusals.go); nil when
	// Options.MaxRefusals is negative.
	refusals *refusalLog
	// drafts indexes the node-local store of restricted drafts (drafts.go).
	drafts *draftStore
	// witnessed holds witnesses' cosignatures of this node's checkpoints
	// (witness.go).
	witnessed witnessed
	// The group-commit queue of client submissions (groupcommit.go):
	// gbusy is set while a group is being planned; cmu is held by the
	// group being committed.
	cmu   sync.Mutex
	gmu   sync.Mutex
	gq    []*groupReq
	gbusy bool
	glast int // about the size of the last groups committed
	// noShare keeps client submissions out of peers' parts' transactions
	// (tests and benchmarks compare with it).
	noShare bool
	// partWait counts the peers' Ingest calls under way (partsStart), and
	// handed is set when a group leader has left the queue to their parts
	// (handOff); both under gmu.
	partWait int
	handed   bool
	// puts counts the store's write transactions (Put calls) this
	// replica made: tests and benchmarks read it.
	puts atomic.Int64
	// inflight are the commits of pipelined parts not yet settled, in
	// the order they were started (pipeline.go); under mu. noPipeline
	// writes every part with Put (tests and benchmarks compare with it).
	inflight   []*flight
	noPipeline bool
	// started counts the pipelined transactions started: tests read it.
	started atomic.Int64
	// partMax, when not 0, is the most envelopes an Ingest part takes in
	// place of MaxIngestPart (tests make many parts of small calls).
	partMax int
}

// put is the store's Put, counted.
func (r *Replica) put(ctx context.Context, b dag.Batch) (dag.Result, error) {
	r.puts.Add(1)
	return r.store.Put(ctx, b)
}

// space is the in-memory state of one session (space = session id).
type space struct {
	name string
	h    *house.House
	log  []dag.ID // this replica's log order, as the store applied
	tree *compact.Range
	cps  []Checkpoint
	// Entries waiting for parents are in the store (pending). So are
	// entries held back because they name an object that has not arrived
	// (dag.ErrHold); objWait indexes those by the object, so that they are
	// put again when it arrives (attached to any submission). The store
	// cannot return a pending entry's bytes, so each held entry is also
	// recorded in the node-local space witan-local/held/<session>; load
	// reads those records and judges the entries again, which rebuilds
	// objWait after a restart.
	objWait map[dag.ID][]held
	// justHeld collects the entries the Admit hook holds back during one
	// Put, to be recorded once it has committed.
	justHeld []held
	// cpHead is the id of the latest checkpoint's entry in the node-local
	// space witan-local/checkpoints/<session> (zero before the first).
	cpHead dag.ID
	// proofs indexes the log for Merkle proofs (proofs.go); nil until the
	// first proof is asked.
	proofs *mlog.Tree
	// opPos is the log position (1-based) of every opinion, so that a
	// page of /opinions labels finality without a store read per
	// opinion (opinions.go).
	opPos map[dag.ID]uint64
	// state is the canonical JSON of the session's derived state and its
	// hash, derived at the entry count stateAt (reads.go): a read of an
	// unchanged session derives and hashes nothing.
	state   []byte
	stateID dag.ID
	stateAt int
}

type held struct {
	id   dag.ID
	env  *dag.Envelope
	data []byte
}

var rangeFactory = &compact.RangeFactory{Hash: mlog.HashChildren}

// Open opens a replica and derives the state of every session its store
// holds, from genesis, in each space's deterministic topological order.
func Open(ctx context.Context, o Options) (*Replica, error) {
	if o.NodeKey == nil {
		return nil, errors.New("replica: Options.NodeKey is required")
	}
	if o.PendingCache == 0 {
		o.PendingCache = DefaultPendingCache
	}
	r := &Replica{store: o.Store, key: o.NodeKey, clock: o.Clock, log: o.Logger, spaces: map[string]*space{},
		keys: dag.NewKeyCache(0), pre: dag.NewVerifiedSet(0), pend: newPendingCache(o.PendingCache),
		quar: newQuarantine(o.QuarantinePerSource, o.QuarantineMax),
		wait: newWaiting(o.PendingPerSource, o.PendingPerSpace, o.PendingMax)}
	r.wait.gc = newCollector(o.GCAfterDropped)
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.store == nil {
		if o.Dir == "" && !o.InMemory {
			return nil, errors.New("replica: set Options.Store, Dir or InMemory")
		}
		st, err := badgerstore.Open(o.Dir, badgerstore.Options{InMemory: o.InMemory})
		if err != nil {
			return nil, fmt.Errorf("replica: open store: %w", err)
		}
		r.store, r.ownsStore = st, true
	}
	if err := r.checkIdentity(ctx); err != nil { // identity.go
		r.Close()
		return nil, err
	}
	names, err := r.store.Spaces(ctx)
	if err != nil {
		r.Close()
		return nil, err
	}
	for _, n := range names {
		if IsLocalSpace(n) {
			continue // loaded with its session
		}
		if _, err := r.load(ctx, n); err != nil && !errors.Is(err, ErrUnknownSpace) {
			r.Close()
			return nil, err
		}
	}
	if err := r.resume(ctx); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.chargeStored(ctx, names); err != nil {
		r.Close()
		return nil, err
	}
	if o.MaxRefusals == 0 {
		o.MaxRefusals = DefaultMaxRefusals
	}
	if o.MaxRefusals > 0 {
		if err := r.loadRefusals(ctx, o.MaxRefusals); err != nil {
			r.Close()
			return nil, err
		}
	}
	if o.MaxDrafts == 0 {
		o.MaxDrafts = DefaultMaxDrafts
	}
	if o.MaxDraftBytes == 0 {
		o.MaxDraftBytes = DefaultMaxDraftBytes
	}
	if o.MaxDrafts > 0 && o.MaxDraftBytes > 0 {
		if err := r.loadDrafts(ctx, o.MaxDrafts, o.MaxDraftBytes); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// chargeStored charges the pending entries the store holds at Open to the
// source "store" (who sent them is not recorded), so that they count
// against the bounds, and removes those past them.
func (r *Replica) chargeStored(ctx context.Context, names []string) error {
	var out []*waitRec
	for _, n := range names {
		if IsLocalSpace(n) {
			continue
		}
		// Sessions and the node's memory spaces alike (ChargePending).
		ids, err := r.store.Pending(ctx, n)
		if err != nil {
			return err
		}
		for _, id := range ids {
			out = append(out, r.wait.add(&waitRec{id: id, space: n, source: "store"})...)
		}
	}
	return r.dropPending(ctx, out)
}

// dropPending removes evicted pending entries from the store and from
// what the replica keeps of them.
func (r *Replica) dropPending(ctx context.Context, recs []*waitRec) error {
	if len(recs) == 0 {
		return nil
	}
	d, ok := r.store.(dropper)
	if !ok {
		return nil // a store that cannot: the bound is on the charge sheet only
	}
	bySpace := map[string][]dag.ID{}
	var order []string
	for _, x := range recs {
		if x == nil {
			continue
		}
		if _, ok := bySpace[x.space]; !ok {
			order = append(order, x.space)
		}
		bySpace[x.space] = append(bySpace[x.space], x.id)
		r.pend.drop(x.id)
	}
	for _, name := range order {
		ids := bySpace[name]
		if _, err := d.DropPending(ctx, name, ids); err != nil {
			return fmt.Errorf("replica: evict pending entries of %s: %w", name, err)
		}
		if sp := r.spaces[name]; sp != nil && len(sp.objWait) > 0 {
			gone := make(map[dag.ID]bool, len(ids))
			for _, id := range ids {
				gone[id] = true
			}
			for obj, hs := range sp.objWait {
				hs = slices.DeleteFunc(hs, func(h held) bool { return gone[h.id] })
				if len(hs) == 0 {
					delete(sp.objWait, obj)
				} else {
					sp.objWait[obj] = hs
				}
			}
		}
	}
	r.collectDropped(recs)
	return nil
}

// resumer is a store that can finish a promotion a crash cut off between
// two of its transactions (badgerstore.Store): pending entries whose
// parents are all applied wait there until the next Put in their space.
type resumer interface {
	Unfinished(ctx context.Context) ([]string, error)
	Resume(ctx context.Context, space string, admit func(dag.Entry) error) (dag.Result, error)
}

// resume finishes, at Open, every promotion the store reports cut off,
// judging the promoted entries as a Put would, so that a space does not
// wait for its next entry to take in what it already holds.
func (r *Replica) resume(ctx context.Context) error {
	rs, ok := r.store.(resumer)
	if !ok {
		return nil
	}
	names, err := rs.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, name := range names {
		sp := r.spaces[name] // nil for a node-local space: nothing judges or derives it
		var admit func(dag.Entry) error
		if sp != nil {
			sp.justHeld = sp.justHeld[:0]
			admit = func(e dag.Entry) error { return r.admitStored(sp, e, nil) }
		}
		res, err := rs.Resume(ctx, name, admit)
		if err != nil {
			return fmt.Errorf("replica: finish the promotion in %s: %w", name, err)
		}
		if sp == nil {
			continue
		}
		r.took(sp, res, func(dag.ID) string { return "" })
		if err := r.recordHeld(ctx, sp); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the replica and the store it opened.
func (r *Replica) Close() error {
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.wait.gc.close() // before the store closes
	if r.ownsStore {
		return r.store.Close()
	}
	return nil
}

// NodeKey returns the node's public key.
func (r *Replica) NodeKey() dag.Key { return r.key.Key() }

// storeObjects reads objects from the store, with a batch's attachments
// in front; the attachments read are noted in reads, when set.
type storeObjects struct {
	store dag.Store
	extra map[dag.ID][]byte
	reads *[]dag.ID
	// fly, when set, finds an object kept by a commit in flight, which
	// the store shows only once it landed (pipeline.go).
	fly func(dag.ID) ([]byte, bool)
}

func (s storeObjects) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	if b, ok := s.extra[id]; ok {
		if s.reads != nil {
			*s.reads = append(*s.reads, id)
		}
		return b, nil
	}
	if s.fly != nil {
		if b, ok := s.fly(id); ok {
			return b, nil
		}
	}
	return s.store.Object(ctx, id)
}

// load derives a space's state from the store (the full derivation from
// genesis) and rebuilds its Merkle log.
func (r *Replica) load(ctx context.Context, name string) (*space, error) {
	sid, err := dag.ParseID(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a session id (memory spaces are served elsewhere)", ErrUnknownSpace, name)
	}
	// The space is derived from what the store shows: every commit in
	// flight lands first (pipeline.go).
	r.landAllLocked()
	// The log order is a causal order (the store applies parents first),
	// and a House's state does not depend on which causal order it is fed.
	logIDs, err := r.store.Log(ctx, name, 0, 0)
	if err != nil {
		return nil, err
	}
	sp := newSpace(name, sid, storeObjects{store: r.store})
	sp.growLog(len(logIDs))
	cps, cpHead, err := r.loadCheckpoints(ctx, name)
	if err != nil {
		return nil, err
	}
	// Each stored checkpoint is checked against the log as it is replayed:
	// its root must be the Merkle root of the log's first Size entries.
	next := 0
	for next < len(cps) && cps[next].Size == 0 {
		if err := checkRoot(sp, cps[next]); err != nil {
			return nil, err
		}
		next++
	}
	for _, id := range logIDs {
		e, err := r.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil {
			return nil, fmt.Errorf("replica: stored entry %s: %w", id, err)
		}
		if err := sp.h.Admit(id, env); err != nil {
			// The store holds only entries this code admitted; refusing one
			// now means the rules changed under the data.
			return nil, fmt.Errorf("replica: stored entry %s no longer admits: %w", id, err)
		}
		sp.appendLog(id)
		for next < len(cps) && cps[next].Size == uint64(len(sp.log)) {
			if err := checkRoot(sp, cps[next]); err != nil {
				return nil, err
			}
			next++
		}
	}
	if next < len(cps) {
		return nil, fmt.Errorf("%w: %s: checkpoint of size %d, but the log has %d entries", ErrCheckpointMismatch, name, cps[next].Size, len(sp.log))
	}
	sp.cps, sp.cpHead = cps, cpHead
	if err := r.loadWitnessed(ctx, sp); err != nil {
		return nil, err
	}
	// What an older store kept of refused entries goes to the record
	// (bounded like the rest); nothing refused is stored any more.
	q, err := r.store.Quarantine(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, x := range q {
		r.quar.add(Refusal{ID: x.ID, Space: name, Code: x.Code, Reason: x.Detail, Source: "store"})
	}
	r.spaces[name] = sp
	if err := r.rejudgeHeld(ctx, sp); err != nil {
		return nil, err
	}
	return sp, nil
}

// rejudgeHeld puts again the entries of sp that were held back for an
// object (their records in witan-local/held/<session>) and are still
// pending in the store: each is judged again, which applies it if its
// object has arrived meanwhile, or holds it back again and so rebuilds
// objWait, the index by the object it waits for. Their signatures are
// checked again, in one batch.
func (r *Replica) rejudgeHeld(ctx context.Context, sp *space) error {
	recs, err := localLog(ctx, r.store, heldSpace(sp.name))
	if err != nil || len(recs) == 0 {
		return err
	}
	var items []item
	bv := dag.NewBatchVerifierCache(r.keys)
	for _, rec := range recs {
		tx, data, err := decodeHeld(sp.name, rec)
		if err != nil {
			return err
		}
		if st, err := r.store.Has(ctx, tx); err != nil {
			return err
		} else if st != dag.Pending {
			continue // applied or quarantined since: the record is spent
		}
		se, err := dag.DecodeSigned(data)
		if err != nil || se.ID != tx || se.Envelope.Session.String() != sp.name {
			return fmt.Errorf("%w: held %s does not decode to its entry", errLocalRecord, tx)
		}
		bv.AddSigned(se)
		items = append(items, item{i: -1, id: se.ID, env: se.Envelope, data: se.Canonical, hold: true})
	}
	if len(items) == 0 {
		return nil
	}
	_, valid := bv.Verify()
	for k := range items {
		items[k].badSig = !valid[k]
	}
	return r.ingestSpace(ctx, sp.name, items, nil, "", nil)
}

func newSpace(name string, sid dag.ID, objs house.Objects) *space {
	return &space{name: name, h: house.New(sid, objs), tree: rangeFactory.NewEmptyRange(0),
		objWait: map[dag.ID][]held{}}
}

// growLog makes room in sp.log for n more ids, doubling its capacity when
// it grows: append's growth by a quarter for large slices copied the log
// (32 bytes an entry) about five times over as a session grew.
func (sp *space) growLog(n int) {
	if need := len(sp.log) + n; need > cap(sp.log) {
		sp.log = slices.Grow(sp.log, max(need, 2*cap(sp.log))-len(sp.log))
	}
}

func (sp *space) appendLog(id dag.ID) {
	d := id.Digest()
	sp.log = append(sp.log, id)
	if sp.h.IsOpinion(id) { // opinions.go
		if sp.opPos == nil {
			sp.opPos = map[dag.ID]uint64{}
		}
		sp.opPos[id] = uint64(len(sp.log))
	}
	_ = sp.tree.Append(mlog.LeafHashDigest(&d), nil)
}

// Submission is one envelope with the objects it needs.
type Submission struct {
	Envelope    []byte
	Attachments [][]byte
	signed      *dag.SignedEnvelope // Envelope decoded by its caller (SubmitSigned), or nil
}

// decoded returns s's envelope decoded (by its caller, or now).
func (s Submission) decoded() (dag.SignedEnvelope, error) {
	if s.signed != nil {
		return *s.signed, nil
	}
	return dag.DecodeSigned(s.Envelope)
}

// SignedSubmission is a Submission whose envelope its caller has decoded
// already: se must be dag.DecodeSigned(envelope), made from the same bytes
// (its Canonical and Body may point into them), so that Ingest does not
// decode it again.
func SignedSubmission(envelope []byte, se dag.SignedEnvelope, attachments [][]byte) Submission {
	return Submission{Envelope: envelope, Attachments: attachments, signed: &se}
}

// Status is what became of an ingested envelope.
type Status string

// Statuses of Ingest.
const (
	Accepted    Status = "accepted"    // applied (or already applied)
	Pending     Status = "pending"     // waiting for parents
	Quarantined Status = "quarantined" // refused with a code; kept in the quarantine
	Rejected    Status = "rejected"    // undecodable: no id to quarantine under
)

// Outcome is what Ingest did with one submission.
type Outcome struct {
	Tx     dag.ID   `json:"tx"`
	Space  string   `json:"space"`
	Status Status   `json:"status"`
	Code   dag.Code `json:"code,omitempty"`
	Detail string   `json:"detail,omitempty"`
}

type item struct {
	i      int
	id     dag.ID
	env    *dag.Envelope
	data   []byte
	attach []dag.Object
	badSig bool
	// carrier marks an entry refused before its space's Put (bad
	// signature, already quarantined, quarantined parent) that brought
	// attachments: it goes to its space only for them, since an object is
	// named by its bytes whoever carries it, and an entry held back for it
	// must be woken the same whether or not this replica remembers the
	// carrier's refusal (a restart forgets the quarantine).
	carrier bool
	// judged is set when the store's Admit hook has judged the entry
	// (ingestSpace).
	judged bool
	// hold is set for an entry from a peer (or an import), which waits in
	// the store for the parents or objects it lacks; a client's
	// submission is not kept at all when it lacks one (Submit refuses it).
	// A peer's part and client submissions share store transactions
	// (groupcommit.go), so it is the item's, not the call's.
	hold bool
	// src is who sent the entry (dag.SourceOf), charged for its refusal or
	// its wait; "" for the source of the call's context.
	src string
	// missing is the object a client's submission names and the node
	// does not hold, when that refused it (errSubmitHeld): its receipt
	// says which.
	missing dag.ID
}

// Ingest takes envelopes from a peer or a client: it decodes them, checks
// their signatures in batches, and writes them with their attachments in
// store transactions whose Admit hook judges each entry against its
// causal past (house.Admit) when the store applies it, in causal order.
// Entries whose parents have not arrived wait in the store (pending,
// durably; Store.Missing names the parents to fetch) and are judged when
// they are promoted; refused entries and their descendants are quarantined
// in the store with their code. Nothing a peer sends is trusted. The
// outcomes follow the submissions and tell what the replica holds of each
// when Ingest returns.
//
// A call may carry any number of envelopes: they are taken in parts of at
// most MaxIngestPart envelopes and MaxIngestPartBytes bytes (envelopes and
// attachments), each one store transaction, so that no part outgrows what
// a transaction holds. While one part is judged and written under the
// replica's lock, the next is decoded and verified beside it (verification
// reads nothing the writes change: a signature is checked against the key
// the envelope names, and whether that key may sign is judged later, under
// the lock, in causal order). With a store that can start a commit and
// return (badgerstore's Store.PutStart), a part is judged and planned
// while the commit of the one before it syncs, and the lock is not held
// for that wait; nothing of a part is shown to a reader, and Ingest
// returns no outcome, before its commit landed (pipeline.go). On an
// error, the parts before the failing one are kept. Client submissions
// (Submit) queued while a call is under way are written in its parts'
// transactions, one commit for both (groupcommit.go); they change nothing
// the call's entries are judged by but their own place in the log.
func (r *Replica) Ingest(ctx context.Context, subs []Submission) ([]Outcome, error) {
	out := make([]Outcome, len(subs))
	var ends []int // where each part ends in subs
	partMax := cmp.Or(r.partMax, MaxIngestPart)
	for lo := 0; lo < len(subs); {
		n, size := 0, 0
		for lo+n < len(subs) && n < partMax {
			sz := len(subs[lo+n].Envelope)
			for _, a := range subs[lo+n].Attachments {
				sz += len(a)
			}
			if n > 0 && size+sz > MaxIngestPartBytes {
				break
			}
			n, size = n+1, size+sz
		}
		lo += n
		ends = append(ends, lo)
	}
	// Each part's items index its own window of out; the windows do not
	// overlap, so the verifier of the next part writes beside this one.
	var next chan []item
	verifyPart := func(lo, hi int) chan []item {
		c := make(chan []item, 1)
		go func() { c <- r.verify(subs[lo:hi], out[lo:hi], true) }()
		return c
	}
	lo := 0
	var items []item
	done := r.partsStart() // groupcommit.go
	defer func() {
		if done != nil {
			done()
		}
	}()
	// The commits of the part before (out[plo:lo]) may still run while
	// this one is planned (pipeline.go): its outcomes stand once they
	// landed.
	var prev []*flight
	plo := 0
	for k, hi := range ends {
		if k == 0 {
			items = r.verify(subs[:hi], out[:hi], true)
		} else {
			items = <-next
		}
		next = nil
		if k+1 < len(ends) {
			next = verifyPart(hi, ends[k+1])
		}
		var cur []*flight
		err := r.commitPart(ctx, items, out[lo:hi], &cur)
		if k+1 == len(ends) && done != nil {
			done() // the last part took its joiners
			done = nil
		}
		perr := r.land(prev)
		if perr != nil || err != nil {
			_ = r.land(cur) // planned on a failed commit, it fails too
			if next != nil {
				<-next // the next part's verifier writes into out: let it finish
			}
		}
		if perr != nil {
			return out[:plo], fmt.Errorf("replica: store: %w", perr)
		}
		if err != nil {
			if errors.Is(err, ErrClosed) {
				return out[:lo], err
			}
			return out[:hi], err
		}
		prev, plo, lo = cur, lo, hi
	}
	if err := r.land(prev); err != nil {
		return out[:plo], fmt.Errorf("replica: store: %w", err)
	}
	r.refresh(out)
	return out, nil
}

// The parts of an Ingest call: the store's transaction holds about 15 % of
// a memtable (2.4 MiB with dag/badgerstore's defaults), and an entry costs
// its index keys besides its bytes.
const (
	MaxIngestPart      = 1000
	MaxIngestPartBytes = 1 << 20
)

// refresh updates outcomes still Pending from an earlier part of a call:
// a later part may have brought their parents or objects.
func (r *Replica) refresh(out []Outcome) {
	if !slices.ContainsFunc(out, func(o Outcome) bool { return o.Status == Pending }) {
		return // nothing to look up: no need to wait for others' commits
	}
	r.lock()
	defer r.mu.Unlock()
	for i := range out {
		o := &out[i]
		if o.Status != Pending {
			continue
		}
		if sp := r.spaces[o.Space]; sp != nil {
			r.settle(sp, o)
		}
	}
}

// settle sets o's status to what sp holds of o.Tx: accepted, quarantined
// (with the code and detail), or else pending.
func (r *Replica) settle(sp *space, o *Outcome) {
	o.Status = Pending
	if sp.h.Has(o.Tx) {
		o.Status = Accepted
	} else if q, ok := r.quar.get(o.Tx); ok {
		o.Status, o.Code, o.Detail = Quarantined, q.Code, q.Reason
	}
}

// refuse records in the quarantine an entry refused before any write, and
// sets its outcome.
func (r *Replica) refuse(o *Outcome, src string, code dag.Code, reason string) {
	r.quar.add(Refusal{ID: o.Tx, Space: o.Space, Code: code, Reason: reason, Source: src, Time: r.clock().UTC()})
	if q, ok := r.quar.get(o.Tx); ok {
		code, reason = q.Code, q.Reason
	}
	o.Status, o.Code, o.Detail = Quarantined, code, reason
}

// ingestItems is one part of Ingest (items with hold set), a group of
// client submissions (hold not set: an entry whose parents or objects are
// not held is not kept; its outcome is Pending and Submit refuses it), or
// both (groupcommit.go), once the envelopes are decoded and verified
// (items, in the order of out): one store transaction per space.
//
// With fl set, the store's transactions are started and not waited for
// (pipeline.go): each one's flight is appended to *fl, for the caller to
// land before it returns the outcomes; the replica's lock is taken
// without waiting for the commits in flight, on top of which this one is
// planned. With fl nil, every commit in flight lands first and each
// transaction is durable when ingestItems returns.
func (r *Replica) ingestItems(ctx context.Context, items []item, out []Outcome, fl *[]*flight) error {
	if fl != nil {
		r.mu.Lock()
	} else {
		r.lock()
	}
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	callSrc := dag.SourceOf(ctx)
	bySpace := map[string][]item{}
	var spaceOrder []string
	var lastSession dag.ID // most items are of one session: its name formatted once
	var name string
	for _, it := range items {
		if it.src == "" {
			it.src = callSrc
		}
		src := it.src
		if name == "" || it.env.Session != lastSession {
			lastSession, name = it.env.Session, it.env.Session.String()
		}
		out[it.i] = Outcome{Tx: it.id, Space: name}
		// What is refused whatever arrives later is refused here, before
		// any write and before its space is loaded or made: a forged
		// session.create must not make a space.
		refused := true
		if it.badSig {
			r.refuse(&out[it.i], src, dag.CodeBadSignature, "envelope signature does not verify")
		} else if q, ok := r.quar.get(it.id); ok {
			out[it.i].Status, out[it.i].Code, out[it.i].Detail = Quarantined, q.Code, q.Reason
		} else if len(it.attach) > 0 && it.env.Type == dag.TxBranchAppend && house.IsCommitAppend(it.env.Body) {
			// A restricted append's content stays with its owners until
			// branch.reveal (docs/restricted-branches.md): attached, it would
			// be kept and served as an object. Refused, not quarantined (the
			// same envelope without attachments is valid), and not a carrier:
			// nothing it brought is kept.
			out[it.i].Status, out[it.i].Code = Rejected, dag.CodeSchema
			out[it.i].Detail = "a restricted branch.append carries no attachments: its content stays with its owners until branch.reveal"
			continue
		} else if p, ok := r.quarantinedParent(it.env); ok {
			r.refuse(&out[it.i], src, dag.CodeUnknownParent, "parent quarantined: "+p.String())
		} else if detail, err := r.tooManyObjects(ctx, it); err != nil {
			return err
		} else if detail != "" {
			// A client's session.create or branch.append that could not
			// reach a peer whole (dag.MaxEntryObjects). Refused, not
			// quarantined, and not a carrier: the session is not made, the
			// change not appended, and nothing it brought is kept. A peer's
			// is judged as any other: it did reach us.
			out[it.i].Status, out[it.i].Code, out[it.i].Detail = Rejected, dag.CodeSchema, detail
			continue
		} else {
			refused = false
		}
		if refused {
			if len(it.attach) == 0 {
				continue
			}
			it.i, it.carrier = -1, true // its outcome is set; see item.carrier
		}
		if _, ok := bySpace[name]; !ok {
			spaceOrder = append(spaceOrder, name)
			if len(spaceOrder) == 1 {
				// A call is usually all of one space: room for it at once.
				bySpace[name] = make([]item, 0, len(items))
			}
		}
		bySpace[name] = append(bySpace[name], it)
	}
	for _, name := range spaceOrder {
		if err := r.ingestSpace(ctx, name, bySpace[name], out, callSrc, fl); err != nil {
			return err
		}
	}
	return nil
}

// tooManyObjects is the detail of the refusal of it, a client's
// session.create or (public) branch.append naming more objects than
// travel with one entry, or "" (objects.go). It reads the attachments and
// the store. A restricted append names no object (house.IsCommitAppend);
// ingestItems refuses one that carries attachments before this.
func (r *Replica) tooManyObjects(ctx context.Context, it item) (string, error) {
	if it.hold {
		return "", nil
	}
	switch it.env.Type {
	case dag.TxSessionCreate:
	case dag.TxBranchAppend:
		if house.IsCommitAppend(it.env.Body) {
			return "", nil
		}
	default:
		return "", nil
	}
	extra := make(map[dag.ID][]byte, len(it.attach))
	for _, o := range it.attach {
		extra[o.ID] = o.Data
	}
	return tooManyObjects(ctx, storeObjects{store: r.store, extra: extra}, it.env)
}

// verifyChunk is the fewest envelopes a goroutine of verify takes: below
// that, batch verification pays less than a goroutine costs.
const verifyChunk = 128

// preVerifyChunk is the most envelopes PreVerify checks as one batch: a
// sync frame's worth (sync.DefaultMaxBatchItems). One batch of 1,024 costs
// about 6 % less per signature than two of 512, and the Ingest that
// PreVerify runs beside keeps the other core busy: 4.5 % less wall time
// and CPU on the product path than splitting the frame over the cores
// (docs/sync-protocol.md).
const preVerifyChunk = 1024

// verify decodes subs and checks their signatures in batches, split over
// the cores: it returns the decoded items, in order, with badSig set, and
// records in out the outcome of each envelope that does not decode.
func (r *Replica) verify(subs []Submission, out []Outcome, hold bool) []item {
	items := make([]item, len(subs)) // env is nil where the envelope does not decode
	part := func(lo, hi int) {
		bv := r.keys.Verifier()
		defer r.keys.Release(bv)
		var idx []int
		for i := lo; i < hi; i++ {
			s := subs[i]
			se, err := s.decoded()
			if err != nil {
				out[i] = Outcome{Status: Rejected, Code: dag.CodeOf(err), Detail: dag.DetailOf(err)}
				continue
			}
			it := item{i: i, id: se.ID, env: se.Envelope, data: se.Canonical, hold: hold}
			for _, a := range s.Attachments {
				it.attach = append(it.attach, dag.NewObject(a))
			}
			items[i] = it
			if r.pre.Take(se.ID) {
				continue // PreVerify found it valid
			}
			bv.AddSigned(se)
			idx = append(idx, i)
		}
		_, valid := bv.Verify()
		for k, i := range idx {
			items[i].badSig = !valid[k]
		}
	}
	_ = par.Run(len(subs), verifyChunk, func(lo, hi int) error { part(lo, hi); return nil }) // part fails nothing
	return slices.DeleteFunc(items, func(it item) bool { return it.env == nil })
}

// PreVerify checks the signatures of envelopes a later Ingest will take,
// ahead of it: a requester calls it for the batch it has just received
// while the batch before is judged and written, so that the two overlap
// across Ingest calls as they do between the parts of one. It writes
// nothing and decides nothing: the ids of the envelopes whose signatures
// are valid are remembered for a while (dag.VerifiedSet, bounded), and
// Ingest does not check those again. Anything else — an envelope that
// does not decode, a bad signature, one forgotten — is checked and judged
// by Ingest as if PreVerify had not been called.
//
// Each envelope is decoded and its decoding kept in its Submission (as
// SignedSubmission would), so that an Ingest of the same Submissions does
// not decode them again: their bytes must not change in between. Up to
// preVerifyChunk envelopes are checked as one batch on the calling
// goroutine (the Ingest it runs beside keeps the other core busy), more
// split over the cores.
func (r *Replica) PreVerify(subs []Submission) {
	_ = par.Run(len(subs), preVerifyChunk, func(lo, hi int) error { // fails nothing
		bv := r.keys.Verifier()
		defer r.keys.Release(bv)
		ids := make([]dag.ID, 0, hi-lo)
		for i := lo; i < hi; i++ {
			se, err := subs[i].decoded()
			if err != nil {
				continue
			}
			if subs[i].signed == nil {
				subs[i].signed = &se
			}
			bv.AddSigned(se)
			ids = append(ids, se.ID)
		}
		_, valid := bv.Verify()
		ok := ids[:0]
		for k, id := range ids {
			if valid[k] {
				ok = append(ok, id)
			}
		}
		r.pre.Add(ok...)
		return nil
	})
}

func (r *Replica) space(ctx context.Context, name string) (*space, error) {
	if sp := r.spaces[name]; sp != nil {
		return sp, nil
	}
	return r.load(ctx, name)
}

// errSubmitHeld is the Admit hook's error, in a client's submission, for
// the submitted entry when it names an object the node does not hold: it
// has no code and does not wrap dag.ErrHold, so the Put fails and keeps
// nothing, and Submit refuses the entry. The House may have admitted
// entries the submission's attachments woke (the store judges those
// first); then the space's state is dropped and derived again, and the
// woken entries, which wait again, are judged again from their records.
var errSubmitHeld = errors.New("replica: a named object is not held")

// ingestSpace writes items of space name in one store transaction (and
// what it wakes); fl as in ingestItems. Call with r.mu held.
func (r *Replica) ingestSpace(ctx context.Context, name string, items []item, out []Outcome, src string, fl *[]*flight) error {
	_, known := r.spaces[name]
	sp, err := r.space(ctx, name)
	if err != nil {
		return err
	}
	if !known {
		// A space this call made is kept in memory only if something of
		// it is stored: a refused session.create leaves nothing behind.
		defer func() {
			if cur := r.spaces[name]; cur == sp && len(sp.log) == 0 && len(sp.objWait) == 0 {
				if p, err := r.store.Pending(ctx, name); err == nil && len(p) == 0 {
					delete(r.spaces, name)
				}
			}
		}()
	}
	extra := map[dag.ID][]byte{}
	for _, it := range items {
		for _, a := range it.attach {
			extra[a.ID] = a.Data
		}
	}
	// Entries held back for objects that have just arrived are put again,
	// in the objects' order (not the map's), so that the log order does
	// not depend on map iteration.
	var arrived []dag.ID
	for id := range extra {
		if _, ok := sp.objWait[id]; ok {
			arrived = append(arrived, id)
		}
	}
	slices.SortFunc(arrived, dag.ID.Compare)
	for _, id := range arrived {
		for _, h := range sp.objWait[id] {
			items = append(items, item{i: -1, id: h.id, env: h.env, data: h.data, hold: true})
		}
		delete(sp.objWait, id)
	}
	// The attachments the House reads while it admits an entry (or holds
	// it back for another object) are kept; those read only for entries
	// it refuses, or by none, are not written.
	var reads []dag.ID
	var fly func(dag.ID) ([]byte, bool)
	if len(r.inflight) > 0 {
		fly = r.flyingObject
	}
	sp.h.SetObjects(storeObjects{store: r.store, extra: extra, reads: &reads, fly: fly})
	defer sp.h.SetObjects(storeObjects{store: r.store})
	needed := map[dag.ID]bool{}

	inBatch := make(map[dag.ID]*item, len(items))
	batch := dag.Batch{Entries: make([]dag.Entry, 0, len(items))}
	// Every entry of the Put is judged with every attachment of this call
	// in view (extra). The store must hold each object an applied entry
	// names, or the next derivation from the store fails: an attachment
	// is kept when it came with an entry the House admitted, held back or
	// left pending (not judged yet), or when the House read it for an
	// entry it admitted (one woken or promoted), and only then
	// (Batch.KeepObject). A refused submission's attachments are not.
	objs := make([]dag.Object, 0, len(extra))
	kept := make(map[dag.ID]bool, len(extra))
	for _, it := range items {
		for _, a := range it.attach {
			if !kept[a.ID] {
				kept[a.ID] = true
				objs = append(objs, a)
			}
		}
	}
	for k := range items {
		it := &items[k]
		if it.carrier || sp.h.Has(it.id) {
			continue
		}
		if _, ok := r.quar.get(it.id); ok {
			continue
		}
		if !it.hold && !r.parentsHeld(sp, it.env) {
			continue // Submit refuses it: nothing is kept
		}
		if prev, dup := inBatch[it.id]; dup {
			// A copy of an entry already in this Put may carry the
			// objects the first copy lacked: they go with the entry, so
			// KeepObject keeps them while it waits.
			prev.attach = append(prev.attach, it.attach...)
			continue
		}
		inBatch[it.id] = it
		batch.Entries = append(batch.Entries, dag.Entry{ID: it.id, Space: name, Parents: it.env.Parents, Data: it.data})
	}
	if len(batch.Entries) > 0 {
		batch.Objects = objs
		batch.DropRefused = true
		batch.Admit = func(e dag.Entry) error {
			reads = reads[:0]
			it := inBatch[e.ID] // nil for an entry promoted from pending
			if it != nil {
				it.judged = true
			}
			err := r.admitStored(sp, e, it)
			if err == nil || errors.Is(err, dag.ErrHold) {
				for _, id := range reads {
					needed[id] = true
				}
				if it != nil {
					for _, a := range it.attach {
						needed[a.ID] = true
					}
				}
			}
			return err
		}
		var waiting map[dag.ID]bool
		var keep map[dag.ID][]byte // what it kept, when pipelined
		batch.KeepObject = func(id dag.ID) bool {
			if waiting == nil {
				waiting = map[dag.ID]bool{}
				for _, it := range inBatch {
					if !it.judged {
						for _, a := range it.attach {
							waiting[a.ID] = true
						}
					}
				}
			}
			ok := needed[id] || waiting[id]
			if ok && fl != nil {
				if keep == nil {
					keep = map[dag.ID][]byte{}
				}
				keep[id] = extra[id]
			}
			return ok
		}
		sp.justHeld = sp.justHeld[:0]
		var res dag.Result
		ps, pipe := r.store.(putStarter)
		if pipe = pipe && fl != nil; pipe {
			var wait func() error
			r.puts.Add(1)
			res, wait, err = ps.PutStart(ctx, batch)
			if err != nil {
				// What the Put committed before it failed lands first, as
				// Put would have waited for it.
				_ = wait()
			} else {
				f := &flight{space: name, wait: wait, objs: keep}
				r.inflight = append(r.inflight, f)
				r.started.Add(1)
				*fl = append(*fl, f)
			}
		} else {
			res, err = r.put(ctx, batch)
		}
		switch {
		case errors.Is(err, errSubmitHeld) && !heldIn(inBatch):
			// Submit refuses the entry; nothing was kept.
			if len(batch.Entries) > 1 {
				delete(r.spaces, name) // woken entries may have been admitted
			}
		case err != nil:
			return r.fail(name, fmt.Errorf("replica: store: %w", err))
		default:
			r.took(sp, res, func(id dag.ID) string {
				if it := inBatch[id]; it != nil && it.src != "" {
					return it.src
				}
				return src
			})
			r.keepPending(sp, res.Pending, inBatch)
			var evicted []*waitRec
			for _, id := range res.Pending {
				if it := inBatch[id]; it != nil {
					// A copy: the envelope's Parents lie inside its decoded
					// block, which holds its body, which holds the bytes it
					// came in; the charge sheet keeps only the ids.
					evicted = append(evicted, r.wait.add(&waitRec{id: id, space: name, source: cmp.Or(it.src, src), parents: slices.Clone(it.env.Parents), size: len(it.data)})...)
				}
			}
			if err := r.dropPending(ctx, evicted); err != nil {
				return err
			}
			if err := r.recordHeld(ctx, sp); err != nil {
				return err
			}
		}
	}
	// The outcome of each submission is what the space holds of it now.
	for _, it := range items {
		if it.i < 0 {
			continue
		}
		o := Outcome{Tx: it.id, Space: name}
		r.settle(sp, &o)
		if o.Status == Pending && it.missing.Valid() {
			o.Detail = missingObjectDetail(it.env, it.missing)
		}
		out[it.i] = o
	}
	return nil
}

// took brings sp's log and quarantine up to what a store Put in it (or a
// Resume) applied and refused; the entries were admitted (sp's state
// updated) by the Admit hook as the store applied them.
//
// The refused entries are not in the store (Batch.DropRefused): they go
// to the bounded record, charged to srcOf(their id).
func (r *Replica) took(sp *space, res dag.Result, srcOf func(dag.ID) string) {
	sp.growLog(len(res.Applied))
	for _, id := range res.Applied {
		sp.appendLog(id)
		r.wait.remove(id)
	}
	now := r.clock().UTC()
	for _, q := range res.Quarantined {
		r.wait.remove(q.ID)
		r.quar.add(Refusal{ID: q.ID, Space: sp.name, Code: q.Code, Reason: q.Detail, Source: srcOf(q.ID), Time: now})
		r.pend.drop(q.ID)
	}
}

// quarantinedParent returns a parent of env that the quarantine records.
func (r *Replica) quarantinedParent(env *dag.Envelope) (dag.ID, bool) {
	for _, p := range env.Parents {
		if _, q := r.quar.get(p); q {
			return p, true
		}
	}
	return dag.ID{}, false
}

// parentsHeld reports whether every parent of env is admitted or
// quarantined (then the store quarantines the entry at once).
func (r *Replica) parentsHeld(sp *space, env *dag.Envelope) bool {
	for _, p := range env.Parents {
		if _, q := r.quar.get(p); !q && !sp.h.Has(p) {
			return false
		}
	}
	return true
}

// admitStored is the space's dag.Batch.Admit hook: the store calls it for
// each entry it is about to apply, entries of the batch (it, with the
// batch verifier's verdict on its signature) and pending entries promoted
// from earlier batches (it == nil). A promoted entry that this process
// verified when it arrived is taken, decoded, from the pending cache; any
// other (it arrived before a restart, or the cache let it go) is decoded
// and verified again, since the store does not record the verdict.
// Errors with a code quarantine the entry.
func (r *Replica) admitStored(sp *space, e dag.Entry, it *item) error {
	var env *dag.Envelope
	switch {
	case it != nil:
		if it.badSig {
			return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "envelope signature does not verify"}
		}
		env = it.env
	default:
		if env = r.pend.take(e.ID, e.Data); env != nil {
			break
		}
		se, err := dag.DecodeSigned(e.Data)
		if err != nil {
			if dag.CodeOf(err) == "" {
				err = dag.Errorf(dag.CodeSchema, "stored entry: %w", err)
			}
			return err
		}
		if se.ID != e.ID {
			return dag.Errorf(dag.CodeSchema, "stored entry %s: its bytes hash to %s", e.ID, se.ID)
		}
		env = se.Envelope
		r.reverified++
		if !r.keys.Verify(env.Author, dag.DomainEnvelope, se.SigningBytes(), env.Sig) {
			return &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "envelope signature does not verify"}
		}
	}
	err := sp.admit(e.ID, env)
	// An object the entry names has not arrived: the entry waits for it
	// in the store, held back, so that whether an entry is quarantined
	// never depends on which objects happened to arrive first.
	var mo *house.MissingObject
	if errors.As(err, &mo) {
		if it != nil && !it.hold && it.i >= 0 {
			it.missing = mo.ID
			return errSubmitHeld // the client's own entry (see errSubmitHeld)
		}
		// A peer's entry, or one that a client's entry promotes or whose
		// object it brings: it waits, whoever sent the Put.
		env, data := detach(env, e.Data)
		h := held{id: e.ID, env: env, data: data}
		sp.objWait[mo.ID] = append(sp.objWait[mo.ID], h)
		sp.justHeld = append(sp.justHeld, h)
		return fmt.Errorf("%w: %w", dag.ErrHold, err)
	}
	return err
}

// recordHeld writes, after a Put has committed, a record of each entry it
// held back for an object, so that a restarted replica can judge it
// again (rejudgeHeld). An entry held again (it was put again, and another
// of its objects is missing) has its record already: that Put is a no-op.
//
// Crash window: the record is written in a second transaction. A crash
// between the two leaves the entry pending without a record; it is then
// judged again only when a peer sends it again (the behaviour before
// records). The store's API gives no way to write the record in the same
// transaction, as the hook decides the hold inside Put.
func (r *Replica) recordHeld(ctx context.Context, sp *space) error {
	if len(sp.justHeld) == 0 {
		return nil
	}
	var b dag.Batch
	for _, h := range sp.justHeld {
		e, err := heldEntry(sp.name, h.id, h.data)
		if err != nil {
			return err
		}
		b.Entries = append(b.Entries, e)
	}
	sp.justHeld = sp.justHeld[:0]
	if _, err := r.put(ctx, b); err != nil {
		return fmt.Errorf("replica: record held entries of %s: %w", sp.name, err)
	}
	return nil
}

// heldIn reports whether a Put's batch holds an entry a peer sent (hold
// set; not one woken from objWait, which waits again). A client's entry
// that lacks an object fails its Put (errSubmitHeld), which keeps
// nothing: a peer's entry must not be lost with it, so that Put fails as
// any failed write does. Only ballots, which name no object, share a Put
// with a peer's (groupcommit.go), so it does not happen.
func heldIn(inBatch map[dag.ID]*item) bool {
	for _, it := range inBatch {
		if it.hold && it.i >= 0 {
			return true
		}
	}
	return false
}

// keepPending puts in the pending cache the entries of a Put's batch that
// now wait for a parent, with their verified envelopes. Entries held back
// for an object (sp.justHeld, before recordHeld) are not kept: objWait
// holds them.
func (r *Replica) keepPending(sp *space, pending []dag.ID, inBatch map[dag.ID]*item) {
	if !r.pend.enabled() || len(pending) == 0 {
		return
	}
	var heldNow map[dag.ID]bool
	if len(sp.justHeld) > 0 {
		heldNow = make(map[dag.ID]bool, len(sp.justHeld))
		for _, h := range sp.justHeld {
			heldNow[h.id] = true
		}
	}
	for _, id := range pending {
		if it := inBatch[id]; it != nil && !it.badSig && !heldNow[id] {
			r.pend.add(id, it.env, it.data)
		}
	}
}

// admit is the one place where validation meets storage: it judges an
// entry whose signature is checked and whose parents are admitted against
// its causal past, and folds it into the space's House. The store calls it
// (through admitStored, the batch's Admit hook) for each entry, in causal
// order, inside the write, entries promoted from pending included, and
// keeps the refused ones as quarantined. A failed write drops the
// in-memory state (fail), which is derived again from the store.
func (sp *space) admit(id dag.ID, env *dag.Envelope) error { return sp.h.Admit(id, env) }

// fail drops a space's in-memory state after a failed write, so that it is
// derived again from the store: the House may hold entries the store never
// committed.
func (r *Replica) fail(name string, err error) error {
	delete(r.spaces, name)
	return err
}

// pendingCache remembers, for entries waiting in the store for a parent,
// the envelope this process decoded from their bytes and whose signature
// it verified, so that promoting them costs neither again. It is keyed by
// entry id and checked against the exact bytes the store hands back, so a
// hit is sound whatever the id. It is bounded by the bytes it holds
// (envelope bytes counted twice: the bytes and their decoded form) and
// forgets the oldest first; a miss costs one decode and one verification.
// Not safe for concurrent use (the Replica's mutex guards it).
type pendingCache struct {
	max, size int
	m         map[dag.ID]pendingEnv
	fifo      []pendingSlot // in insertion order; stale slots are skipped
	gen       uint64
}

type pendingEnv struct {
	env  *dag.Envelope
	data []byte
	gen  uint64
}

type pendingSlot struct {
	id  dag.ID
	gen uint64
}

func newPendingCache(max int) *pendingCache {
	return &pendingCache{max: max, m: map[dag.ID]pendingEnv{}}
}

func (c *pendingCache) enabled() bool { return c.max > 0 }

// cost is what the cache charges for an entry of len(data) bytes: its
// bytes (a copy of its own, see detach), and about 700 bytes for its
// envelope (the decoded block and a copy of it), the map entry and its
// queue slot; TestPendingKeepsOnlyItsBytes measures the heap against it.
func cost(data []byte) int { return len(data) + 768 }

// detach returns a copy of env and of data whose body is a slice of the
// copied bytes, for what the replica keeps beyond one call (the pending
// cache, entries held back for an object). An entry from a peer is a slice
// of the frame it arrived in (sync.DecodeBatch) and its envelope's body a
// slice of that, so keeping either would keep the whole frame alive (up to
// sync.MaxFrame) for an entry of a few hundred bytes: a peer could pin
// gigabytes with frames that each bring one entry that waits. The parents
// and the signature are copied too: dag's decoder allocates them in one
// block with the envelope it returns, whose body names the frame.
func detach(env *dag.Envelope, data []byte) (*dag.Envelope, []byte) {
	c := slices.Clone(data)
	e := *env
	e.Parents = slices.Clone(env.Parents)
	e.Sig = slices.Clone(env.Sig)
	if i := bytes.Index(c, env.Body); len(env.Body) > 0 && i >= 0 {
		// Equal bytes: wherever they are found, the body is the same.
		e.Body = c[i : i+len(env.Body) : i+len(env.Body)]
	} else {
		e.Body = slices.Clone(env.Body)
	}
	return &e, c
}

func (c *pendingCache) add(id dag.ID, env *dag.Envelope, data []byte) {
	c.drop(id)
	if !c.enabled() || cost(data) > c.max {
		return
	}
	env, data = detach(env, data)
	c.gen++
	c.m[id] = pendingEnv{env: env, data: data, gen: c.gen}
	c.fifo = append(c.fifo, pendingSlot{id: id, gen: c.gen})
	c.size += cost(data)
	for c.size > c.max && len(c.fifo) > 0 {
		s := c.fifo[0]
		c.fifo = c.fifo[1:]
		if p, ok := c.m[s.id]; ok && p.gen == s.gen {
			c.drop(s.id)
		}
	}
	// Slots of entries taken or dropped stay in fifo until they reach its
	// front; compact when they are most of it.
	if len(c.fifo) > 64 && len(c.fifo) > 2*len(c.m) {
		live := c.fifo[:0:0]
		for _, s := range c.fifo {
			if p, ok := c.m[s.id]; ok && p.gen == s.gen {
				live = append(live, s)
			}
		}
		c.fifo = live
	}
}

// take returns the envelope kept for id, if its bytes are data, and
// forgets it (the entry is being promoted).
func (c *pendingCache) take(id dag.ID, data []byte) *dag.Envelope {
	p, ok := c.m[id]
	if !ok {
		return nil
	}
	c.drop(id)
	if !bytes.Equal(p.data, data) {
		return nil
	}
	return p.env
}

func (c *pendingCache) drop(id dag.ID) {
	if p, ok := c.m[id]; ok {
		c.size -= cost(p.data)
		delete(c.m, id)
	}
}

// len returns the number of envelopes kept (tests).
func (c *pendingCache) len() int { return len(c.m) }
