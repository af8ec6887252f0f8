package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/witan-dev/witan/dag"
)

// The applied entries' status records live in memory (format 12), not in
// Badger's tree. Each applied entry is named, with its body number, by
// the log run its transaction wrote, so the log runs are the durable
// record and Open rebuilds the index from them (loadApplied). A record
// per entry in the tree, keyed by its random id, was most of what Badger
// did for a write: its memtable insert, its log bytes and their msync,
// and the level-0 tables it filled. A fresh sync of 100k entries took
// 0.56–0.63 s without those records against 0.64–0.76 s with them
// (docs/storage.md, "Format 12").
//
// Visibility follows Badger's. A Put's transaction adds its entries as it
// writes them, tagged with its number (gen); a transaction that is not
// dispatched takes them out again (Store.commit). Store.landed is the
// number of the last transaction whose Badger commit returned; commits
// land in the order of their numbers. So an entry with gen <= landed is
// in every Badger view begun after landed was read, and one with a
// larger gen is in a view only if its log run is (appliedIn). A Put reads
// every entry the index holds: its own, and those of the commits still in
// flight before it, which its transaction reads through as well (wtxn.prev).

// appliedRec is an applied entry's status: its space number and log
// position, its body number and that body's run (seq − delta), and the
// transaction that applied it.
type appliedRec struct {
	sid   uint32
	delta uint32 // seq − run; 0 in memory, where a body is its own run
	pos   uint64
	seq   uint64
	gen   uint64
}

func (r appliedRec) body() bref { return bref{r.seq, r.seq - uint64(r.delta)} }

// appliedIndex maps the ids of the applied entries to their status.
type appliedIndex struct {
	mu sync.RWMutex
	m  map[[32]byte]appliedRec
}

func newAppliedIndex(n int) *appliedIndex {
	return &appliedIndex{m: make(map[[32]byte]appliedRec, n)}
}

func (x *appliedIndex) get(id dag.ID) (appliedRec, bool) {
	d := id.Digest()
	x.mu.RLock()
	r, ok := x.m[d]
	x.mu.RUnlock()
	return r, ok
}

func (x *appliedIndex) add(d *[32]byte, r appliedRec) {
	x.mu.Lock()
	x.m[*d] = r
	x.mu.Unlock()
}

// drop takes out the entries of ids that transaction gen added.
func (x *appliedIndex) drop(gen uint64, ids []dag.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		d := id.Digest()
		if r, ok := x.m[d]; ok && r.gen == gen {
			delete(x.m, d)
		}
	}
}

func (x *appliedIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.m)
}

// each calls fn with every id the index holds, in no order.
func (x *appliedIndex) each(fn func(d *[32]byte)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for d := range x.m {
		fn(&d)
	}
}

// appliedIn returns the status of applied entry id as the Badger view txn
// sees it; at is Store.landed read before the view began.
func (s *Store) appliedIn(txn *badger.Txn, at uint64, id dag.ID) (appliedRec, bool, error) {
	if !s.ids.mayHold(id) {
		return appliedRec{}, false, nil
	}
	r, ok := s.applied.get(id)
	if !ok || r.gen <= at {
		return r, ok, nil
	}
	// Its commit had not landed when the view began: the view holds it
	// only if it holds its log run.
	c := newRunCursor(txn, r.sid)
	defer c.close()
	got, ok, err := c.at(r.pos)
	if err != nil || !ok || got != id {
		return appliedRec{}, false, err
	}
	return r, true, nil
}

// appliedOf returns the status of applied entry id as the reader g sees
// it: a Put's transaction (wtxn) sees every entry the index holds, a view
// (rtxn) what appliedIn says.
func (s *Store) appliedOf(g getter, id dag.ID) (appliedRec, bool, error) {
	if t, ok := g.(rtxn); ok {
		return s.appliedIn(t.Txn, t.at, id)
	}
	if !s.ids.mayHold(id) {
		return appliedRec{}, false, nil
	}
	r, ok := s.applied.get(id)
	return r, ok, nil
}

// viewAt runs fn in a view as view does, with the last commit landed
// before it began, for appliedIn.
func (s *Store) viewAt(ctx context.Context, fn func(txn rtxn) error) error {
	at := s.landed.Load()
	return s.view(ctx, func(txn *badger.Txn) error { return fn(rtxn{txn, at}) })
}

// loadApplied builds the index of the applied entries from the log runs:
// each names its entries' ids and body numbers, its key the space and the
// first position. On disk a body number's run is the body run that starts
// at or before it (one per transaction), found among the d keys.
func loadApplied(db *badger.DB, inMemory bool) (*appliedIndex, error) {
	var runs []uint64
	if !inMemory {
		err := db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pData}})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				k := it.Item().Key()
				if len(k) != 9 {
					return fmt.Errorf("%w: body key %x", errCorrupt, k)
				}
				runs = append(runs, binary.BigEndian.Uint64(k[1:]))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	x := newAppliedIndex(0)
	var seqs []uint64
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pLog}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != 13 {
				return fmt.Errorf("%w: log key %x", errCorrupt, k)
			}
			sid, first := binary.BigEndian.Uint32(k[1:]), binary.BigEndian.Uint64(k[5:])
			err := it.Item().Value(func(v []byte) error {
				ids, sb, err := decodeRun(v)
				if err != nil {
					return fmt.Errorf("%w: log run at %d of space %d: %v", errCorrupt, first, sid, err)
				}
				if seqs, err = runSeqs(seqs[:0], sb, len(ids)/32); err != nil {
					return fmt.Errorf("%w: log run at %d of space %d: %v", errCorrupt, first, sid, err)
				}
				for i, seq := range seqs {
					r := appliedRec{sid: sid, pos: first + uint64(i), seq: seq}
					if !inMemory {
						j, found := slices.BinarySearch(runs, seq)
						if !found {
							j--
						}
						if j < 0 || seq-runs[j] > 1<<32-1 {
							return fmt.Errorf("%w: no body run holds body %d", errCorrupt, seq)
						}
						r.delta = uint32(seq - runs[j])
					}
					x.m[[32]byte(ids[32*i:32*i+32])] = r
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return x, err
}
