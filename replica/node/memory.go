package node

// This file is the node's memory spaces: CAT7 blocks kept as DAG entries of
// a space named MemoryPrefix+name, parents = lineage. A block whose lineage
// names a block the space does not hold is never re-rooted: put locally, it
// is refused (BLOCK_MISSING_PARENT); received from a peer, it is held
// pending in the store (durable, outside the space's DAG) while sync asks
// the peer that sent it for the missing ancestors by id (MissingFrom), and
// every reader is refused it with BLOCK_MISSING_PARENT until they arrive,
// when the store applies it. Such blocks are charged to that peer under the
// replica's pending bounds (Replica.ChargePending): a flood of them costs
// bounded disk. Memory spaces are not part of the replica: the
// node keeps them beside the sessions, in the same store
// (docs/deviations.md, "## node").

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/sync"
)

// MaxMemorySpaceName bounds a memory space's name (without the prefix).
const MaxMemorySpaceName = 128

// ErrBadSpaceName is returned for a memory space name that is empty, too
// long, or holds characters other than letters, digits, '-', '_' and '.'.
var ErrBadSpaceName = errors.New("node: bad memory space name")

// MemorySpace returns the store space of memory space name, given bare
// ("notes") or as the space sync and Heads name it ("mem:notes"): both
// spellings are accepted wherever a memory space is named.
func MemorySpace(name string) (string, error) {
	name = strings.TrimPrefix(name, MemoryPrefix)
	if name == "" || len(name) > MaxMemorySpaceName {
		return "", fmt.Errorf("%w: %q", ErrBadSpaceName, name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return "", fmt.Errorf("%w: %q", ErrBadSpaceName, name)
		}
	}
	return MemoryPrefix + name, nil
}

// knownIn answers memoryblock.Known from the store's applied entries of
// space, plus the ids in extra (blocks of a batch not yet put). The Known
// is built per call and closes over that call's ctx: memoryblock's
// interfaces take no context, and a context is never kept in a struct.
func (n *Node) knownIn(ctx context.Context, space string, extra map[dag.ID]bool) memoryblock.KnownFunc {
	return func(id dag.ID) bool {
		if extra[id] {
			return true
		}
		e, err := n.store.Get(ctx, id)
		return err == nil && e.Space == space
	}
}

// sourceIn answers memoryblock.Source from the store's applied entries of
// space, built per call like knownIn.
func (n *Node) sourceIn(ctx context.Context, space string) memoryblock.SourceFunc {
	return func(id dag.ID) (memoryblock.Block, bool) {
		e, err := n.store.Get(ctx, id)
		if err != nil || e.Space != space {
			return memoryblock.Block{}, false
		}
		b, err := memoryblock.DecodeEntry(e)
		if err != nil {
			return memoryblock.Block{}, false
		}
		return b, true
	}
}

// PutBlock verifies a block and stores it in memory space name. The block
// must verify (its hash is the hash of its fields) and every block of its
// lineage must be held in the space; else the error is a
// *memoryblock.Error with the refusal's code. Authority does not enter
// here: a space keeps whole blocks, and each reader sees the partition its
// own level accepts (Block). Putting a held block again is a no-op.
func (n *Node) PutBlock(ctx context.Context, name string, b memoryblock.Block) (dag.ID, error) {
	space, err := MemorySpace(name)
	if err != nil {
		return dag.ID{}, err
	}
	n.memMu.Lock()
	defer n.memMu.Unlock()
	// Level 0 is enough to judge the block as a whole: the hash and the
	// lineage do not depend on the level.
	res := memoryblock.AcceptBlock(b, 0, n.knownIn(ctx, space, nil))
	if res.Accepted == nil {
		// Not recorded in the quarantine: the client has its answer, and
		// the one refusal here besides a missing parent is a claimed hash
		// that is not the fields' hash, which under either hash would
		// mark a good block (or someone else's) as refused.
		return dag.ID{}, res.Err()
	}
	e := b.Entry(space)
	put, err := n.store.Put(ctx, dag.Batch{Entries: []dag.Entry{e}})
	if err != nil {
		return dag.ID{}, err
	}
	n.rep.ReleasePending(put.Applied) // pending blocks it completed
	n.notifyMemory(space, put.Applied)
	return e.ID, nil
}

// BlockRead is a block as a reader at some authority level sees it: the
// accepted half of the partition only.
type BlockRead struct {
	Hash     dag.ID                `json:"hash"`
	Space    string                `json:"space"`
	Level    memoryblock.Level     `json:"level"`
	Band     memoryblock.Band      `json:"band"`
	Accepted memoryblock.View      `json:"accepted"`
	Refused  []memoryblock.Refusal `json:"refused"`
	Fields   []memoryblock.Field   `json:"accepted_fields"`
	Finality replica.Finality      `json:"finality"`
}

// Block reads block id of memory space name at authority level: only the
// fields that level accepts. A block the space does not hold is
// dag.ErrNotFound.
func (n *Node) Block(ctx context.Context, name string, id dag.ID, level memoryblock.Level) (BlockRead, error) {
	space, err := MemorySpace(name)
	if err != nil {
		return BlockRead{}, err
	}
	b, ok := n.sourceIn(ctx, space)(id)
	if !ok {
		if err := n.heldPending(ctx, space, id); err != nil {
			return BlockRead{}, err
		}
		return BlockRead{}, fmt.Errorf("node: block %s in %s: %w", id, name, dag.ErrNotFound)
	}
	p := memoryblock.AcceptWithAuthority(b, level)
	refused := p.Refused
	if refused == nil {
		refused = []memoryblock.Refusal{}
	}
	return BlockRead{Hash: id, Space: name, Level: level, Band: level.Band(), Accepted: p.Accepted,
		Refused: refused, Fields: p.Accepted.Fields(), Finality: replica.Provisional}, nil
}

// heldPending returns the refusal of a block the store holds pending in
// space: its lineage has not been produced, so no reader may see it.
func (n *Node) heldPending(ctx context.Context, space string, id dag.ID) error {
	st, err := n.store.Has(ctx, id)
	if err != nil || st != dag.Pending {
		return err
	}
	missing, err := n.store.Missing(ctx, space)
	if err != nil {
		return err
	}
	return &memoryblock.Error{Code: memoryblock.CodeBlockMissingParent, Field: memoryblock.Lineage,
		Detail: fmt.Sprintf("held until its lineage arrives (the space lacks %d ancestor(s)); refusing rather than re-rooting", len(missing))}
}

// Ancestry walks block id's lineage in memory space name.
func (n *Node) Ancestry(ctx context.Context, name string, id dag.ID) (memoryblock.History, error) {
	space, err := MemorySpace(name)
	if err != nil {
		return memoryblock.History{}, err
	}
	src := n.sourceIn(ctx, space)
	if _, ok := src.Block(id); !ok {
		return memoryblock.History{}, fmt.Errorf("node: block %s in %s: %w", id, name, dag.ErrNotFound)
	}
	return memoryblock.Ancestry(id, src), nil
}

// MemorySpaces returns the names of the memory spaces the store holds.
func (n *Node) MemorySpaces(ctx context.Context) ([]string, error) {
	all, err := n.store.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range all {
		if name, ok := strings.CutPrefix(s, MemoryPrefix); ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// ingestBlocks takes memory blocks from a peer: each must verify and have
// its lineage held (or earlier in the same items); the valid ones are put
// in one batch.
func (n *Node) ingestBlocks(ctx context.Context, space string, items []sync.Item) (sync.IngestResult, error) {
	res := sync.IngestResult{Items: make([]sync.ItemResult, len(items))}
	n.memMu.Lock()
	defer n.memMu.Unlock()
	extra := map[dag.ID]bool{}
	known := n.knownIn(ctx, space, extra)
	var batch dag.Batch
	for i, it := range items {
		b, err := memoryblock.DecodeCanonical(it.Data)
		if err != nil {
			id := dag.Sum(it.Data)
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: dag.Code(memoryblock.CodeOf(err)), Reason: err.Error()}
			n.quarantineBlock(ctx, space, id, dag.Code(memoryblock.CodeOf(err)), err.Error())
			continue
		}
		id := b.ID()
		if known.Has(id) {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Duplicate}
			continue
		}
		if st, err := n.store.Has(ctx, id); err != nil {
			return res, err
		} else if st == dag.Pending {
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Pending}
			continue
		}
		r := memoryblock.AcceptBlock(b, 0, known)
		if r.Accepted == nil {
			code := memoryblock.CodeOf(r.Err())
			if code == memoryblock.CodeBlockMissingParent {
				// Held, not re-rooted: the store keeps it pending until
				// its lineage lands, and sync fetches what Missing lists.
				batch.Entries = append(batch.Entries, b.Entry(space))
				res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Pending, Reason: r.Err().Error()}
				continue
			}
			res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Quarantined, Code: dag.Code(code), Reason: r.Err().Error()}
			n.quarantineBlock(ctx, space, id, dag.Code(code), r.Err().Error())
			continue
		}
		batch.Entries = append(batch.Entries, b.Entry(space))
		extra[id] = true
		res.Items[i] = sync.ItemResult{ID: id, Outcome: sync.Accepted}
	}
	if len(batch.Entries) == 0 {
		return res, nil
	}
	put, err := n.store.Put(ctx, batch)
	if err != nil {
		return res, err
	}
	// Blocks waiting for their lineage count against the replica's pending
	// bounds, charged to the peer that sent them (docs/security.md); the
	// oldest past the bounds leave the store.
	n.rep.ReleasePending(put.Applied)
	pending := make(map[dag.ID]bool, len(put.Pending))
	for _, id := range put.Pending {
		pending[id] = true
	}
	var charge []dag.Entry
	for _, e := range batch.Entries {
		if pending[e.ID] {
			charge = append(charge, e)
			delete(pending, e.ID) // once, should the batch repeat it
		}
	}
	if err := n.rep.ChargePending(ctx, space, dag.SourceOf(ctx), charge); err != nil {
		return res, err
	}
	n.notifyMemory(space, put.Applied)
	return res, nil
}

// MemoryHeads returns the heads of memory space name: the blocks no held
// block names in its lineage.
func (n *Node) MemoryHeads(ctx context.Context, name string) ([]dag.ID, error) {
	space, err := MemorySpace(name)
	if err != nil {
		return nil, err
	}
	return n.store.Heads(ctx, space)
}

// SubscribeMemory calls fn with a memory space's name (without
// MemoryPrefix) and the ids of the blocks applied there (one PutBlock's
// block, a peer's batch, and any held block their arrival completed),
// after they were applied, until cancel is called. fn must not block; it
// may be called from any goroutine.
func (n *Node) SubscribeMemory(fn func(name string, blocks []dag.ID)) (cancel func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	id := n.next
	n.next++
	n.memSubs[id] = fn
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.memSubs, id)
	}
}

// notifyMemory tells the node's subscribers that blocks were applied in
// memory space space: every Subscribe (the space's name) and every
// SubscribeMemory (its name and the blocks), in subscription order.
func (n *Node) notifyMemory(space string, blocks []dag.ID) {
	n.notify(space)
	if len(blocks) == 0 {
		return
	}
	name, _ := strings.CutPrefix(space, MemoryPrefix)
	n.mu.Lock()
	ids := make([]int, 0, len(n.memSubs))
	for id := range n.memSubs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fns := make([]func(string, []dag.ID), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, n.memSubs[id])
	}
	n.mu.Unlock()
	for _, fn := range fns {
		fn(name, slices.Clone(blocks))
	}
}

// quarantineBlock records that block id of space, sent by
// dag.SourceOf(ctx), was refused for good with code: in the replica's
// bounded quarantine record, beside refused envelopes (GET /quarantine).
// A block refused for a missing parent is not recorded: it may come again
// with its ancestors.
func (n *Node) quarantineBlock(ctx context.Context, space string, id dag.ID, code dag.Code, reason string) {
	n.rep.RecordRefusal(ctx, space, id, code, reason)
}

// ErrSpaceName is wrapped for a space named neither as a session
// ("sha256:…") nor as a memory space ("mem:NAME").
var ErrSpaceName = errors.New("node: not a space name")

// CheckSpace reports whether space is spelt as the node's spaces are: a
// session id, or MemoryPrefix and a memory space name. A bare memory
// space name ("notes") is refused with a hint to write "mem:notes"; Heads,
// Join and Connect refuse what it refuses, so a misspelt space is an
// error, never an empty answer.
func CheckSpace(space string) error {
	if _, err := dag.ParseID(space); err == nil {
		return nil
	}
	if rest, ok := strings.CutPrefix(space, MemoryPrefix); ok {
		if _, err := MemorySpace(rest); err != nil || strings.HasPrefix(rest, MemoryPrefix) {
			if err == nil {
				err = ErrBadSpaceName
			}
			return fmt.Errorf("%w: %q: %w", ErrSpaceName, space, err)
		}
		return nil
	}
	if _, err := MemorySpace(space); err == nil {
		return fmt.Errorf("%w: %q is neither a session id nor a memory space: write %s%s for the memory space %s", ErrSpaceName, space, MemoryPrefix, space, space)
	}
	return fmt.Errorf("%w: %q is neither a session id (sha256:…) nor %sNAME", ErrSpaceName, space, MemoryPrefix)
}
