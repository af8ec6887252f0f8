package node

// This file is the Node: its Options, Open and Close, and the one write
// path. Client submissions (Submit), peer entries from sync (Ingest) and
// memory blocks (PutBlock, memory.go) all go through it, so that sync's
// Subscribe sees every change, memory spaces live beside sessions in one
// store, and sync gets the sync.Local it needs.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/durable"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/internal/par"
	"github.com/witan-dev/witan/replica/view"
	"github.com/witan-dev/witan/sessions/meetstore"
	"github.com/witan-dev/witan/sync"
)

// MemoryPrefix starts the name of every memory space in the store, so a
// memory space can never be mistaken for a session (whose name is its
// session id, "sha256:…").
const MemoryPrefix = "mem:"

// MaxRefObjects bounds the objects that travel with one entry (sync's
// wire limit per item).
const MaxRefObjects = dag.MaxEntryObjects

// DefaultWitnessEvery is Options.WitnessEvery's default: a peer's
// checkpoint signed without new entries is co-signed within about this
// long (one small request per peer and session each time).
const DefaultWitnessEvery = 10 * time.Second

// Options configure Open. Exactly one of Store, Dir and InMemory says where
// the entries live; the zero value of every other field works.
type Options struct {
	// Store is a store the caller opened and closes, after the node.
	Store dag.Store
	// Dir is the directory of a Badger store the node opens and closes.
	Dir string
	// InMemory keeps everything in a Badger store in memory (tests,
	// examples, benchmarks): nothing outlives Close.
	InMemory bool

	// NodeKey signs receipts and checkpoints: the node's identity in 30k
	// terms, distinct from any member key and from the libp2p peer key.
	// Nil generates a fresh key, which only an InMemory node may do: a
	// node that keeps its entries must keep its key (witan up stores one
	// beside its data).
	NodeKey *dag.Signer
	// Clock gives checkpoint times; time.Now when nil. It is read only
	// when a checkpoint is made, never when state is derived.
	Clock func() time.Time
	// Logger receives rare operational events; discarded when nil.
	Logger *slog.Logger
	// MeetingsDir, if set, is the directory of the meeting store
	// (sessions/meetstore, memory model §7.8): the node then runs meetings
	// (Node.Meetings). It is a Badger database of its own, beside the
	// entries' store and never part of it, so nothing of a meeting can be
	// synced. Empty: the node has no meetings.
	MeetingsDir string
	// MeetingClock is the meetings' clock (reads by age, midnight
	// forgetting); the system clock when nil. Tests inject one.
	MeetingClock meetstore.Clock
	// Replica configures the replica the node opens: its caches and the
	// bounds on what hostile peers and clients can make it keep
	// (docs/security.md: pending entries, the quarantine's record, the
	// refusal log, drafts, the value-log GC), each zero meaning the
	// replica's default. Its Store, Dir, InMemory, NodeKey, Clock and
	// Logger are the node's fields above and must be left zero here.
	Replica replica.Options

	// Witnesses, if not empty, are the only node keys whose cosignatures
	// of this node's checkpoints it keeps when peers send them over
	// libp2p (KeepCosignature); empty: any witness's, at most
	// replica.MaxWitnesses a session. httpapi.Options.Witnesses is the
	// same for POST /witness: witan up passes both the same keys.
	Witnesses []dag.Key

	// WitnessEvery is how often the node, while sync runs (not Manual),
	// asks each connected libp2p peer for its latest checkpoint of each
	// session both hold and co-signs one it has not yet co-signed, as it
	// does after each pull: a peer signs checkpoints of entries this node
	// already holds, and no pull follows then (docs/sync-protocol.md,
	// "Checkpoints"). A peer whose announced heads stay the same is
	// asked less and less often, every 18th round at the least often
	// (witnessPace): it signs no new checkpoint before its log grows.
	// Zero means DefaultWitnessEvery; negative checks only after pulls.
	WitnessEvery time.Duration

	// Sync, when set, starts sync over libp2p at Open with this config
	// (StartSync); nil runs without sync until StartSync is called. Its
	// Logger defaults to Logger.
	Sync *sync.Config
}

// validate reports the first thing wrong with o.
func (o Options) validate() error {
	n := 0
	if o.Store != nil {
		n++
	}
	if o.Dir != "" {
		n++
	}
	if o.InMemory {
		n++
	}
	if n != 1 {
		return fmt.Errorf("node: set exactly one of Options.Store, Dir and InMemory (%d set)", n)
	}
	if o.NodeKey == nil && !o.InMemory {
		return errors.New("node: Options.NodeKey is required unless InMemory (a node that keeps its entries must keep its key)")
	}
	if r := o.Replica; r.Store != nil || r.Dir != "" || r.InMemory || r.NodeKey != nil || r.Clock != nil || r.Logger != nil {
		return errors.New("node: Options.Replica's Store, Dir, InMemory, NodeKey, Clock and Logger are the node's own: set them on node.Options")
	}
	return nil
}

// withDefaults fills the zero fields of a validated o.
func (o Options) withDefaults() (Options, error) {
	if o.NodeKey == nil {
		k, err := dag.GenerateSigner(nil)
		if err != nil {
			return o, fmt.Errorf("node: generate node key: %w", err)
		}
		o.NodeKey = k
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WitnessEvery == 0 {
		o.WitnessEvery = DefaultWitnessEvery
	}
	return o, nil
}

// Node is one witan node over one store: the replica's 30k sessions, the
// memory spaces of CAT7 blocks, and the notifications sync needs. It is
// the sync.Local a sync.Node runs on. It is safe for concurrent use.
type Node struct {
	rep   *replica.Replica
	views *view.Reader
	store dag.Store

	mu   gosync.Mutex
	subs map[int]func(string)
	// memSubs are SubscribeMemory's, told which blocks arrived.
	memSubs map[int]func(name string, blocks []dag.ID)
	next    int
	// (Refused memory blocks are in the replica's quarantine record.)
	ownsStore bool
	closeOnce gosync.Once
	closeErr  error
	memMu     gosync.Mutex // serialises memory-space writes (lineage check, then put)
	log       *slog.Logger
	sync      syncState
	witnesses []dag.Key
	// witnessEvery is Options.WitnessEvery.
	witnessEvery time.Duration
	// checked is what the node verified of its libp2p peers'
	// checkpoints (p2pcheck.go).
	checked p2pChecks
	// peerRec keeps what the node verified of its peers' checkpoints,
	// and the forks it found, durably (peerrecords.go).
	peerRec peerRecords

	meet *meetings // nil without Options.MeetingsDir
}

var (
	_ sync.Local    = (*Node)(nil)
	_ sync.Preparer = (*Node)(nil)
)

// Open opens a node: the store (unless Options.Store gives one), the
// replica on it, which derives every stored session from genesis, and the
// memory spaces beside them. Close closes what Open opened.
func Open(ctx context.Context, o Options) (*Node, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	st, owns := o.Store, false
	if st == nil {
		// Badger makes a missing directory without syncing its parent; made
		// here, the directory's name survives a power cut with what Badger
		// syncs inside it.
		if !o.InMemory {
			if err := durable.MkdirAll(o.Dir, 0o700); err != nil {
				return nil, fmt.Errorf("node: open store: %w", err)
			}
		}
		bs, err := badgerstore.Open(o.Dir, badgerstore.Options{InMemory: o.InMemory, Logger: badgerstore.SlogLogger(o.Logger)})
		if err != nil {
			return nil, fmt.Errorf("node: open store: %w", err)
		}
		st, owns = bs, true
	}
	ro := o.Replica
	ro.Store, ro.NodeKey, ro.Clock, ro.Logger = st, o.NodeKey, o.Clock, o.Logger
	rep, err := replica.Open(ctx, ro)
	if err != nil {
		if owns {
			st.Close()
		}
		return nil, err
	}
	n := &Node{rep: rep, views: view.New(rep), store: st, ownsStore: owns, log: o.Logger, subs: map[int]func(string){}, memSubs: map[int]func(string, []dag.ID){},
		witnesses: slices.Clone(o.Witnesses), witnessEvery: o.WitnessEvery}
	if err := n.loadPeerRecords(ctx); err != nil {
		return nil, errors.Join(err, n.Close())
	}
	if o.MeetingsDir != "" {
		if n.meet, err = openMeetings(ctx, n, o.MeetingsDir, o.MeetingClock); err != nil {
			return nil, errors.Join(err, n.Close())
		}
	}
	if o.Sync != nil {
		if _, err := n.StartSync(ctx, *o.Sync); err != nil {
			return nil, errors.Join(err, n.Close())
		}
	}
	return n, nil
}

// Close stops sync, closes the replica, and then the store if Open opened
// it (once; later calls return the first result). A store given in
// Options.Store is the caller's to close, after the node.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.closeErr = n.stopSync()
		if n.meet != nil {
			n.closeErr = errors.Join(n.closeErr, n.meet.close())
		}
		n.closeErr = errors.Join(n.closeErr, n.rep.Close())
		if n.ownsStore {
			n.closeErr = errors.Join(n.closeErr, n.store.Close())
		}
	})
	return n.closeErr
}

// Replica returns the replica (the write core), for its own reads (State,
// Heads, Log, proofs) and Checkpoint. Submit and Ingest go through the
// node, or its subscribers (sync) do not hear of them.
func (n *Node) Replica() *replica.Replica { return n.rep }

// Views returns the derived, finality-labelled reads of the node's
// sessions (MR, Tally, Law, opinions, stats…): one Reader per node, so
// that its cache is shared.
func (n *Node) Views() *view.Reader { return n.views }

// Store returns the store, for reads (it also holds the replica's
// node-local spaces, which the node's own reads hide). Never write to it:
// writes go through the node.
func (n *Node) Store() dag.Store { return n.store }

// Get implements dag.Getter.
func (n *Node) Get(ctx context.Context, id dag.ID) (dag.Entry, error) {
	e, err := n.store.Get(ctx, id)
	if err == nil && replica.IsLocalSpace(e.Space) {
		return dag.Entry{}, fmt.Errorf("node: entry %s: %w", id, dag.ErrNotFound)
	}
	return e, err
}

// Has implements dag.Haser.
func (n *Node) Has(ctx context.Context, id dag.ID) (dag.Status, error) { return n.store.Has(ctx, id) }

// Object implements dag.ObjectGetter.
func (n *Node) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	return n.store.Object(ctx, id)
}

// Parents implements dag.Index.
func (n *Node) Parents(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	return n.store.Parents(ctx, id)
}

// Children implements dag.Index.
func (n *Node) Children(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	return n.store.Children(ctx, id)
}

// Heads implements dag.Index. A space spelt wrong is an error wrapping
// ErrSpaceName; a space of which the node holds no applied entry is an
// error wrapping dag.ErrUnheldSpace, not an empty list (dag.HeadsOf reads
// it as none, for sync).
func (n *Node) Heads(ctx context.Context, space string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	if err := CheckSpace(space); err != nil {
		return nil, err
	}
	hs, err := n.store.Heads(ctx, space)
	if err == nil && len(hs) == 0 {
		return nil, fmt.Errorf("node: %s: %w", space, dag.ErrUnheldSpace)
	}
	return hs, err
}

// Position implements dag.Index.
func (n *Node) Position(ctx context.Context, id dag.ID) (uint64, error) {
	return n.store.Position(ctx, id)
}

// Log implements dag.Index.
func (n *Node) Log(ctx context.Context, space string, after uint64, limit int) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return []dag.ID{}, nil
	}
	return n.store.Log(ctx, space, after, limit)
}

// Pending implements dag.Index.
func (n *Node) Pending(ctx context.Context, space string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	return n.store.Pending(ctx, space)
}

// Missing implements dag.Index.
func (n *Node) Missing(ctx context.Context, space string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	return n.store.Missing(ctx, space)
}

// Quarantine implements dag.Index.
func (n *Node) Quarantine(ctx context.Context, space string) ([]dag.Rejection, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	// Refusals are not stored: the replica's bounded record, of sessions
	// and memory spaces alike.
	var out []dag.Rejection
	for _, q := range n.rep.Quarantine(space) {
		out = append(out, dag.Rejection(q))
	}
	return out, nil
}

// Spaces implements dag.Index. The replica's node-local spaces
// (replica.IsLocalSpace: its checkpoints, held entries, refusal log and
// deposited restricted drafts) are its own bookkeeping: the node never
// lists or serves them to peers.
func (n *Node) Spaces(ctx context.Context) ([]string, error) {
	all, err := n.store.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, name := range all {
		if !replica.IsLocalSpace(name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// LogEntries implements sync.LogReader: Log, then Get of each id, in one
// read where the store can (dag/badgerstore), else one Get each.
func (n *Node) LogEntries(ctx context.Context, space string, after uint64, limit int) ([]dag.Entry, error) {
	if replica.IsLocalSpace(space) {
		return []dag.Entry{}, nil
	}
	return dag.ReadLog(ctx, n.store, space, after, limit)
}

// ScanLog implements sync.LogScanner: the log in one pass where the store
// reads it so (dag/badgerstore's ScanLog), else LogEntries page by page.
func (n *Node) ScanLog(ctx context.Context, space string, after uint64, limit int, fn func([]dag.Entry) error) error {
	if replica.IsLocalSpace(space) {
		return nil
	}
	if sc, ok := n.store.(interface {
		ScanLog(ctx context.Context, space string, after uint64, limit int, fn func([]dag.Entry) error) error
	}); ok {
		return sc.ScanLog(ctx, space, after, limit, fn)
	}
	for left := limit; limit == 0 || left > 0; {
		page := 256
		if limit > 0 {
			page = min(page, left)
		}
		ens, err := dag.ReadLog(ctx, n.store, space, after, page)
		if err != nil || len(ens) == 0 {
			return err
		}
		if err := fn(ens); err != nil {
			return err
		}
		after += uint64(len(ens))
		left -= len(ens)
	}
	return nil
}

// Refs implements sync.Local: the objects an envelope's body names, found
// by following every "sha256:…" string of the body, and of each object
// reached, that the store holds as an object (a change, its snapshot's
// nodes, a branch or group object). A memory block refers to none.
//
// The walk is replica.BodyObjects: schema-blind on purpose, so that it
// cannot miss an object a future body type adds; the one thing it knows is
// a change, whose base snapshot and parent changes came with earlier
// entries. MaxRefObjects (sync's wire limit per item) bounds it.
//
// Two things it does know, for speed (most of a session is ballots): the
// types whose admission reads no object (objectFree) are answered from the
// envelope's type alone, and a stored envelope, canonical, is read with
// dag.PeekCanonical instead of being decoded.
func (n *Node) Refs(ctx context.Context, e dag.Entry) ([]dag.ID, error) {
	if strings.HasPrefix(e.Space, MemoryPrefix) {
		return nil, nil
	}
	if typ, ok := dag.PeekCanonicalType(e.Data); ok && objectFree(typ) {
		return nil, nil // the body's end is not even looked for
	}
	typ, body, ok := dag.PeekCanonical(e.Data)
	if !ok {
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil {
			return nil, err
		}
		typ, body = env.Type, env.Body
	}
	if objectFree(typ) {
		return nil, nil
	}
	return n.refs(ctx, body)
}

// objectFree reports the types whose bodies name entries and keys but no
// object: House admits them without reading an object (replica/house: only
// session.create, group.*, branch.*, opinion.publish read objects), and
// Refs sends none for them. A type not listed is searched.
func objectFree(t dag.TxType) bool {
	switch t {
	case dag.TxBallotCast, dag.TxContestRank, dag.TxKeyRegister, dag.TxKeyRotate:
		return true
	}
	return false
}

func (n *Node) refs(ctx context.Context, body []byte) ([]dag.ID, error) {
	return replica.BodyObjects(ctx, n.store, body, MaxRefObjects)
}

// Attachments returns the objects an entry of a session refers to, as
// they travel in POST /transactions and GET /log.
func (n *Node) Attachments(ctx context.Context, e dag.Entry) ([][]byte, error) {
	ids, err := n.Refs(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(ids))
	for _, id := range ids {
		b, err := n.store.Object(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Quarantined implements sync.Local.
func (n *Node) Quarantined(ctx context.Context, id dag.ID) (dag.Code, bool, error) {
	// Memory blocks too: the replica's record holds both (quarantineBlock).
	if q, ok := n.rep.Refused(id); ok {
		return q.Code, true, nil
	}
	return "", false, nil
}

// MissingFrom implements sync.SourceMissing: the parents a session's
// pending entries from source wait for (the replica charges each pending
// entry to its sender). Memory spaces answer every missing parent.
func (n *Node) MissingFrom(ctx context.Context, space, source string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	// A memory space's pending blocks are on the replica's charge sheet
	// too (ChargePending).
	return n.rep.MissingFrom(ctx, space, source)
}

var _ sync.SourceMissing = (*Node)(nil)

// Subscribe implements sync.Local.
func (n *Node) Subscribe(fn func(space string)) (cancel func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	id := n.next
	n.next++
	n.subs[id] = fn
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.subs, id)
	}
}

func (n *Node) notify(space string) {
	n.mu.Lock()
	fns := make([]func(string), 0, len(n.subs))
	ids := make([]int, 0, len(n.subs))
	for id := range n.subs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fns = append(fns, n.subs[id])
	}
	n.mu.Unlock()
	for _, fn := range fns {
		fn(space)
	}
}

// Submit hands a client's envelope to the replica and returns its signed
// receipt (POST /transactions).
func (n *Node) Submit(ctx context.Context, envelope []byte, attachments [][]byte) (*replica.Receipt, error) {
	rc, err := n.rep.Submit(ctx, envelope, attachments)
	if err != nil {
		return nil, err
	}
	if rc.Status == "accepted" {
		if env, _, _, err := dag.DecodeEnvelope(envelope); err == nil {
			n.notify(env.Session.String())
		}
	}
	return rc, nil
}

// SubmitSigned is Submit for an envelope its caller has decoded: se must
// be dag.DecodeSigned(envelope). It is not decoded again.
func (n *Node) SubmitSigned(ctx context.Context, envelope []byte, se dag.SignedEnvelope, attachments [][]byte) (*replica.Receipt, error) {
	rc, err := n.rep.SubmitSigned(ctx, envelope, se, attachments)
	if err != nil {
		return nil, err
	}
	if rc.Status == "accepted" {
		n.notify(se.Envelope.Session.String())
	}
	return rc, nil
}

// decodedItem is an item of Ingest decoded (data nil: not for the replica,
// its result set).
type decodedItem struct {
	data []byte
	se   dag.SignedEnvelope
}

// decodeChunk is the fewest items a goroutine of decodeItems takes.
const decodeChunk = 128

// decodeItems decodes the items of an Ingest in space, split over the
// cores, and asks the store whether each is applied already. An item that
// does not decode, belongs to another session or is applied has its
// result set in res; the others are returned decoded, in order.
//
// No copy: sync's items are slices of the frame they came in (up to
// MaxFrame), which the caller may reuse once Ingest returned, and the
// replica takes the decoded form (replica.SignedSubmission), which points
// into them. The replica copies whatever it keeps beyond the call (the
// store writes copies; its caches of pending and held entries and the
// House's records copy the bytes they keep), so neither a later change of
// the frame nor its lifetime reaches it (TestIngestKeepsNoCallerBytes).
func (n *Node) decodeItems(ctx context.Context, space string, items []sync.Item, res []sync.ItemResult) ([]decodedItem, error) {
	dec := make([]decodedItem, len(items))
	// The session the items must be of, as an id: compared as 32 bytes
	// rather than by formatting each item's (a string an item). ParseID
	// takes only an id's canonical text; a space that is not one matches
	// no envelope.
	want, err := dag.ParseID(space)
	ofSpace := err == nil
	part := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			it := items[i]
			data := it.Data
			se, ok := preparedOf(it)
			var err error
			if !ok {
				se, err = dag.DecodeSigned(data)
			}
			if err != nil {
				res[i] = sync.ItemResult{ID: dag.Sum(it.Data), Outcome: sync.Quarantined, Code: dag.CodeOf(err), Reason: err.Error()}
				continue
			}
			env, id := se.Envelope, se.ID
			if !ofSpace || env.Session != want {
				res[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: dag.CodeSchema,
					Reason: fmt.Sprintf("entry of session %s sent for space %s", env.Session, space)}
				continue
			}
			if st, err := n.store.Has(ctx, id); err != nil {
				return err
			} else if st == dag.Applied {
				res[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
				continue
			}
			dec[i] = decodedItem{data: data, se: se}
		}
		return nil
	}
	return dec, par.Run(len(items), decodeChunk, part)
}

// Prepare implements sync.Preparer: it checks the signatures of a batch
// of session entries a pull has just received (Replica.PreVerify), while
// Ingest judges and writes the batch before it. Memory blocks are left to
// Ingest.
func (n *Node) Prepare(ctx context.Context, space string, items []sync.Item) {
	if strings.HasPrefix(space, MemoryPrefix) || ctx.Err() != nil {
		return
	}
	subs := make([]replica.Submission, len(items))
	_ = par.Run(len(items), decodeChunk, func(lo, hi int) error { // fails nothing
		for i := lo; i < hi; i++ {
			data := items[i].Data
			se, err := dag.DecodeSigned(data)
			if err != nil {
				subs[i] = replica.Submission{Envelope: data} // Ingest refuses it
				continue
			}
			// Ingest takes the decoding from here (decodeItems).
			items[i].Prepared = &prepared{data: data, se: se}
			subs[i] = replica.SignedSubmission(data, se, nil)
		}
		return nil
	})
	n.rep.PreVerify(subs)
}

// prepared is what Prepare leaves with an item: its envelope decoded from
// data.
type prepared struct {
	data []byte
	se   dag.SignedEnvelope
}

// preparedOf returns the decoding Prepare left with it, if it is still
// of the same bytes (the same slice of the same array).
func preparedOf(it sync.Item) (dag.SignedEnvelope, bool) {
	p, ok := it.Prepared.(*prepared)
	if !ok || len(p.data) != len(it.Data) || len(it.Data) == 0 || &p.data[0] != &it.Data[0] {
		return dag.SignedEnvelope{}, false
	}
	return p.se, true
}

// Ingest implements sync.Local: session entries go to the replica, memory
// blocks to their memory space.
func (n *Node) Ingest(ctx context.Context, space string, items []sync.Item) (sync.IngestResult, error) {
	if strings.HasPrefix(space, MemoryPrefix) {
		return n.ingestBlocks(ctx, space, items)
	}
	res := sync.IngestResult{Items: make([]sync.ItemResult, len(items))}
	dec, err := n.decodeItems(ctx, space, items, res.Items)
	if err != nil {
		return res, err
	}
	subs := make([]replica.Submission, 0, len(items))
	idx := make([]int, 0, len(items))
	for i, it := range items {
		d := &dec[i]
		if d.data == nil {
			continue // its result is set
		}
		id := d.se.ID
		if c, q, _ := n.Quarantined(ctx, id); q {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate, Code: c}
			continue
		}
		var atts [][]byte
		for _, o := range it.Objects {
			atts = append(atts, o.Data)
		}
		subs = append(subs, replica.SignedSubmission(d.data, d.se, atts))
		idx = append(idx, i)
	}
	if len(subs) == 0 {
		return res, nil
	}
	outs, err := n.rep.Ingest(ctx, subs)
	if err != nil {
		return res, err
	}
	applied := false
	for k, o := range outs {
		r := sync.ItemResult{ID: o.Tx, Code: o.Code, Reason: o.Detail}
		switch o.Status {
		case replica.Accepted:
			r.Outcome, applied = sync.Accepted, true
		case replica.Pending:
			r.Outcome = sync.Pending
		default:
			r.Outcome = sync.Quarantined
		}
		res.Items[idx[k]] = r
	}
	if applied {
		n.notify(space)
	}
	return res, nil
}
