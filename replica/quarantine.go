package replica

// The quarantine: a bounded record of what the replica refused. Nothing
// refused is stored (docs/security.md): the record is what is left of it,
// in memory, so that a peer is not asked again for an entry already
// refused and an operator can see what came and why. It is bounded per
// source (a peer, an HTTP client) and in all, and forgets the oldest
// first: a source that floods it evicts its own records before anyone
// else's.

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// Defaults of the quarantine's bounds (Options.QuarantinePerSource and
// Options.QuarantineMax).
const (
	DefaultQuarantinePerSource = 1024
	DefaultQuarantineMax       = 16384
)

// Refusal is one record of the quarantine: an entry the replica refused,
// why, who sent it and when. Seq orders the records (it pages them).
type Refusal struct {
	Seq    uint64    `json:"seq"`
	ID     dag.ID    `json:"id"`
	Space  string    `json:"space"`
	Code   dag.Code  `json:"code"`
	Reason string    `json:"reason"`
	Source string    `json:"source"`
	Time   time.Time `json:"time"`
}

// QuarantineStats counts the quarantine's records.
type QuarantineStats struct {
	// Held is the number of records kept now.
	Held int `json:"held"`
	// Refused counts every refusal recorded since Open.
	Refused uint64 `json:"refused"`
	// Evicted counts the records forgotten to stay within the bounds.
	Evicted uint64 `json:"evicted"`
	// Sources is the number of sources with records kept now.
	Sources int `json:"sources"`
}

// quarantine is the bounded record. Not safe for concurrent use (the
// Replica's mutex guards it).
type quarantine struct {
	perSource, max int
	seq            uint64
	byID           map[dag.ID]*Refusal
	bySource       map[string][]*Refusal // oldest first; stale records skipped
	all            []*Refusal            // oldest first; stale records skipped
	refused        uint64
	evicted        uint64
}

func newQuarantine(perSource, max int) *quarantine {
	if perSource <= 0 {
		perSource = DefaultQuarantinePerSource
	}
	if max <= 0 {
		max = DefaultQuarantineMax
	}
	return &quarantine{perSource: perSource, max: max, byID: map[dag.ID]*Refusal{}, bySource: map[string][]*Refusal{}}
}

func (q *quarantine) live(r *Refusal) bool { return q.byID[r.ID] == r }

// MaxRefusalReason bounds the reason a record keeps, in bytes: a reason
// may quote what the sender sent.
const MaxRefusalReason = 1024

// add records a refusal, evicting the source's oldest record past its
// bound and the oldest of all past the total.
func (q *quarantine) add(r Refusal) {
	if old := q.byID[r.ID]; old != nil {
		return // refused already: the first record stands
	}
	if len(r.Reason) > MaxRefusalReason {
		r.Reason = strings.ToValidUTF8(r.Reason[:MaxRefusalReason], "") + "…"
	}
	q.seq++
	r.Seq = q.seq
	rec := &r
	q.byID[r.ID] = rec
	q.bySource[r.Source] = append(q.bySource[r.Source], rec)
	q.all = append(q.all, rec)
	q.refused++
	if n := q.count(r.Source); n > q.perSource {
		q.evictOldest(r.Source)
	}
	for len(q.byID) > q.max {
		q.evictOldest("")
	}
	if len(q.all) > 64 && len(q.all) > 2*len(q.byID) {
		q.all = slices.DeleteFunc(q.all, func(x *Refusal) bool { return !q.live(x) })
	}
}

// count compacts the source's queue and returns its live records.
func (q *quarantine) count(src string) int {
	l := q.bySource[src]
	if len(l) > 2*q.perSource {
		l = slices.DeleteFunc(l, func(x *Refusal) bool { return !q.live(x) })
		q.bySource[src] = l
	}
	n := 0
	for _, x := range l {
		if q.live(x) {
			n++
		}
	}
	return n
}

// evictOldest forgets the oldest live record of src ("" = of all).
func (q *quarantine) evictOldest(src string) {
	for len(q.all) > 0 && !q.live(q.all[0]) {
		q.all = q.all[1:]
	}
	l := q.all
	if src != "" {
		l = q.bySource[src]
	}
	for _, x := range l {
		if q.live(x) {
			q.drop(x)
			q.evicted++
			return
		}
	}
}

func (q *quarantine) drop(x *Refusal) {
	delete(q.byID, x.ID)
	l := slices.DeleteFunc(q.bySource[x.Source], func(y *Refusal) bool { return y == x || !q.live(y) })
	if len(l) == 0 {
		delete(q.bySource, x.Source)
	} else {
		q.bySource[x.Source] = l
	}
}

// get returns the record of id, if kept.
func (q *quarantine) get(id dag.ID) (*Refusal, bool) {
	r, ok := q.byID[id]
	return r, ok
}

// page returns up to limit records of space ("" = every space) with Seq
// after after, oldest first, and whether more follow.
func (q *quarantine) page(space string, after uint64, limit int) ([]Refusal, bool) {
	var out []Refusal
	for _, r := range q.all {
		if !q.live(r) || r.Seq <= after || (space != "" && r.Space != space) {
			continue
		}
		if limit > 0 && len(out) == limit {
			return out, true
		}
		out = append(out, *r)
	}
	return out, false
}

// rejections returns the records of space as rejections, sorted by id.
func (q *quarantine) rejections(space string) []house.Rejection {
	var out []house.Rejection
	for _, r := range q.all {
		if q.live(r) && r.Space == space {
			out = append(out, house.Rejection{ID: r.ID, Code: r.Code, Detail: r.Reason})
		}
	}
	slices.SortFunc(out, func(a, b house.Rejection) int { return a.ID.Compare(b.ID) })
	return out
}

func (q *quarantine) stats() QuarantineStats {
	return QuarantineStats{Held: len(q.byID), Refused: q.refused, Evicted: q.evicted, Sources: len(q.bySource)}
}

// RecordRefusal records in the quarantine an entry of space that was
// refused for good outside the replica's own ingest (a node's memory
// block that does not verify: replica/node), so that it shares the one
// bounded record with refused envelopes: who sent it is dag.SourceOf(ctx),
// when is the Clock's time. Nothing of the entry is stored; the record is
// kept like every other (per source and in all, oldest forgotten first),
// and Refused, Refusals and QuarantineStats answer for it. An id the
// record already holds keeps its first record.
func (r *Replica) RecordRefusal(ctx context.Context, space string, id dag.ID, code dag.Code, reason string) {
	r.lock()
	defer r.mu.Unlock()
	r.quar.add(Refusal{ID: id, Space: space, Code: code, Reason: reason, Source: dag.SourceOf(ctx), Time: r.clock().UTC()})
}
