package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
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
// 0.45–0.50 s without those records against 0.61–0.76 s with them
// (docs/storage.md, "Applied entries' status in memory").
//
// Visibility follows Badger's. The index keeps its records in the order
// they were added, and a Put's transaction adds its entries as it writes
// them; a transaction that is not dispatched takes them out again
// (Store.commit). Commits land in the order their transactions were
// written, and Store.landed counts the records of those whose Badger
// commit returned. So a record below landed is in every Badger view begun
// after landed was read, and one above it is in a view only if its log run
// is (inView). A Put reads every record: its own, and those of the
// commits still in flight before it, which its transaction reads through
// as well (wtxn.prev).

// appliedRec is an applied entry's status: its space number and log
// position, and its body number and that body's run (seq − delta).
type appliedRec struct {
	sid   uint32
	delta uint32 // seq − run; 0 in memory, where a body is its own run
	pos   uint64
	seq   uint64
}

func (r appliedRec) body() bref { return bref{r.seq, r.seq - uint64(r.delta)} }

type appliedSlot struct {
	id [32]byte
	appliedRec
}

const (
	appliedChunkBits = 14 // 16,384 records (896 KiB) a chunk
	appliedChunk     = 1 << appliedChunkBits
)

// appliedIndex maps the ids of the applied entries to their status: 56
// bytes a record, in chunks that are not copied once full, and a hash table of
// 4-byte record numbers, open-addressed (linear probing) and at most three
// quarters full, which the ids hash into with a seed of the process's own,
// so that ids ground to collide cannot make long probes. A Go map took
// 95–150 bytes an entry (BenchmarkOpenApplied).
type appliedIndex struct {
	mu     sync.RWMutex
	seed   maphash.Seed
	chunks [][]appliedSlot
	n      int      // records held
	table  []uint32 // record number + 1, 0 for none; a power of two long
}

func newAppliedIndex(n int) *appliedIndex {
	x := &appliedIndex{seed: maphash.MakeSeed()}
	x.sizeTable(n)
	return x
}

func (x *appliedIndex) slot(i int) *appliedSlot {
	return &x.chunks[i>>appliedChunkBits][i&(appliedChunk-1)]
}

func (x *appliedIndex) home(d *[32]byte) int {
	return int(maphash.Bytes(x.seed, d[:]) & uint64(len(x.table)-1))
}

// sizeTable makes a table for n records and puts the records held in it.
func (x *appliedIndex) sizeTable(n int) {
	size := 1024
	for size*3/4 < n {
		size *= 2
	}
	x.table = make([]uint32, size)
	for i := range x.n {
		x.place(i)
	}
}

func (x *appliedIndex) place(i int) {
	mask := len(x.table) - 1
	j := x.home(&x.slot(i).id)
	for x.table[j] != 0 {
		j = (j + 1) & mask
	}
	x.table[j] = uint32(i + 1)
}

// get returns the status of id and the number of its record.
func (x *appliedIndex) get(id dag.ID) (appliedRec, uint64, bool) {
	d := id.Digest()
	x.mu.RLock()
	defer x.mu.RUnlock()
	mask := len(x.table) - 1
	for j := x.home(&d); x.table[j] != 0; j = (j + 1) & mask {
		if sl := x.slot(int(x.table[j] - 1)); sl.id == d {
			return sl.appliedRec, uint64(x.table[j] - 1), true
		}
	}
	return appliedRec{}, 0, false
}

// add adds the record of id, which the index does not hold.
func (x *appliedIndex) add(d *[32]byte, r appliedRec) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.n == 1<<32-1 {
		panic("badgerstore: more than 4,294,967,294 applied entries")
	}
	c := x.n >> appliedChunkBits
	if c == len(x.chunks) {
		// The first chunk grows as a slice does, so that a small store
		// holds a small one; the others are made whole.
		x.chunks = append(x.chunks, make([]appliedSlot, 0, min(appliedChunk, max(64, x.n))))
	}
	x.chunks[c] = append(x.chunks[c], appliedSlot{*d, r})
	x.n++
	if x.n > len(x.table)*3/4 {
		x.sizeTable(x.n)
	} else {
		x.place(x.n - 1)
	}
}

// truncate takes out the records from the n-th on: those of a transaction
// that was not dispatched, the last written. Rare (Badger refused the
// transaction), it builds the table again.
func (x *appliedIndex) truncate(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n >= x.n {
		return
	}
	x.n = n
	x.chunks = x.chunks[:(n+appliedChunk-1)>>appliedChunkBits]
	if c := len(x.chunks) - 1; c >= 0 {
		x.chunks[c] = x.chunks[c][:n-c<<appliedChunkBits]
	}
	x.sizeTable(n)
}

func (x *appliedIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// each calls fn with every record the index holds, in the order added.
func (x *appliedIndex) each(fn func(d *[32]byte, r appliedRec)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := range x.n {
		sl := x.slot(i)
		fn(&sl.id, sl.appliedRec)
	}
}

// inView reports whether the Badger view txn holds record r of id, the
// index's i-th; at is Store.landed read before the view began.
func inView(txn *badger.Txn, at uint64, id dag.ID, r appliedRec, i uint64) (bool, error) {
	if i < at {
		return true, nil
	}
	// Its commit had not landed when the view began: the view holds it
	// only if it holds its log run.
	c := newRunCursor(txn, r.sid)
	defer c.close()
	got, ok, err := c.at(r.pos)
	return err == nil && ok && got == id, err
}

// appliedOf returns the status of applied entry id as the reader g sees
// it: a Put's transaction (wtxn) sees every entry the index holds, a view
// (rtxn) those inView.
func (s *Store) appliedOf(g getter, id dag.ID) (appliedRec, bool, error) {
	r, i, ok := s.applied.get(id)
	if t, view := g.(rtxn); ok && view {
		if ok, err := inView(t.Txn, t.at, id, r, i); !ok {
			return appliedRec{}, false, err
		}
	}
	return r, ok, nil
}

// viewAt runs fn in a view as view does, with the last commit landed
// before it began, for inView.
func (s *Store) viewAt(ctx context.Context, fn func(txn rtxn) error) error {
	at := s.landed.Load()
	return s.view(ctx, func(txn *badger.Txn) error { return fn(rtxn{txn, at}) })
}

// loadApplied builds the index of the applied entries from the log runs:
// each names its entries' ids and body numbers, its key the space and the
// first position. On disk a body number's run is the body run that starts
// at or before it (one per transaction), found among the d keys.
func loadApplied(db *badger.DB, inMemory bool) (*appliedIndex, error) {
	var x *appliedIndex
	err := db.View(func(txn *badger.Txn) error {
		// Sized at once for the entries the spaces' next positions count.
		n := 0
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pSpace}})
		for it.Rewind(); it.Valid(); it.Next() {
			err := it.Item().Value(func(v []byte) error {
				if len(v) != 12 {
					return fmt.Errorf("%w: space %q", errCorrupt, it.Item().Key()[1:])
				}
				n += int(binary.BigEndian.Uint64(v[4:]) - 1)
				return nil
			})
			if err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		x = newAppliedIndex(n)
		var runs []uint64
		if !inMemory {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pData}, PrefetchValues: false})
			for it.Rewind(); it.Valid(); it.Next() {
				k := it.Item().Key()
				if len(k) != 9 {
					it.Close()
					return fmt.Errorf("%w: body key %x", errCorrupt, k)
				}
				runs = append(runs, binary.BigEndian.Uint64(k[1:]))
			}
			it.Close()
		}
		var seqs []uint64
		it = txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pLog}})
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
					x.add((*[32]byte)(ids[32*i:32*i+32]), r)
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
