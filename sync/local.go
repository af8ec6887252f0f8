package sync

import (
	"context"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// Local is what sync needs from the local replica. The replica package
// implements it directly; sync/synctest has a small real one for tests.
//
// The reads are the dag.Store's. Ingest is the only write: sync never puts
// into a store itself, so everything a peer sends passes the same checks as
// a local submission.
type Local interface {
	dag.Getter
	dag.Haser
	dag.ObjectGetter
	dag.Index

	// Refs returns the ids of the objects applied entry e refers to (an MR
	// body, a rule text, an attachment), which travel with it. An entry
	// that refers to none returns none.
	Refs(ctx context.Context, e dag.Entry) ([]dag.ID, error)

	// Quarantined reports whether id was refused, and with which code. A
	// quarantined id is never asked for again.
	Quarantined(ctx context.Context, id dag.ID) (code dag.Code, ok bool, err error)

	// Ingest validates items received from a peer for space exactly like
	// local submissions and stores the valid ones, in one or more atomic
	// batches. It reports, per item and in the items' order, what became of
	// it. Invalid items are quarantined (remembered by id, with their code
	// and reason), never returned as an error: the error is for local
	// failures only (a broken store, a cancelled ctx), after which sync
	// stops.
	Ingest(ctx context.Context, space string, items []Item) (IngestResult, error)

	// Subscribe calls fn with a space's name after entries were applied
	// there (by a local submission or by Ingest), until cancel is called.
	// fn must not block; it may be called from any goroutine.
	Subscribe(fn func(space string)) (cancel func())
}

// SourceMissing is implemented by a Local that charges the entries waiting
// for parents to the peer that sent them (the replica does: Ingest's ctx
// names the peer with dag.WithSource, "peer:<id>"). MissingFrom returns
// the parents, neither held nor refused, of the pending entries of space
// that source sent; a pull asks a peer for those only.
type SourceMissing interface {
	MissingFrom(ctx context.Context, space, source string) ([]dag.ID, error)
}

// Preparer is implemented by a Local that can do, ahead of Ingest, the
// part of it that reads nothing Ingest writes: decoding entries and
// checking their signatures. A requester calls Prepare with each batch as
// it arrives, on the goroutine that reads the stream, so that the batch is
// verified while the one before it is judged and written by Ingest; the
// same items then go to Ingest, their bytes unchanged, with whatever
// Prepare set in their Prepared. Prepare must not change what Ingest
// decides, only how much of the work is left for it: an entry it did not
// check (or forgot) is checked by Ingest.
type Preparer interface {
	Prepare(ctx context.Context, space string, items []Item)
}

// LogReader is implemented by a Local that reads a run of a space's log
// with its entries in one go (dag/badgerstore's LogEntries, through the
// node): LogEntries is Log followed by Get of each id, and the responder
// serves a space's whole log with it when the Local has it.
type LogReader interface {
	LogEntries(ctx context.Context, space string, after uint64, limit int) ([]dag.Entry, error)
}

// Item is one entry as it travels: its canonical bytes, which the receiving
// replica decodes itself (ids, parents and space are recomputed, never
// taken from the peer), and the objects it refers to.
type Item struct {
	Data    []byte
	Objects []dag.Object
	// Prepared is what the Local's Prepare (Preparer) left with the item
	// for its own Ingest, such as the entry decoded; nil otherwise. sync
	// carries it from Prepare to Ingest untouched and never sends it.
	Prepared any
}

// Outcome is what Ingest did with one item.
type Outcome uint8

const (
	// Accepted: valid and applied (its parents were all present).
	Accepted Outcome = iota + 1
	// Pending: valid so far and stored, but waiting for parents.
	Pending
	// Duplicate: already held (applied or pending) or already refused;
	// for an entry already refused, Code is its quarantine code, which
	// sync counts against the peer that sent it again.
	Duplicate
	// Quarantined: refused; Code and Reason say why.
	Quarantined
)

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Pending:
		return "pending"
	case Duplicate:
		return "duplicate"
	case Quarantined:
		return "quarantined"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// ItemResult is the outcome of one item. ID is the entry's id; for bytes
// that do not even decode it is the SHA-256 of the bytes.
type ItemResult struct {
	ID      dag.ID
	Outcome Outcome
	Code    dag.Code
	Reason  string
}

// IngestResult holds one ItemResult per ingested item, in order.
type IngestResult struct {
	Items []ItemResult
}

// Count returns how many items had outcome o.
func (r IngestResult) Count(o Outcome) int {
	n := 0
	for _, it := range r.Items {
		if it.Outcome == o {
			n++
		}
	}
	return n
}
