// Package synctest provides a small but real local replica for tests of
// sync and for users' own suites until they wire the replica package: a
// dag.Store plus the context-free validation of 30k envelopes (strict
// decoding, the tx id as the hash of the canonical bytes, Ed25519 batch
// verification, parents as the DAG's edges, the envelope's session as the
// space), an optional authorisation rule, and a quarantine that remembers
// refused ids with their code.
//
// It is not the replica: it does not judge entries against the state their
// causal past derives (rules, electorates); Options.Authorize is the hook
// where a test puts such a rule.
//
// A Replica serves its log in runs (sync.LogReader, through its store's
// LogEntries where it has one). Preparing wraps one as a sync.Preparer, as
// the node's replica is: a requester then verifies each batch as it
// arrives, while the batch before is stored.
package synctest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/sync"
)

// Options configure a Replica. The zero value accepts every well-formed,
// correctly signed envelope.
type Options struct {
	// Authorize, if set, judges an envelope that decoded and verified; a
	// non-nil error quarantines it with the error's dag.Code
	// (not_authorized when it has none).
	Authorize func(e *dag.Envelope) error
}

// Quarantine is why an entry was refused.
type Quarantine struct {
	Code   dag.Code
	Reason string
}

// Replica is a sync.Local over a dag.Store. It is safe for concurrent use.
type Replica struct {
	dag.Store
	o Options

	mu         gosync.Mutex
	quarantine map[dag.ID]Quarantine
	keys       *dag.KeyCache
	subs       map[int]func(string)
	next       int
	// scratch holds what an Ingest call of envelopes used, emptied, for
	// the next one (*ingestScratch).
	scratch gosync.Pool
}

var _ sync.Local = (*Replica)(nil)

// New returns a replica over store, which it owns (Close closes it).
func New(store dag.Store, o Options) *Replica {
	return &Replica{Store: store, o: o, quarantine: map[dag.ID]Quarantine{}, keys: dag.NewKeyCache(0), subs: map[int]func(string){}}
}

// NewMem returns a replica over a fresh in-memory store.
func NewMem(o Options) *Replica { return New(dag.NewMemStore(), o) }

// LogEntries implements sync.LogReader: the store's own (dag/badgerstore's
// and dag.MemStore's read a run of the log in one go), else Log and Get of
// each id.
func (r *Replica) LogEntries(ctx context.Context, space string, after uint64, limit int) ([]dag.Entry, error) {
	return dag.ReadLog(ctx, r.Store, space, after, limit)
}

var _ sync.LogReader = (*Replica)(nil)

// refs is the member of an envelope body that names the objects it refers
// to, in this test replica (the real one knows each body's schema).
type refsBody struct {
	Refs []dag.ID `json:"refs"`
}

// Refs implements sync.Local: the ids under the body's "refs" member.
func (r *Replica) Refs(ctx context.Context, e dag.Entry) ([]dag.ID, error) {
	if strings.HasPrefix(e.Space, MemoryPrefix) || !mayHaveRefs(e.Data) {
		return nil, nil
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return nil, err
	}
	return bodyRefs(env), nil
}

// mayHaveRefs reports whether b may hold a "refs" member: it holds
// `refs"`, which `"refs"` does. Looking for the quote first, as a search for
// `"refs"` would, stops at every one of an envelope's thirty-odd quotes; an
// r is rare in it.
func mayHaveRefs(b []byte) bool { return bytes.Contains(b, []byte(`refs"`)) }

func bodyRefs(env *dag.Envelope) []dag.ID {
	if !mayHaveRefs(env.Body) {
		return nil // most bodies: spare the decoding
	}
	var b refsBody
	if json.Unmarshal(env.Body, &b) != nil {
		return nil
	}
	return b.Refs
}

// Quarantined implements sync.Local.
func (r *Replica) Quarantined(ctx context.Context, id dag.ID) (dag.Code, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.quarantine[id]
	return q.Code, ok, nil
}

// Refused returns every quarantined id with its reason. (Quarantine, from
// the embedded store, lists what the store itself quarantined.)
func (r *Replica) Refused() map[dag.ID]Quarantine {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[dag.ID]Quarantine, len(r.quarantine))
	for k, v := range r.quarantine {
		out[k] = v
	}
	return out
}

// Subscribe implements sync.Local.
func (r *Replica) Subscribe(fn func(space string)) (cancel func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.next
	r.next++
	r.subs[id] = fn
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.subs, id)
	}
}

func (r *Replica) notify(space string) {
	r.mu.Lock()
	fns := make([]func(string), 0, len(r.subs))
	for _, fn := range r.subs {
		fns = append(fns, fn)
	}
	r.mu.Unlock()
	for _, fn := range fns {
		fn(space)
	}
}

// Submit ingests one envelope written locally: the same path as entries
// from peers.
func (r *Replica) Submit(ctx context.Context, data []byte, objects ...dag.Object) (sync.ItemResult, error) {
	env, _, _, err := dag.DecodeEnvelope(data)
	if err != nil {
		return sync.ItemResult{ID: dag.Sum(data), Outcome: sync.Quarantined, Code: dag.CodeOf(err), Reason: err.Error()}, nil
	}
	res, err := r.Ingest(ctx, env.Session.String(), []sync.Item{{Data: data, Objects: objects}})
	if err != nil {
		return sync.ItemResult{}, err
	}
	return res.Items[0], nil
}

// MemoryPrefix starts the name of a memory space, whose entries are CAT7
// memory blocks rather than envelopes (a convention of this test replica;
// the real one knows each space's kind).
const MemoryPrefix = "mem:"

// Ingest implements sync.Local: decode and verify signatures in parallel
// chunks (through the replica's KeyCache), check space, parents, objects
// and Authorize in item order, quarantine what fails, and put the rest.
// The chunks are a pipeline: while the store takes the valid entries of
// one chunk, the next are being verified, so both cores stay busy. Items
// that Preparing's Prepare verified (a sync requester's next batch, while
// this one is judged and written) are taken as it left them. In a memory
// space it decodes memory blocks instead (see ingestBlocks).
func (r *Replica) Ingest(ctx context.Context, space string, items []sync.Item) (sync.IngestResult, error) {
	if strings.HasPrefix(space, MemoryPrefix) {
		return r.ingestBlocks(ctx, space, items)
	}
	sid, _ := dag.ParseID(space) // an envelope space is a session id; zero (matching nothing) otherwise
	sc, _ := r.scratch.Get().(*ingestScratch)
	if sc == nil {
		sc = &ingestScratch{}
	}
	sc.grow(len(items))
	in := &ingest{
		r: r, space: space, sid: sid, items: items,
		res:  sync.IngestResult{Items: make([]sync.ItemResult, len(items))},
		seen: sc.seen, quarantined: map[dag.ID]bool{},
	}
	in.batch.Entries, in.index = sc.take()
	defer func() { r.record(in.res) }() // what was refused stays refused, even if a put fails
	// Decoding and signature checks are pure and most of the cost: workers
	// take chunks in order, and this goroutine judges and stores each
	// chunk as soon as it is verified (taking a chunk itself while it
	// would otherwise wait).
	dec := sc.dec[:len(items)]
	chunks := (len(items) + ingestChunk - 1) / ingestChunk
	ready := make([]chan struct{}, chunks)
	for c := range ready {
		ready[c] = make(chan struct{})
	}
	var next atomic.Int64
	// verify decodes and verifies chunk c with bv, then marks it ready.
	verify := func(c int, bv *dag.BatchVerifier, idx []int) []int {
		idx = verifyChunk(items, dec, c, bv, idx)
		close(ready[c])
		return idx
	}
	stop := make(chan struct{})
	var workers gosync.WaitGroup
	defer func() {
		// The scratch goes back once nothing uses it: the workers have
		// stopped and every put has landed (the deferred land below runs
		// first).
		close(stop)
		workers.Wait()
		sc.release(in.batch.Entries, in.index)
		r.scratch.Put(sc)
	}()
	for range min(runtime.GOMAXPROCS(0), chunks) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			bv := r.keys.Verifier()
			defer r.keys.Release(bv)
			var idx []int
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
				idx = verify(c, bv, idx)
			}
		}()
	}
	// landing waits for the batch put last and fills in its outcomes; once
	// it has, the batch's entries and index serve a later batch.
	var landing func() error
	land := func() error {
		l := landing
		landing, in.flying = nil, nil
		if l == nil {
			return nil
		}
		err := l()
		if err == nil {
			sc.landed()
		}
		return err
	}
	defer land() //nolint:errcheck // an earlier error is returned

	var own *dag.BatchVerifier // for chunks this goroutine verifies itself
	defer func() {
		if own != nil {
			r.keys.Release(own)
		}
	}()
	var idx []int
	for c := range chunks {
		// Until chunk c is verified, this goroutine verifies a chunk nobody
		// has taken yet rather than leave its core idle.
		for !isClosed(ready[c]) && ctx.Err() == nil {
			k := int(next.Add(1) - 1)
			if k >= chunks {
				break
			}
			if own == nil {
				own = r.keys.Verifier()
			}
			idx = verify(k, own, idx)
		}
		select {
		case <-ready[c]:
		case <-ctx.Done():
			return in.res, ctx.Err()
		}
		for i := c * ingestChunk; i < min((c+1)*ingestChunk, len(items)); i++ {
			if err := in.judge(ctx, i, &dec[i]); err != nil {
				return in.res, err
			}
		}
		// Store what the chunks brought while the next ones verify, and
		// while the store makes the batch before it durable (PutAsync).
		if len(in.batch.Entries) >= ingestPut || c == chunks-1 {
			next := r.putAsync(ctx, space, &in.res, in.batch, in.index)
			if err := land(); err != nil {
				next() //nolint:errcheck // planned on the failed one: it fails too
				return in.res, err
			}
			landing, in.flying = next, in.batch.Objects
			sc.put(in.batch.Entries, in.index)
			in.batch = dag.Batch{}
			in.batch.Entries, in.index = sc.take()
		}
	}
	if err := land(); err != nil {
		return in.res, err
	}
	return in.res, nil
}

// verifyChunk decodes and verifies chunk c of items into dec with bv,
// taking what Prepare left where it did; idx is scratch, returned for
// reuse.
func verifyChunk(items []sync.Item, dec []decoded, c int, bv *dag.BatchVerifier, idx []int) []int {
	idx = idx[:0]
	for i := c * ingestChunk; i < min((c+1)*ingestChunk, len(items)); i++ {
		d := &dec[i]
		if p, ok := items[i].Prepared.(*decoded); ok {
			*d = *p
			continue
		}
		se, err := dag.DecodeSigned(items[i].Data)
		d.env, d.canon, d.id, d.err = se.Envelope, se.Canonical, se.ID, err
		if d.err == nil {
			bv.AddSigned(se)
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return idx
	}
	_, valid := bv.Verify()
	for k, i := range idx {
		dec[i].sigOK = valid[k]
	}
	return idx
}

// Preparing is a Replica that is also a sync.Preparer, as the node's
// replica is: a requester hands it each batch as it arrives, and it
// verifies that batch while Ingest judges and stores the one before. A
// plain Replica is not, so that a Local without Prepare is what most of
// sync's tests drive.
type Preparing struct{ *Replica }

var _ sync.Preparer = Preparing{}

// Prepare implements sync.Preparer: the envelopes of a batch decoded and
// their signatures checked, in parallel chunks (Ingest then takes each
// item's verdict from its Prepared). Memory blocks are left to Ingest.
func (p Preparing) Prepare(ctx context.Context, space string, items []sync.Item) {
	r := p.Replica
	if strings.HasPrefix(space, MemoryPrefix) || len(items) == 0 {
		return
	}
	dec := make([]decoded, len(items))
	chunks := (len(items) + ingestChunk - 1) / ingestChunk
	var next atomic.Int64
	work := func() {
		bv := r.keys.Verifier()
		defer r.keys.Release(bv)
		var idx []int
		for ctx.Err() == nil {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			idx = verifyChunk(items, dec, c, bv, idx)
		}
	}
	// Half the processors: Ingest, on the batch before, and the store's
	// writer keep the others busy (on two cores, one verifying goroutine
	// took less time and CPU than two: bench, BenchmarkFreshSync).
	var wg gosync.WaitGroup
	for range min(max(runtime.GOMAXPROCS(0)/2, 1), chunks) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if ctx.Err() != nil {
		return // Ingest checks what is left
	}
	for i := range items {
		items[i].Prepared = &dec[i]
	}
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// ingestChunk is how many items a worker decodes and verifies at once: big
// enough for batch verification to pay (its multiplication sums 128
// buckets a window however few the points), small enough that storing one
// chunk overlaps verifying the next. A fresh sync of 100k took 2-3 % less
// CPU with 512 than with 256, and no less with 1024 (bench,
// BenchmarkFreshSync, five alternations).
const ingestChunk = 512

// ingestPut is how many valid entries Ingest gathers before it puts them
// (and at the end of the call): a Put has a fixed cost (a transaction, two
// fsyncs with Badger), and a fresh sync of 100k was some 8 % faster in
// both CPU and time putting every 1024 than every 256, with either store.
const ingestPut = 1024

// decoded is an item after the pure stage: decoding and the signature.
type decoded struct {
	env   *dag.Envelope
	canon []byte
	id    dag.ID
	err   error
	sigOK bool
}

// ingestScratch is what an Ingest call of envelopes allocates by its
// items' number, kept for the next call (Replica.scratch): the decodings,
// the ids met, and the entries and index of two batches, one being filled
// while the other's put runs. A fresh sync of 100k makes some 25 calls of
// 4,096 items, and these were a tenth of the bytes it allocated
// (BenchmarkFreshSync's alloc-B/entry, 2026-12-07).
type ingestScratch struct {
	dec  []decoded
	seen map[dag.ID]bool
	// free holds the batches' storage no put uses; flying, that of the
	// batch whose put runs.
	free    []batchStore
	flying  []batchStore
	entries int // the capacity a batch's entries are made with
}

// maxScratchItems is the most items an Ingest call's scratch is kept for.
const maxScratchItems = 16 << 10

type batchStore struct {
	entries []dag.Entry
	index   map[dag.ID]int
}

// grow readies the scratch for a call of n items.
func (sc *ingestScratch) grow(n int) {
	if cap(sc.dec) < n {
		sc.dec = make([]decoded, n)
	}
	if sc.seen == nil {
		sc.seen = make(map[dag.ID]bool, n)
	}
	sc.entries = min(n, ingestPut)
}

// take returns an empty batch's entries and index.
func (sc *ingestScratch) take() ([]dag.Entry, map[dag.ID]int) {
	if k := len(sc.free) - 1; k >= 0 {
		b := sc.free[k]
		sc.free = sc.free[:k]
		return b.entries[:0], b.index
	}
	return make([]dag.Entry, 0, sc.entries), make(map[dag.ID]int, sc.entries)
}

// put records the storage of a batch whose put now runs.
func (sc *ingestScratch) put(entries []dag.Entry, index map[dag.ID]int) {
	sc.flying = append(sc.flying, batchStore{entries, index})
}

// landed frees the storage of the batches put so far: their puts have
// returned, and the store keeps nothing of a batch it was given.
func (sc *ingestScratch) landed() {
	for _, b := range sc.flying {
		sc.free1(b)
	}
	sc.flying = sc.flying[:0]
}

// free1 empties b, entries' data included, and keeps it for a later batch.
func (sc *ingestScratch) free1(b batchStore) {
	clear(b.entries[:cap(b.entries)])
	clear(b.index)
	sc.free = append(sc.free, b)
}

// release empties the scratch for the next call, taking back the storage
// of the batch being filled, which no put was given: nothing of this
// call's items stays reachable from it. A batch still recorded as flying
// (its put failed) is dropped.
func (sc *ingestScratch) release(entries []dag.Entry, index map[dag.ID]int) {
	if cap(sc.dec) > maxScratchItems || len(sc.seen) > maxScratchItems {
		sc.dec, sc.seen = nil, nil // a call far larger than a sync's: not kept
	}
	clear(sc.dec[:cap(sc.dec)])
	clear(sc.seen)
	sc.flying = sc.flying[:0]
	sc.free1(batchStore{entries, index})
	if len(sc.free) > 2 {
		clear(sc.free[2:])
		sc.free = sc.free[:2]
	}
}

// ingest is the state of one Ingest call of envelopes.
type ingest struct {
	r           *Replica
	space       string
	sid         dag.ID
	items       []sync.Item
	res         sync.IngestResult
	seen        map[dag.ID]bool // ids met in this call
	quarantined map[dag.ID]bool // ids refused in this call
	batch       dag.Batch       // valid entries not yet put
	flying      []dag.Object    // the objects of the batch whose Put runs
	index       map[dag.ID]int  // batch entry id → item
}

func (in *ingest) quar(i int, id dag.ID, code dag.Code, format string, args ...any) {
	in.res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: code, Reason: fmt.Sprintf(format, args...)}
	in.quarantined[id] = true
}

// judge decides item i from its decoding and signature verdict d:
// duplicate, quarantined (with why), or added to the batch.
func (in *ingest) judge(ctx context.Context, i int, d *decoded) error {
	r, env, id := in.r, d.env, d.id
	if d.err != nil {
		id := dag.Sum(in.items[i].Data)
		if c, q, _ := r.Quarantined(ctx, id); q {
			in.res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate, Code: c}
			return nil
		}
		code := dag.CodeOf(d.err)
		if code == "" {
			code = dag.CodeSchema
		}
		in.quar(i, id, code, "%v", d.err)
		return nil
	}
	if c, q, _ := r.Quarantined(ctx, id); q || in.seen[id] {
		in.res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate, Code: c}
		return nil
	}
	in.seen[id] = true
	if st, err := r.Has(ctx, id); err != nil {
		return err
	} else if st != dag.Absent {
		in.res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
		return nil
	}
	if env.Session != in.sid {
		in.quar(i, id, dag.CodeSchema, "entry of session %s sent for space %s", env.Session, in.space)
		return nil
	}
	if !d.sigOK {
		in.quar(i, id, dag.CodeBadSignature, "signature by %s does not verify", env.Author)
		return nil
	}
	// Validity follows the causal past: a child of a refused entry is
	// refused too.
	for _, p := range env.Parents {
		if _, q, _ := r.Quarantined(ctx, p); q || in.quarantined[p] {
			in.quar(i, id, dag.CodeUnknownParent, "parent %s is quarantined", p)
			return nil
		}
	}
	if r.o.Authorize != nil {
		if err := r.o.Authorize(env); err != nil {
			code := dag.CodeOf(err)
			if code == "" {
				code = dag.CodeNotAuthorized
			}
			in.quar(i, id, code, "%v", err)
			return nil
		}
	}
	var objs []dag.Object
	for _, ref := range bodyRefs(env) {
		if k := slices.IndexFunc(in.items[i].Objects, func(o dag.Object) bool { return o.ID == ref }); k >= 0 {
			objs = append(objs, in.items[i].Objects[k])
			continue
		}
		has := func(o dag.Object) bool { return o.ID == ref }
		if _, err := r.Object(ctx, ref); err == nil || slices.ContainsFunc(in.batch.Objects, has) || slices.ContainsFunc(in.flying, has) {
			continue
		}
		in.quar(i, id, dag.CodeUnpublishedReference, "object %s is neither sent nor held", ref)
		return nil
	}
	in.index[id] = i
	in.batch.Entries = append(in.batch.Entries, dag.Entry{ID: id, Space: in.space, Parents: env.Parents, Data: d.canon})
	in.batch.Objects = append(in.batch.Objects, objs...)
	return nil
}

// ingestBlocks ingests CAT7 memory blocks: strict decoding of the hashed
// form, the block hash as the id, the lineage as the parents. A block whose
// lineage this replica cannot produce is held pending, never applied and
// never re-rooted (BLOCK_MISSING_PARENT until its ancestors arrive); a
// child of a refused block is refused.
func (r *Replica) ingestBlocks(ctx context.Context, space string, items []sync.Item) (sync.IngestResult, error) {
	res := sync.IngestResult{Items: make([]sync.ItemResult, len(items))}
	var batch dag.Batch
	index := map[dag.ID]int{}
	refused := map[dag.ID]bool{}
	for i, it := range items {
		id := dag.Sum(it.Data)
		if c, q, _ := r.Quarantined(ctx, id); q {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate, Code: c}
			continue
		}
		if _, dup := index[id]; dup {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
			continue
		}
		if st, err := r.Has(ctx, id); err != nil {
			return res, err
		} else if st != dag.Absent {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
			continue
		}
		b, err := mb.DecodeCanonical(it.Data)
		if err == nil && b.ID() != id {
			err = fmt.Errorf("block hashes to %s, its bytes to %s", b.ID(), id)
		}
		if err != nil {
			code := dag.Code(mb.CodeBlockMalformed)
			var me *mb.Error
			if errors.As(err, &me) {
				code = dag.Code(me.Code)
			}
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: code, Reason: err.Error()}
			refused[id] = true
			continue
		}
		bad := dag.ID{}
		for _, p := range b.Parents() {
			if _, q, _ := r.Quarantined(ctx, p); q || refused[p] {
				bad = p
				break
			}
		}
		if bad.Valid() {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: dag.Code(mb.CodeBlockMissingParent), Reason: fmt.Sprintf("lineage names refused block %s", bad)}
			refused[id] = true
			continue
		}
		index[id] = i
		batch.Entries = append(batch.Entries, b.Entry(space))
	}
	return r.commit(ctx, space, res, batch, index)
}

// commit records the quarantined items of res, puts the batch of the
// valid ones, and fills in each put item's outcome from the store's
// result (index: id → position in res.Items).
func (r *Replica) commit(ctx context.Context, space string, res sync.IngestResult, batch dag.Batch, index map[dag.ID]int) (sync.IngestResult, error) {
	r.record(res)
	err := r.put(ctx, space, &res, batch, index)
	return res, err
}

// record remembers the quarantined items of res.
func (r *Replica) record(res sync.IngestResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, it := range res.Items {
		if it.Outcome == sync.Quarantined {
			r.quarantine[it.ID] = Quarantine{Code: it.Code, Reason: it.Reason}
		}
	}
}

// put stores batch and fills in each put item's outcome in res from the
// store's result (index: id → position in res.Items).
func (r *Replica) put(ctx context.Context, space string, res *sync.IngestResult, batch dag.Batch, index map[dag.ID]int) error {
	return r.putAsync(ctx, space, res, batch, index)()
}

// asyncPutter is a store that plans a batch on top of the commit before it
// (badgerstore.Store.PutAsync).
type asyncPutter interface {
	PutAsync(ctx context.Context, b dag.Batch) func() (dag.Result, error)
}

// putAsync starts storing batch and returns a func that waits until it is
// stored and fills in each put item's outcome, as put does. With a store
// that pipelines its commits, the next batch is planned while this one is
// made durable.
func (r *Replica) putAsync(ctx context.Context, space string, res *sync.IngestResult, batch dag.Batch, index map[dag.ID]int) func() error {
	if len(batch.Entries) == 0 {
		return func() error { return nil }
	}
	var wait func() (dag.Result, error)
	if p, ok := r.Store.(asyncPutter); ok {
		wait = p.PutAsync(ctx, batch)
	} else {
		out, err := r.Put(ctx, batch)
		wait = func() (dag.Result, error) { return out, err }
	}
	return func() error { return r.fill(space, res, wait, index) }
}

// fill waits for a Put and fills in its items' outcomes in res.
func (r *Replica) fill(space string, res *sync.IngestResult, wait func() (dag.Result, error), index map[dag.ID]int) error {
	out, err := wait()
	if err != nil {
		return err
	}
	for _, id := range out.Applied {
		if i, ok := index[id]; ok {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Accepted}
		}
	}
	for _, id := range out.Pending {
		res.Items[index[id]] = sync.ItemResult{ID: id, Outcome: sync.Pending}
	}
	for _, id := range out.Duplicate {
		res.Items[index[id]] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
	}
	if len(out.Applied) > 0 {
		r.notify(space)
	}
	return nil
}
