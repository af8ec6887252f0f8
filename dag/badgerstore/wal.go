package badgerstore

// The commit log of a store on disk. Badger makes a commit durable by
// msync of its memtable's log, a shared mmap: each sync write-protects the
// pages again, and the next writes fault them back, which cost the ingest
// more than a fifth of its time (docs/storage.md, "The commit log"). So
// Badger runs with SyncWrites off, and the store keeps its own log of what
// each transaction writes: before a transaction commits, its writes (keys,
// values, deletions, in order, and the store's commit number keyWALSeq)
// are appended to commits.wal as one record with one write and made
// durable with fdatasync, while the bodies the record's locations name are
// synced in their body file. Badger commits once the bodies' sync ended,
// while the log's goes on, and Put is answered once both are done; Badger's
// own files reach the disk when the kernel writes them back.
//
// Open replays the log: every record numbered after the commit Badger
// holds is written to Badger again, in order. A record holds whole values,
// so writing one again gives what it wrote, and writing them in order
// gives the state after the last, whatever prefix of the commits Badger
// kept (a crash of the process keeps all of them; a crash of the machine,
// some prefix, possibly one commit more than the log: Badger commits while
// the log syncs, and the numbers keep older records from being written
// over it). A torn last record (the machine stopped during its write,
// before its commit was answered) is cut off, and so is a last record
// whose bodies are not all whole in their files (bodiesWhole: the machine
// stopped during the syncs).
//
// Once the log passes walCheckpoint bytes, the store makes Badger's files
// durable (syncBadger: its memtables' logs, including one waiting for its
// flush, and the value-log files written since the last time) and then
// empties the log. Close does the same.
//
// A record: uvarint length n, n bytes of operations, CRC-32C of the
// length and the operations (4 bytes, big-endian). An operation: 's',
// uvarint key length, key, uvarint value length, value; or 'd', uvarint
// key length, key.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// walName is the commit log's file in the store's directory.
const walName = "commits.wal"

// walCheckpoint is the size from which the commit log is emptied, once
// Badger's files are made durable (some 150,000 typical entries).
const walCheckpoint = 32 << 20

// maxWALRecord bounds a record read back: a transaction's writes are
// bounded by Badger's transaction limits, far below it.
const maxWALRecord = 1 << 30

const (
	opSet    = 's'
	opDelete = 'd'
)

// wtxn is a Badger write transaction that also records its writes for
// the commit log (when rec is not nil).
type wtxn struct {
	*badger.Txn
	rec []byte
	// before, when set, is waited for before Badger commits (after the
	// commit log's record is written, while it is synced): the body
	// files' fdatasync.
	before func() error
}

// Set sets k to v in the transaction and records it.
func (t *wtxn) Set(k, v []byte) error {
	if err := t.Txn.Set(k, v); err != nil {
		return err
	}
	if t.rec != nil {
		t.rec = appendBytes(append(t.rec, opSet), k)
		t.rec = appendBytes(t.rec, v)
	}
	return nil
}

// Delete deletes k in the transaction and records it.
func (t *wtxn) Delete(k []byte) error {
	if err := t.Txn.Delete(k); err != nil {
		return err
	}
	if t.rec != nil {
		t.rec = appendBytes(append(t.rec, opDelete), k)
	}
	return nil
}

// appendBytes appends b to rec with its uvarint length (cutBytes reads it).
func appendBytes(rec, b []byte) []byte {
	return append(binary.AppendUvarint(rec, uint64(len(b))), b...)
}

// eachOp calls fn with each operation of rec (a record's operations), in
// order: its kind, key and, for a set, value. It fails on a malformed
// record, or with fn's error.
func eachOp(rec []byte, fn func(op byte, k, v []byte) error) error {
	for len(rec) > 0 {
		op := rec[0]
		k, rest, ok := cutBytes(rec[1:])
		var v []byte
		switch {
		case !ok:
		case op == opSet:
			v, rest, ok = cutBytes(rest)
		case op != opDelete:
			ok = false
		}
		if !ok {
			return fmt.Errorf("%w: commit log record", errCorrupt)
		}
		if err := fn(op, k, v); err != nil {
			return err
		}
		rec = rest
	}
	return nil
}

// newTxn starts a write transaction that records its writes when the
// store keeps a commit log.
func (s *Store) newTxn() *wtxn {
	t := &wtxn{Txn: s.db.NewTransaction(true)}
	if s.wal != nil {
		t.rec = make([]byte, 0, 4096)
	}
	return t
}

// commitTxn commits t. With a commit log, t also sets the store's commit
// number (keyWALSeq) and its writes are appended to the log, whose
// fdatasync runs while Badger commits: Badger may hold a commit whose
// record is not durable yet (a machine that stops then keeps it or not,
// and it was not answered), and Open replays only the records numbered
// after Badger's number. Badger commits only once t.before (the bodies'
// fdatasync) has ended: it must never hold what names bodies that are not
// durable. commitTxn returns once the record is durable.
func (s *Store) commitTxn(t *wtxn) error {
	if s.wal == nil || len(t.rec) == 0 {
		if err := t.waitBefore(); err != nil {
			return err
		}
		return s.commitBadger(t)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	seq := s.walSeq + 1
	if err := t.Set(keyWALSeq, posb(seq)); err != nil {
		t.waitBefore() //nolint:errcheck // the commit fails anyway
		return err
	}
	at, synced, err := s.wal.append(t.rec)
	// The bodies' fdatasync, begun before the record was written, must end
	// (and succeed) before Badger holds what names them. Should the
	// machine stop before it ends, Open finds the last record's bodies
	// missing or torn and drops the record (bodiesWhole).
	if berr := t.waitBefore(); err == nil {
		err = berr
	}
	if err != nil {
		if synced != nil {
			synced() //nolint:errcheck // failing anyway
		}
		return err
	}
	if s.testCrash != nil {
		s.testCrash() // tests: the machine stops here (it panics)
	}
	err = s.commitBadger(t)
	serr := synced()
	if err != nil {
		// The log must not hold what Badger does not: replayed, it would
		// write a commit nobody was told of over later ones' state.
		if serr == nil {
			s.wal.abandon(at)
		}
		return err
	}
	s.walSeq = seq
	if serr != nil {
		return serr
	}
	if s.wal.size >= s.wal.limit {
		return s.checkpoint()
	}
	return nil
}

// waitBefore waits for t.before, if set.
func (t *wtxn) waitBefore() error {
	if t.before == nil {
		return nil
	}
	return t.before()
}

// commitBadger commits t in Badger, counted in Stats.
func (s *Store) commitBadger(t *wtxn) error {
	t0 := time.Now()
	err := t.Txn.Commit()
	s.commits.Add(1)
	s.commitWait.Add(int64(time.Since(t0)))
	return err
}

// checkpoint makes everything Badger holds durable and empties the commit
// log. Call with wmu held.
func (s *Store) checkpoint() error {
	if err := s.syncBadger(); err != nil {
		return s.wal.fail(fmt.Errorf("sync of Badger's files: %w", err))
	}
	return s.wal.reset()
}

// syncBadger makes every commit Badger took durable. DB.Sync syncs the
// active memtable's log and the current value-log file only: a memtable
// waiting for its flush keeps its log unsynced (Badger syncs none when it
// rotates them without SyncWrites), and so does a value-log file Badger
// has moved on from. Those are synced here by name; a memtable's log
// gone meanwhile was flushed into a table, which Badger syncs.
func (s *Store) syncBadger() error {
	if err := s.db.Sync(); err != nil {
		return err
	}
	// Memtable logs are in the store's directory, value-log files in
	// Badger's ValueDir (the same unless a Tune moved it).
	newest := s.vlogSynced
	for _, dir := range slices.Compact([]string{s.dir, s.vdir}) {
		des, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, de := range des {
			name := de.Name()
			stem, vlog := strings.CutSuffix(name, ".vlog")
			if !vlog {
				if _, mem := strings.CutSuffix(name, ".mem"); !mem {
					continue
				}
			} else {
				n, err := strconv.ParseUint(stem, 10, 32)
				if err != nil {
					continue
				}
				if uint32(n) < s.vlogSynced {
					continue // sealed, and synced since
				}
				newest = max(newest, uint32(n))
			}
			f, err := os.Open(filepath.Join(dir, name))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			err = s.wal.sync(f)
			f.Close()
			if err != nil {
				return err
			}
		}
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	// Every value-log file before the newest is sealed: synced once, it is
	// never synced again.
	s.vlogSynced = newest
	return nil
}

// walLog is the commit log's file.
type walLog struct {
	f     *os.File
	size  int64 // bytes written and durable
	limit int64 // the size from which it is emptied: walCheckpoint (tests change it)
	// sync makes the file durable; tests replace it to fail.
	sync   func(*os.File) error
	failed atomic.Pointer[string]
	buf    []byte // the record being written (reused)

	syncs syncStats    // Stats
	bytes atomic.Int64 // Stats: bytes appended
}

// openWAL opens (or creates) the commit log in dir and returns it with
// the operations of its records, in order; a torn last record is cut off.
func openWAL(dir string) (*walLog, [][]byte, error) {
	p := filepath.Join(dir, walName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	w := &walLog{f: f, sync: fdatasync, limit: walCheckpoint}
	recs, end := readWAL(f)
	fi, err := f.Stat()
	if err == nil {
		w.size = fi.Size()
		if w.size > end {
			err = w.truncate(end) // a torn last record
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, recs, nil
}

// readWAL reads the records of f from its start, and where the last
// whole one ends: a read error, a torn length, record or CRC ends it.
func readWAL(f *os.File) (recs [][]byte, end int64) {
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 1<<20)
	for {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > maxWALRecord {
			return recs, end
		}
		h := binary.AppendUvarint(nil, n)
		body := make([]byte, int(n)+4)
		if _, err := io.ReadFull(r, body); err != nil {
			return recs, end
		}
		crc := crc32.Update(crc32.Checksum(h, castagnoli), castagnoli, body[:n])
		if crc != binary.BigEndian.Uint32(body[n:]) {
			return recs, end
		}
		recs = append(recs, body[:n:n])
		end += int64(len(h)) + int64(n) + 4
	}
}

// replay writes the operations of the records of recs numbered after
// done (Badger's commit number) to db again, in order, and returns the
// last number it saw.
func replay(db *badger.DB, recs [][]byte, done uint64) (uint64, error) {
	wb := db.NewWriteBatch()
	defer wb.Cancel()
	last := done
	for i, rec := range recs {
		seq, ok := recordSeq(rec)
		if !ok {
			return 0, fmt.Errorf("%w: commit log record %d has no commit number", errCorrupt, i)
		}
		if seq <= done {
			continue // Badger holds it, and may hold later commits too
		}
		last = seq
		err := eachOp(rec, func(op byte, k, v []byte) error {
			if op == opDelete {
				return wb.Delete(k)
			}
			return wb.Set(k, v)
		})
		if err != nil {
			return 0, fmt.Errorf("record %d: %w", i, err)
		}
	}
	return last, wb.Flush()
}

// errFound stops eachOp once recordSeq found the number.
var errFound = errors.New("found")

// recordSeq returns the commit number a record sets (keyWALSeq).
func recordSeq(rec []byte) (seq uint64, ok bool) {
	err := eachOp(rec, func(op byte, k, v []byte) error {
		if op == opSet && bytes.Equal(k, keyWALSeq) && len(v) == 8 {
			seq = binary.BigEndian.Uint64(v)
			return errFound
		}
		return nil
	})
	return seq, err == errFound
}

// cutBytes cuts a uvarint length and that many bytes off the front of b.
func cutBytes(b []byte) (v, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n) : k+int(n)], b[k+int(n):], true
}

// dropLast cuts the last record off the log: rec, whose length the caller
// read from it.
func (w *walLog) dropLast(rec []byte) error {
	return w.truncate(w.size - int64(uvarintLen(uint64(len(rec)))+len(rec)+4))
}

// bodiesWhole reports whether every body that the body runs of rec (a
// record's operations) locate is whole in its body file in dir. The
// bodies of a commit are synced while its record is (commitTxn), so a
// machine that stopped then may have kept the record and not all of the
// bodies; the commit was not answered, and only the last record can be
// such a one: each commit waits for both syncs before the next begins.
func bodiesWhole(dir string, rec []byte) bool {
	files := map[uint32]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	err := eachOp(rec, func(op byte, k, v []byte) error {
		if op != opSet || len(k) != 9 || k[0] != pData {
			return nil
		}
		first := binary.BigEndian.Uint64(k[1:])
		r, err := decodeBodyRun(first, v)
		if err != nil {
			return err
		}
		for i, l := range r.locs() {
			if l.n == 0 {
				continue
			}
			f := files[l.file]
			if f == nil {
				if f, err = os.Open(fileName(dir, l.file)); err != nil {
					return err
				}
				files[l.file] = f
			}
			if _, err := readRecord(f, first+uint64(i), l); err != nil {
				return err
			}
		}
		return nil
	})
	return err == nil
}

// append writes ops as one record at the end of the log and starts its
// fdatasync, whose end the returned func waits for. It returns where the
// record starts. Call with Store.wmu held, and wait before the next
// append.
func (w *walLog) append(ops []byte) (at int64, wait func() error, err error) {
	if err := w.failure(); err != nil {
		return 0, nil, err
	}
	b := binary.AppendUvarint(w.buf[:0], uint64(len(ops)))
	crc := crc32.Update(crc32.Checksum(b, castagnoli), castagnoli, ops)
	b = append(b, ops...)
	b = binary.BigEndian.AppendUint32(b, crc)
	w.buf = b
	if _, err := w.f.WriteAt(b, w.size); err != nil {
		// Part of the record may be there: no more is written after it.
		return 0, nil, w.fail(err)
	}
	at = w.size
	w.size += int64(len(b))
	w.bytes.Add(int64(len(b)))
	return at, w.syncs.start(w.f, w.sync, w.fail), nil
}

// truncate cuts the log back to at bytes, durably.
func (w *walLog) truncate(at int64) error {
	if err := w.f.Truncate(at); err != nil {
		return err
	}
	if err := w.sync(w.f); err != nil {
		return err
	}
	w.size = at
	return nil
}

// abandon cuts the log back to at, the start of a record whose commit
// failed. If that fails too, the store takes no more writes.
func (w *walLog) abandon(at int64) {
	if err := w.truncate(at); err != nil {
		w.fail(err) //nolint:errcheck // recorded
	}
}

// reset empties the log (everything in it is durable in Badger).
func (w *walLog) reset() error {
	if err := w.truncate(0); err != nil {
		return w.fail(err)
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return nil
}

func (w *walLog) fail(err error) error {
	msg := "commit log: " + err.Error()
	w.failed.CompareAndSwap(nil, &msg)
	return w.failure()
}

// failure returns ErrSync once the log could not be made durable (or cut
// back): nothing more is acknowledged.
func (w *walLog) failure() error {
	if m := w.failed.Load(); m != nil {
		return fmt.Errorf("%w: %s", ErrSync, *m)
	}
	return nil
}

func (w *walLog) close() error { return w.f.Close() }

// Stats counts what a store's writes waited for, since Open: to see where
// a write path's time goes (the benchmarks report it).
type Stats struct {
	// Commits is the Badger transactions committed, and CommitWait the
	// time their commits took (Badger's write path: value log, memtable;
	// with Badger's own syncs, the syncs too).
	Commits    int64
	CommitWait time.Duration
	// LogSyncs and LogSyncWait: the commit log's fdatasyncs (one per
	// commit) and their time; LogBytes, the bytes appended to it.
	LogSyncs    int64
	LogSyncWait time.Duration
	LogBytes    int64
	// BodySyncs and BodySyncWait: the body files' fdatasyncs before a
	// commit, and their time.
	BodySyncs    int64
	BodySyncWait time.Duration
}

// Stats returns what s's writes waited for since Open.
func (s *Store) Stats() Stats {
	st := Stats{Commits: s.commits.Load(), CommitWait: time.Duration(s.commitWait.Load())}
	if s.wal != nil {
		st.LogSyncs, st.LogSyncWait, st.LogBytes = s.wal.syncs.n.Load(), time.Duration(s.wal.syncs.wait.Load()), s.wal.bytes.Load()
	}
	if s.bl != nil {
		st.BodySyncs, st.BodySyncWait = s.bl.syncs.n.Load(), time.Duration(s.bl.syncs.wait.Load())
	}
	return st
}
