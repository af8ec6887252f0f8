package httpapi

// This file is Local: the one write path of a node. HTTP submissions, peer
// entries from sync and memory blocks all go through it, so that sync's
// Subscribe sees every change, memory spaces live beside sessions in one
// store, and sync gets the sync.Local it needs. The replica package does
// not implement sync.Local yet; when it does, the session half of this file
// goes away (docs/deviations.md, "## node").

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/sync"
)

// MemoryPrefix starts the name of every memory space in the store, so a
// memory space can never be mistaken for a session (whose name is its
// session id, "sha256:…").
const MemoryPrefix = "mem:"

// MaxRefObjects bounds the objects that travel with one entry.
const MaxRefObjects = sync.MaxItemObjects

// Local is a node's replica and memory spaces over one store, as sync and
// the HTTP API see them. It is safe for concurrent use.
type Local struct {
	rep   *replica.Replica
	store dag.Store

	mu   gosync.Mutex
	subs map[int]func(string)
	next int
	// memQuar remembers memory blocks refused for good (bad hash,
	// malformed); a block refused for a missing parent is not remembered,
	// so it can come again with its ancestors.
	memQuar   map[dag.ID]dag.Code
	owns      bool
	closeOnce gosync.Once
	closeErr  error
	memMu     gosync.Mutex // serialises memory-space writes (lineage check, then put)
}

var _ sync.Local = (*Local)(nil)

// NewLocal returns the Local of rep, which must have been opened on store
// (replica.Options.Store). The caller closes rep and then store.
func NewLocal(rep *replica.Replica, store dag.Store) *Local {
	return &Local{rep: rep, store: store, subs: map[int]func(string){}, memQuar: map[dag.ID]dag.Code{}}
}

// Replica returns the replica.
func (l *Local) Replica() *replica.Replica { return l.rep }

// Store returns the store.
func (l *Local) Store() dag.Store { return l.store }

// Get implements dag.Getter.
func (l *Local) Get(ctx context.Context, id dag.ID) (dag.Entry, error) {
	e, err := l.store.Get(ctx, id)
	if err == nil && replica.IsLocalSpace(e.Space) {
		return dag.Entry{}, fmt.Errorf("httpapi: entry %s: %w", id, dag.ErrNotFound)
	}
	return e, err
}

// Has implements dag.Haser.
func (l *Local) Has(ctx context.Context, id dag.ID) (dag.Status, error) { return l.store.Has(ctx, id) }

// Object implements dag.ObjectGetter.
func (l *Local) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	return l.store.Object(ctx, id)
}

// Parents implements dag.Index.
func (l *Local) Parents(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	return l.store.Parents(ctx, id)
}

// Children implements dag.Index.
func (l *Local) Children(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	return l.store.Children(ctx, id)
}

// Heads implements dag.Index.
func (l *Local) Heads(ctx context.Context, space string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	return l.store.Heads(ctx, space)
}

// Position implements dag.Index.
func (l *Local) Position(ctx context.Context, id dag.ID) (uint64, error) {
	return l.store.Position(ctx, id)
}

// Log implements dag.Index.
func (l *Local) Log(ctx context.Context, space string, after uint64, limit int) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return []dag.ID{}, nil
	}
	return l.store.Log(ctx, space, after, limit)
}

// Pending implements dag.Index.
func (l *Local) Pending(ctx context.Context, space string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	return l.store.Pending(ctx, space)
}

// Missing implements dag.Index.
func (l *Local) Missing(ctx context.Context, space string) ([]dag.ID, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	return l.store.Missing(ctx, space)
}

// Quarantine implements dag.Index.
func (l *Local) Quarantine(ctx context.Context, space string) ([]dag.Rejection, error) {
	if replica.IsLocalSpace(space) {
		return nil, nil
	}
	return l.store.Quarantine(ctx, space)
}

// Spaces implements dag.Index. The replica's node-local spaces
// (replica.IsLocalSpace: its checkpoints and held entries) are its own
// bookkeeping: Local never lists or serves them to peers.
func (l *Local) Spaces(ctx context.Context) ([]string, error) {
	all, err := l.store.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, n := range all {
		if !replica.IsLocalSpace(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Refs implements sync.Local: the objects an envelope's body names, found
// by following every "sha256:…" string of the body, and of each object
// reached, that the store holds as an object (a change, its snapshot's
// nodes, a branch or group object). A memory block refers to none.
//
// This is schema-blind on purpose: it cannot miss an object a future body
// type adds. The one thing it knows is a change: it sends the change and
// the nodes its result adds to its base, not the base snapshot or the
// parent changes, which came with earlier entries. MaxRefObjects (sync's
// wire limit per item) bounds it.
func (l *Local) Refs(ctx context.Context, e dag.Entry) ([]dag.ID, error) {
	if strings.HasPrefix(e.Space, MemoryPrefix) {
		return nil, nil
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return nil, err
	}
	return l.refs(ctx, env.Body)
}

func (l *Local) refs(ctx context.Context, body []byte) ([]dag.ID, error) {
	var out []dag.ID
	seen := map[dag.ID]bool{}
	queue := idsIn(body)
	for len(queue) > 0 && len(out) < MaxRefObjects {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		data, err := l.store.Object(ctx, id)
		if errors.Is(err, dag.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, id)
		// A change needs only the nodes its result adds to its base: the
		// base snapshot, and the parent changes, came with earlier entries
		// (or are derived by every replica, for merges).
		if c, _, _, err := statute.DecodeChange(data); err == nil {
			if err := l.markTree(ctx, c.Base, seen); err != nil {
				return nil, err
			}
			queue = append(queue, c.Result)
			continue
		}
		queue = append(queue, idsIn(data)...)
	}
	return out, nil
}

// maxMarked bounds the nodes markTree visits.
const maxMarked = 1 << 20

// markTree marks the stored node objects of the snapshot root as seen.
func (l *Local) markTree(ctx context.Context, root dag.ID, seen map[dag.ID]bool) error {
	queue := []dag.ID{root}
	for n := 0; len(queue) > 0 && n < maxMarked; n++ {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		data, err := l.store.Object(ctx, id)
		if errors.Is(err, dag.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		seen[id] = true
		queue = append(queue, idsIn(data)...)
	}
	return nil
}

// idsIn returns every "sha256:<64 hex>" string in canonical JSON b, in
// order of appearance.
func idsIn(b []byte) []dag.ID {
	var out []dag.ID
	s := string(b)
	for {
		i := strings.Index(s, `"`+dag.Prefix)
		if i < 0 {
			return out
		}
		s = s[i+1:]
		j := strings.IndexByte(s, '"')
		if j < 0 {
			return out
		}
		if id, err := dag.ParseID(s[:j]); err == nil {
			out = append(out, id)
		}
		s = s[j+1:]
	}
}

// Attachments returns the objects an entry of a session refers to, as
// they travel in POST /transactions and GET /log.
func (l *Local) Attachments(ctx context.Context, e dag.Entry) ([][]byte, error) {
	ids, err := l.Refs(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(ids))
	for _, id := range ids {
		b, err := l.store.Object(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Quarantined implements sync.Local.
func (l *Local) Quarantined(ctx context.Context, id dag.ID) (dag.Code, bool, error) {
	l.mu.Lock()
	c, ok := l.memQuar[id]
	l.mu.Unlock()
	if ok {
		return c, true, nil
	}
	for _, s := range l.rep.Sessions() {
		for _, q := range l.rep.Quarantine(s) {
			if q.ID == id {
				return q.Code, true, nil
			}
		}
	}
	return "", false, nil
}

// Subscribe implements sync.Local.
func (l *Local) Subscribe(fn func(space string)) (cancel func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.next
	l.next++
	l.subs[id] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs, id)
	}
}

func (l *Local) notify(space string) {
	l.mu.Lock()
	fns := make([]func(string), 0, len(l.subs))
	ids := make([]int, 0, len(l.subs))
	for id := range l.subs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fns = append(fns, l.subs[id])
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(space)
	}
}

// Submit hands a client's envelope to the replica and returns its signed
// receipt (POST /transactions).
func (l *Local) Submit(ctx context.Context, envelope []byte, attachments [][]byte) (*replica.Receipt, error) {
	rc, err := l.rep.Submit(ctx, envelope, attachments)
	if err != nil {
		return nil, err
	}
	if rc.Status == "accepted" {
		if env, _, _, err := dag.DecodeEnvelope(envelope); err == nil {
			l.notify(env.Session.String())
		}
	}
	return rc, nil
}

// Ingest implements sync.Local: session entries go to the replica, memory
// blocks to their memory space.
func (l *Local) Ingest(ctx context.Context, space string, items []sync.Item) (sync.IngestResult, error) {
	if strings.HasPrefix(space, MemoryPrefix) {
		return l.ingestBlocks(ctx, space, items)
	}
	res := sync.IngestResult{Items: make([]sync.ItemResult, len(items))}
	subs := make([]replica.Submission, 0, len(items))
	idx := make([]int, 0, len(items))
	for i, it := range items {
		env, _, id, err := dag.DecodeEnvelope(it.Data)
		if err != nil {
			res.Items[i] = sync.ItemResult{ID: dag.Sum(it.Data), Outcome: sync.Quarantined, Code: dag.CodeOf(err), Reason: err.Error()}
			continue
		}
		if env.Session.String() != space {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: dag.CodeSchema,
				Reason: fmt.Sprintf("entry of session %s sent for space %s", env.Session, space)}
			continue
		}
		if st, err := l.store.Has(ctx, id); err != nil {
			return res, err
		} else if st == dag.Applied {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
			continue
		}
		if c, q, _ := l.Quarantined(ctx, id); q {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate, Code: c}
			continue
		}
		sub := replica.Submission{Envelope: it.Data}
		for _, o := range it.Objects {
			sub.Attachments = append(sub.Attachments, o.Data)
		}
		subs = append(subs, sub)
		idx = append(idx, i)
	}
	if len(subs) == 0 {
		return res, nil
	}
	outs, err := l.rep.Ingest(ctx, subs)
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
		l.notify(space)
	}
	return res, nil
}
