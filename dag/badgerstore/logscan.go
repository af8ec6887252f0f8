package badgerstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/witan-dev/witan/dag"
)

// Bounds of ScanLog. A page holds at most scanPageEntries entries and
// stops at the first entry that takes it past scanPageBytes of bodies; at
// most scanAhead pages wait for the caller beside the one it handles and
// the one being read, so a scan holds a few MiB whatever the log's size.
// One read transaction serves the scan while the caller keeps up; it is
// ended (and a new one begun at the next position when the caller is
// ready again) when a page has waited scanPause for the caller, or when
// it has been open scanHold: a view holds off the body files' GC (which
// waits for every view, and every view begun after it waits for it), so
// no view may wait on a slow peer.
const (
	scanPageEntries = 512
	scanPageBytes   = 1 << 20
	scanAhead       = 2
	scanPause       = 20 * time.Millisecond
	scanHold        = 500 * time.Millisecond
)

var (
	errScanPause = errors.New("scan paused")
	errScanEnd   = errors.New("scan ended")
)

// ScanLog calls fn with the applied entries of space in log order, starting
// after position after, at most limit of them (0: all), in pages of at most
// 512 entries and about 1 MiB, as LogEntries called page after page would,
// but reading them in one pass: the log's runs are each decoded once, and
// the bodies read in file order, by a goroutine that stays at most two
// pages ahead of fn, in one read transaction while fn keeps up (see the
// bounds above: a slow fn ends it and the scan goes on in a new one, at
// the same position). fn may keep the entries; it must not keep the slice.
// On disk, the entries read together (up to about 1 MiB of bodies) share
// one allocation for their data and one for their parents, each entry's
// slices capped at its own end: keeping one keeps those. An error from fn
// ends the scan with it. sync's responder serves a
// space's whole log with it (sync.LogScanner, through the node).
func (s *Store) ScanLog(ctx context.Context, space string, after uint64, limit int, fn func([]dag.Entry) error) error {
	sid, ok := s.sidOf(space)
	if !ok || after == 1<<64-1 {
		return s.check(ctx)
	}
	end := uint64(1<<64 - 1)
	if limit > 0 && after < end-uint64(limit) {
		end = after + uint64(limit)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan []dag.Entry, scanAhead)
	done := make(chan error, 1)
	go func() {
		done <- s.scanPages(ctx, sid, space, after+1, end, pages)
		close(pages)
	}()
	for page := range pages {
		if err := fn(page); err != nil {
			cancel()
			for range pages { // let the reader end
			}
			<-done
			return err
		}
	}
	return <-done
}

// scanPages reads the log of space sid from position next to end (both
// included) into pages, in views bounded as ScanLog says.
func (s *Store) scanPages(ctx context.Context, sid uint32, space string, next, end uint64, pages chan<- []dag.Entry) error {
	var waiting []dag.Entry // a page read that the caller has not taken
	for {
		if waiting != nil {
			select {
			case pages <- waiting:
				waiting = nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := s.view(ctx, func(txn *badger.Txn) error {
			sc := newLogScan(s, txn, sid, space, next)
			defer sc.close()
			opened := time.Now()
			var pause *time.Timer
			defer func() {
				if pause != nil {
					pause.Stop()
				}
			}()
			for next <= end {
				page, err := sc.page(end)
				if err != nil {
					return err
				}
				if len(page) == 0 {
					return errScanEnd
				}
				next += uint64(len(page))
				select {
				case pages <- page:
				default:
					if pause == nil {
						pause = time.NewTimer(scanPause)
					} else {
						pause.Reset(scanPause)
					}
					select {
					case pages <- page:
					case <-pause.C:
						waiting = page
						return errScanPause
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				if time.Since(opened) > scanHold {
					return errScanPause
				}
			}
			return errScanEnd
		})
		switch {
		case errors.Is(err, errScanEnd):
			if waiting != nil {
				select {
				case pages <- waiting:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		case errors.Is(err, errScanPause):
		case err != nil:
			return err
		}
	}
}

// logScan reads a space's log in order within one view: its log runs with
// one iterator, each decoded once, and its bodies' locations with another.
type logScan struct {
	s     *Store
	txn   *badger.Txn
	sid   uint32
	space string
	next  uint64 // the position to read next

	logIt   *badger.Iterator
	started bool
	first   uint64   // the position of the current log run's first id
	ids     []byte   // its ids, 32 bytes each (a copy)
	seqs    []uint64 // their body numbers

	dataIt   *badger.Iterator // pData; reverse on disk (runAt)
	body     bodyRun
	bodyLocs []loc

	// A page's scratch, kept for the next: its ids, body numbers and
	// locations in log order, the same by number, and the buffer bodies
	// are read into (readLogBodies). Nothing a page returns points into
	// them.
	pIDs   []dag.ID
	pSeqs  []uint64
	pLocs  []loc
	pRefs  []logRef
	pByNum []loc
	buf    []byte
}

func newLogScan(s *Store, txn *badger.Txn, sid uint32, space string, next uint64) *logScan {
	sc := &logScan{s: s, txn: txn, sid: sid, space: space, next: next}
	sc.logIt = txn.NewIterator(badger.IteratorOptions{Prefix: key(pLog, sidb(sid))})
	sc.dataIt = txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pData}, Reverse: s.bl != nil})
	return sc
}

func (sc *logScan) close() {
	sc.logIt.Close()
	sc.dataIt.Close()
}

// seek positions the log iterator at the run holding sc.next: the last one
// starting at or before it.
func (sc *logScan) seek() {
	prefix := key(pLog, sidb(sc.sid))
	rev := sc.txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
	start := prefix
	if rev.Seek(key(pLog, sidb(sc.sid), posb(sc.next))); rev.Valid() {
		start = rev.Item().KeyCopy(nil)
	}
	rev.Close()
	sc.logIt.Seek(start)
}

// run reads the log run at the iterator into sc, and reports whether there
// was one.
func (sc *logScan) run() (bool, error) {
	if !sc.logIt.Valid() {
		return false, nil
	}
	prefix := key(pLog, sidb(sc.sid))
	k := sc.logIt.Item().Key()
	if len(k) != len(prefix)+8 {
		return false, fmt.Errorf("%w: log key %x", errCorrupt, k)
	}
	first := binary.BigEndian.Uint64(k[len(prefix):])
	err := sc.logIt.Item().Value(func(v []byte) error {
		ids, enc, err := decodeRun(v)
		if err == nil {
			sc.seqs, err = runSeqs(sc.seqs[:0], enc, len(ids)/32)
		}
		if err != nil {
			return fmt.Errorf("%w: log run at %d: %v", errCorrupt, first, err)
		}
		sc.ids = append(sc.ids[:0], ids...)
		return nil
	})
	if err != nil {
		return false, err
	}
	if first > sc.next {
		return false, fmt.Errorf("%w: log of space %d has no position %d (next run at %d)", errCorrupt, sc.sid, sc.next, first)
	}
	sc.first = first
	return true, nil
}

// page reads the entries from sc.next on, up to position end, within the
// bounds of a page; none at the log's end.
func (sc *logScan) page(end uint64) ([]dag.Entry, error) {
	var (
		ids  = sc.pIDs[:0]
		seqs = sc.pSeqs[:0]
		locs = sc.pLocs[:0]
		out  []dag.Entry // in memory, read as they come
		size int
	)
	defer func() { sc.pIDs, sc.pSeqs, sc.pLocs = ids, seqs, locs }()
	for len(ids) < scanPageEntries && size < scanPageBytes && sc.next <= end {
		if !sc.started || sc.next-sc.first >= uint64(len(sc.seqs)) {
			if !sc.started {
				sc.seek()
				sc.started = true
			} else if sc.logIt.Valid() {
				sc.logIt.Next()
			}
			ok, err := sc.run()
			if err != nil {
				return nil, err
			}
			if !ok || sc.next-sc.first >= uint64(len(sc.seqs)) {
				break // the log ends before sc.next
			}
		}
		i := sc.next - sc.first
		id, seq := idFrom(sc.ids[32*i:]), sc.seqs[i]
		if sc.s.bl != nil {
			if !sc.body.holds(seq) {
				run, ok, err := runAt(sc.dataIt, seq)
				if err != nil {
					return nil, err
				} else if !ok {
					return nil, fmt.Errorf("%w: no body for %s", errCorrupt, id)
				}
				sc.body, sc.bodyLocs = run, run.locs()
			}
			l := sc.bodyLocs[seq-sc.body.first]
			if l.n == 0 {
				return nil, fmt.Errorf("%w: no body for %s", errCorrupt, id)
			}
			locs = append(locs, l)
			size += l.n
		} else {
			// In memory each body is its own key.
			e, err := sc.memBody(id, seq)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			size += len(e.Data)
		}
		ids = append(ids, id)
		seqs = append(seqs, seq)
		sc.next++
	}
	if sc.s.bl == nil || len(ids) == 0 {
		return out, nil
	}
	// The bodies are read in number order (file order).
	out = make([]dag.Entry, len(ids))
	refs := sc.pRefs[:0]
	for i, seq := range seqs {
		refs = append(refs, logRef{seq, i})
	}
	slices.SortStableFunc(refs, func(a, b logRef) int { return cmp.Compare(a.seq, b.seq) })
	sorted := sc.pByNum[:0]
	for _, r := range refs {
		sorted = append(sorted, locs[r.i])
	}
	sc.pRefs, sc.pByNum = refs, sorted
	return out, sc.s.readLogBodies(sc.space, ids, refs, sorted, out, &sc.buf)
}

// memBody reads body seq of entry id from an in-memory store.
func (sc *logScan) memBody(id dag.ID, seq uint64) (e dag.Entry, err error) {
	it, want := sc.dataIt, dataKey(seq)
	if it.Seek(want); !it.Valid() || !bytes.Equal(it.Item().Key(), want) {
		return e, fmt.Errorf("%w: no body for %s", errCorrupt, id)
	}
	err = it.Item().Value(func(v []byte) error {
		e, err = decodeBody(id, v)
		return err
	})
	e.Space = sc.space
	return e, err
}
