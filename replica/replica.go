package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica/house"
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
}

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
	closed    bool
}

// space is the in-memory state of one session (space = session id).
type space struct {
	name    string
	h       *house.House
	log     []dag.ID // this replica's log order, as the store applied
	tree    *compact.Range
	cps     []Checkpoint
	quar    map[dag.ID]house.Rejection
	orphans map[dag.ID]held // waiting for parents (see ingest)
	// waiting indexes orphans by the one parent each waits for.
	waiting  map[dag.ID][]dag.ID
	heldObjs map[dag.ID][]byte
}

type held struct {
	env    *dag.Envelope
	data   []byte
	attach []dag.Object
}

var rangeFactory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// Open opens a replica and derives the state of every session its store
// holds, from genesis, in each space's deterministic topological order.
func Open(ctx context.Context, o Options) (*Replica, error) {
	if o.NodeKey == nil {
		return nil, errors.New("replica: Options.NodeKey is required")
	}
	r := &Replica{store: o.Store, key: o.NodeKey, clock: o.Clock, log: o.Logger, spaces: map[string]*space{}}
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
	names, err := r.store.Spaces(ctx)
	if err != nil {
		r.Close()
		return nil, err
	}
	for _, n := range names {
		if _, err := r.load(ctx, n); err != nil && !errors.Is(err, ErrUnknownSpace) {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// Close closes the replica and the store it opened.
func (r *Replica) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.ownsStore {
		return r.store.Close()
	}
	return nil
}

// NodeKey returns the node's public key.
func (r *Replica) NodeKey() dag.Key { return r.key.Key() }

// storeObjects reads objects from the store, with a batch's attachments
// in front.
type storeObjects struct {
	ctx   context.Context
	store dag.Store
	extra map[dag.ID][]byte
	held  map[dag.ID][]byte
}

func (s storeObjects) Object(id dag.ID) ([]byte, error) {
	if b, ok := s.extra[id]; ok {
		return b, nil
	}
	if b, ok := s.held[id]; ok {
		return b, nil
	}
	return s.store.Object(s.ctx, id)
}

// load derives a space's state from the store (the full derivation from
// genesis) and rebuilds its Merkle log.
func (r *Replica) load(ctx context.Context, name string) (*space, error) {
	sid, err := dag.ParseID(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a session id (memory spaces are served elsewhere)", ErrUnknownSpace, name)
	}
	// The log order is a causal order (the store applies parents first),
	// and a House's state does not depend on which causal order it is fed.
	logIDs, err := r.store.Log(ctx, name, 0, 0)
	if err != nil {
		return nil, err
	}
	sp := newSpace(name, sid, storeObjects{ctx: ctx, store: r.store})
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
	}
	r.spaces[name] = sp
	return sp, nil
}

func newSpace(name string, sid dag.ID, objs house.Objects) *space {
	return &space{name: name, h: house.New(sid, objs), tree: rangeFactory.NewEmptyRange(0),
		quar: map[dag.ID]house.Rejection{}, orphans: map[dag.ID]held{}, waiting: map[dag.ID][]dag.ID{}, heldObjs: map[dag.ID][]byte{}}
}

func (sp *space) appendLog(id dag.ID) {
	d := id.Digest()
	sp.log = append(sp.log, id)
	_ = sp.tree.Append(rfc6962.DefaultHasher.HashLeaf(d[:]), nil)
}

// Submission is one envelope with the objects it needs.
type Submission struct {
	Envelope    []byte
	Attachments [][]byte
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
}

// Ingest takes envelopes from a peer or a client: it decodes them, checks
// their signatures in one batch, judges each against its causal past
// (house.Admit) in causal order, and stores the accepted ones with their
// attachments in one store transaction. Entries whose parents have not
// arrived wait; entries that fail go to the quarantine with their code.
// Nothing a peer sends is trusted. The outcomes follow the submissions.
func (r *Replica) Ingest(ctx context.Context, subs []Submission) ([]Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	out := make([]Outcome, len(subs))
	items := make([]item, 0, len(subs))
	bv := dag.NewBatchVerifier()
	for i, s := range subs {
		env, data, id, err := dag.DecodeEnvelope(s.Envelope)
		if err != nil {
			out[i] = Outcome{Status: Rejected, Code: dag.CodeOf(err), Detail: err.Error()}
			continue
		}
		it := item{i: i, id: id, env: env, data: data}
		for _, a := range s.Attachments {
			it.attach = append(it.attach, dag.NewObject(a))
		}
		bv.Add(env.Author, dag.DomainEnvelope, env.SigningBytes(), env.Sig)
		items = append(items, it)
	}
	_, valid := bv.Verify()
	bySpace := map[string][]item{}
	var spaceOrder []string
	for k, it := range items {
		name := it.env.Session.String()
		out[it.i] = Outcome{Tx: it.id, Space: name}
		it.badSig = !valid[k]
		if _, ok := bySpace[name]; !ok {
			spaceOrder = append(spaceOrder, name)
		}
		bySpace[name] = append(bySpace[name], it)
	}
	for _, name := range spaceOrder {
		if err := r.ingestSpace(ctx, name, bySpace[name], out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// quarantine records a refusal. The quarantine is kept in memory until the
// store can hold it (see docs/replica.md).
func (r *Replica) quarantine(ctx context.Context, name string, id dag.ID, err error, o *Outcome) {
	rej := house.Rejection{ID: id, Code: dag.CodeOf(err), Detail: err.Error()}
	o.Status, o.Code, o.Detail = Quarantined, rej.Code, rej.Detail
	sp, err2 := r.space(ctx, name)
	if err2 != nil {
		return
	}
	if _, ok := sp.quar[id]; !ok {
		sp.quar[id] = rej
	}
}

func (r *Replica) space(ctx context.Context, name string) (*space, error) {
	if sp := r.spaces[name]; sp != nil {
		return sp, nil
	}
	return r.load(ctx, name)
}

func (r *Replica) ingestSpace(ctx context.Context, name string, items []item, out []Outcome) error {
	sp, err := r.space(ctx, name)
	if err != nil {
		return err
	}
	extra := map[dag.ID][]byte{}
	for _, it := range items {
		for _, a := range it.attach {
			extra[a.ID] = a.Data
		}
	}
	sp.h.SetObjects(storeObjects{ctx: ctx, store: r.store, extra: extra, held: sp.heldObjs})
	defer sp.h.SetObjects(storeObjects{ctx: ctx, store: r.store})

	var batch dag.Batch
	// decided is called once an entry is admitted or quarantined: the
	// entries held for it are tried again.
	var queue []item
	decided := func(id dag.ID) {
		for _, w := range sp.waiting[id] {
			if o, ok := sp.orphans[w]; ok {
				queue = append(queue, item{i: -1, id: w, env: o.env, data: o.data, attach: o.attach})
			}
		}
		delete(sp.waiting, id)
	}
	// try judges one entry: it is a duplicate, quarantined, held for a
	// parent, or admitted.
	try := func(it item) error {
		o := Outcome{Tx: it.id, Space: name}
		report := func() {
			if it.i >= 0 {
				out[it.i] = o
			}
		}
		if sp.h.Has(it.id) {
			o.Status = Accepted
			report()
			return nil
		}
		if q, ok := sp.quar[it.id]; ok {
			o.Status, o.Code, o.Detail = Quarantined, q.Code, q.Detail
			report()
			return nil
		}
		if it.badSig {
			r.quarantine(ctx, name, it.id, &dag.ProtocolError{Code: dag.CodeBadSignature, Detail: "envelope signature does not verify"}, &o)
			report()
			decided(it.id)
			return nil
		}
		for _, p := range it.env.Parents {
			if _, bad := sp.quar[p]; bad {
				sp.drop(it.id)
				r.quarantine(ctx, name, it.id, &dag.ProtocolError{Code: dag.CodeUnknownParent, Detail: "parent quarantined: " + p.String()}, &o)
				report()
				decided(it.id)
				return nil
			}
			if !sp.h.Has(p) {
				sp.hold(it, p)
				o.Status = Pending
				report()
				return nil
			}
		}
		if err := sp.admit(it.id, it.env); err != nil {
			if dag.CodeOf(err) == "" {
				return err
			}
			// An object the entry names has not arrived: wait for it as
			// for a parent, so that whether an entry is quarantined never
			// depends on which objects happened to arrive first.
			var mo *house.MissingObject
			if errors.As(err, &mo) {
				sp.hold(it, mo.ID)
				o.Status = Pending
				report()
				return nil
			}
			sp.drop(it.id)
			r.quarantine(ctx, name, it.id, err, &o)
		} else {
			sp.drop(it.id)
			o.Status = Accepted
			batch.Entries = append(batch.Entries, dag.Entry{ID: it.id, Space: name, Parents: it.env.Parents, Data: it.data})
			batch.Objects = append(batch.Objects, it.attach...)
		}
		report()
		decided(it.id)
		return nil
	}
	// Objects that entries were held for may have arrived.
	for id := range extra {
		decided(id)
	}
	for _, it := range items {
		queue = append(queue, it)
		for len(queue) > 0 {
			next := queue[0]
			queue = queue[1:]
			if err := try(next); err != nil {
				return r.fail(name, err)
			}
		}
	}
	if len(batch.Entries) == 0 {
		return nil
	}
	res, err := r.store.Put(ctx, batch)
	if err != nil {
		return r.fail(name, fmt.Errorf("replica: store: %w", err))
	}
	for _, id := range res.Applied {
		sp.appendLog(id)
	}
	return nil
}

// admit is the one place where validation meets storage: it judges an
// entry whose signature is checked and whose parents are admitted against
// its causal past, and folds it into the space's House. Today ingest calls
// it before writing the admitted entries in one batch; once dag.Batch
// carries its Admit hook, the store calls it for each entry, in causal
// order, inside the write (entries promoted from pending included), and
// keeps the refused ones as quarantined. Either way, a failed write drops
// the in-memory state (fail), which is derived again from the store.
func (sp *space) admit(id dag.ID, env *dag.Envelope) error { return sp.h.Admit(id, env) }

// hold keeps an entry until its parent p is decided.
func (sp *space) hold(it item, p dag.ID) {
	sp.orphans[it.id] = held{env: it.env, data: it.data, attach: it.attach}
	sp.waiting[p] = append(sp.waiting[p], it.id)
	for _, a := range it.attach {
		sp.heldObjs[a.ID] = a.Data
	}
}

// drop forgets a held entry once it is decided. (Its attachments stay in
// heldObjs until the space is reloaded: other held entries may need them.)
func (sp *space) drop(id dag.ID) { delete(sp.orphans, id) }

// fail drops a space's in-memory state after a failed write, so that it is
// derived again from the store: the House may hold entries the store never
// committed.
func (r *Replica) fail(name string, err error) error {
	delete(r.spaces, name)
	return err
}

func sortedOrphans(m map[dag.ID]held) []dag.ID {
	out := make([]dag.ID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.SortFunc(out, dag.ID.Compare)
	return out
}
