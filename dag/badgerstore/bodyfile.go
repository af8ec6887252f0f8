package badgerstore

// witan's own body files. On disk, entry bodies do not go to Badger's value
// log: Put appends the bodies of a transaction to the current body file
// with one write, makes them durable with fdatasync, and only then commits
// the Badger transaction, which holds a small location record under each
// run of bodies (dataKey(first) → file, offset, lengths: bodyRun) and the
// files' committed end (keyBodyEnd). Badger writes its value log and WAL
// through a shared mmap, whose msync cost more CPU than the rest of an
// ingest's writing (docs/storage.md, "Bodies in witan's own body files");
// a plain write and fdatasync cost a tenth of it. A body in the value log also carried a
// header, its key, a version and a CRC, and a pointer beside the key in the
// tree; a body file record carries 7 to 9 bytes.
//
// A record: uvarint body length n, uvarint body number seq, the body (as
// body() makes it), CRC-32C of all that (4 bytes, big-endian). The number
// lets GC (and a check) read a file alone and find each record's location
// record. Files are bodies/00000001.dat, … ; a new one is started when
// the current one reaches Options.BodyFileSize.
//
// Open truncates the current file to the committed end (a torn or
// uncommitted append) and removes files after it (created by a
// transaction that did not commit). When it cut bytes off, the next
// append goes to a new file: those bytes may have been an append whose
// fdatasync failed, and after such a failure the kernel may report a
// later fdatasync of the same file as a success without the disk having
// what the cache holds. A failed fdatasync also stops every write of the
// process to the body files (ErrSync): nothing is appended after it, and
// the failed batch is neither committed nor acknowledged. Deleting a body writes its tombstone
// (tombKey) and counts its record's bytes as dead for its file
// (keyBodyDead), in the same transaction; GC copies the live records of a
// sealed file at least half dead to the current file, moves their runs,
// drops the tombstones, and then deletes it.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/witan-dev/witan/dag"
)

// DefaultBodyFileSize is Options.BodyFileSize's default.
const DefaultBodyFileSize = 64 << 20

var (
	// keyBodyEnd: m "bend" → file (4 bytes), committed end (8 bytes).
	keyBodyEnd = []byte{pMeta, 'b', 'e', 'n', 'd'}
	// keyBodyDead: m "bdead" file (4 bytes) → dead bytes (8 bytes).
	keyBodyDead = []byte{pMeta, 'b', 'd', 'e', 'a', 'd'}
)

func bodyDeadKey(file uint32) []byte {
	return binary.BigEndian.AppendUint32(slices.Clone(keyBodyDead), file)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// loc is where a body lies: file, offset of the body (after the record's
// header) and length of the body (0: deleted).
type loc struct {
	file uint32
	off  int64
	n    int
}

// bodyRun is the location record of the bodies one transaction wrote,
// numbered first, first+1, …, under dataKey(first): their records lie one
// after the other from off in file. Each body's length is n > 0 while its
// record is there (a deleted one has a tombstone, tombKey(seq), until GC
// moves the run), 0 once GC moved the run without it (no bytes); -n, dead
// bytes still there, is read but not written. Its value: uvarint file,
// uvarint off, uvarint count, and each length as a zigzag varint. One
// record per run instead of one per body spares Badger's framing of a key
// per entry (some 20 bytes in the tables: docs/storage.md, "Where the
// bytes go").
type bodyRun struct {
	first uint64
	file  uint32
	off   int64 // where the run's first record starts
	lens  []int
}

func (r bodyRun) encode() []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64+2*len(r.lens))
	b = binary.AppendUvarint(b, uint64(r.file))
	b = binary.AppendUvarint(b, uint64(r.off))
	b = binary.AppendUvarint(b, uint64(len(r.lens)))
	for _, n := range r.lens {
		b = binary.AppendVarint(b, int64(n))
	}
	return b
}

// runHeader reads a body run's value up to its lengths: the file, the
// offset of its first record, the count of lengths, and the lengths'
// bytes; ok false if they are out of range.
func runHeader(v []byte) (file uint32, off int64, count uint64, lens []byte, ok bool) {
	var h [3]uint64
	for i := range h {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return 0, 0, 0, nil, false
		}
		h[i], v = x, v[n:]
	}
	if h[0] > 1<<32-1 || h[1] > 1<<62 {
		return 0, 0, 0, nil, false
	}
	return uint32(h[0]), int64(h[1]), h[2], v, true
}

// runLen reads one of a run's lengths from v: the length and how many bytes
// it took, n <= 0 if it is malformed or out of range.
func runLen(v []byte) (x int64, n int) {
	x, n = binary.Varint(v)
	if n > 0 && (x > 1<<31 || x < -1<<31) {
		return 0, -1
	}
	return x, n
}

func decodeBodyRun(first uint64, v []byte) (bodyRun, error) {
	file, off, count, v, ok := runHeader(v)
	if !ok || count > uint64(len(v)) {
		return bodyRun{}, fmt.Errorf("%w: body run %d", errCorrupt, first)
	}
	r := bodyRun{first: first, file: file, off: off, lens: make([]int, count)}
	for i := range r.lens {
		x, n := runLen(v)
		if n <= 0 {
			return bodyRun{}, fmt.Errorf("%w: body run %d", errCorrupt, first)
		}
		r.lens[i], v = int(x), v[n:]
	}
	if len(v) != 0 {
		return bodyRun{}, fmt.Errorf("%w: body run %d", errCorrupt, first)
	}
	return r, nil
}

// holds reports whether seq is numbered within r.
func (r bodyRun) holds(seq uint64) bool {
	return seq >= r.first && seq-r.first < uint64(len(r.lens))
}

// locs returns the locations of r's live bodies (the others with n 0).
func (r bodyRun) locs() []loc {
	out := make([]loc, len(r.lens))
	at := r.off
	for i, n := range r.lens {
		seq := r.first + uint64(i)
		switch {
		case n > 0:
			out[i] = loc{r.file, at + int64(recordHeader(seq, n)), n}
			at += recordSize(seq, n)
		case n < 0:
			at += recordSize(seq, -n)
		}
	}
	return out
}

// runLoc returns the location of body seq from the value v of the body
// run numbered from first, as decodeBodyRun(first, v).locs() gives it,
// without decoding the lengths past seq's or allocating: a point read.
func runLoc(first uint64, v []byte, seq uint64) (loc, error) {
	bad := func() error { return fmt.Errorf("%w: body %d is not in its run %d", errCorrupt, seq, first) }
	file, at, count, v, ok := runHeader(v)
	if !ok || seq < first || seq-first >= count {
		return loc{}, bad()
	}
	for q := first; ; q++ {
		x, n := runLen(v)
		if n <= 0 {
			return loc{}, bad()
		}
		v = v[n:]
		if q == seq {
			if x <= 0 {
				return loc{}, bad()
			}
			return loc{file, at + int64(recordHeader(seq, int(x))), int(x)}, nil
		}
		if x != 0 {
			at += recordSize(q, int(max(x, -x)))
		}
	}
}

// uvarintLen is len(binary.AppendUvarint(nil, x)), without the allocation
// (it was most of serving a log's CPU beside the reads).
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// recordHeader is the length of the header of body seq of n bytes.
func recordHeader(seq uint64, n int) int { return uvarintLen(uint64(n)) + uvarintLen(seq) }

// recordSize is the bytes on disk of body seq of n bytes.
func recordSize(seq uint64, n int) int64 { return int64(recordHeader(seq, n) + n + 4) }

// recordFraming bounds what a record adds to its body: two uvarints (a
// length and a body number, at most 10 bytes each) and the CRC.
const recordFraming = 2*binary.MaxVarintLen64 + 4

// appendRecord appends the record of body seq to buf and returns it with
// the body's offset within it.
func appendRecord(buf []byte, seq uint64, body []byte) ([]byte, int) {
	start := len(buf)
	buf = binary.AppendUvarint(buf, uint64(len(body)))
	buf = binary.AppendUvarint(buf, seq)
	at := len(buf)
	buf = append(buf, body...)
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli)), at
}

// bodyLog is the set of body files of a store on disk.
type bodyLog struct {
	dir    string
	size   int64 // start a new file from this size
	noSync bool
	// sync makes a file's writes durable; tests replace it to fail.
	sync func(*os.File) error

	// Under Store.mu: the committed current file and its end; fresh:
	// the next append starts a new file (Open cut the current one).
	cur   uint32
	end   int64
	fresh bool

	// gate: views hold it shared for their transaction's life, so that GC
	// deletes a file only once no reader can hold a location in it.
	gate  sync.RWMutex
	fmu   sync.Mutex // guards files and sizes
	files map[uint32]*os.File
	sizes map[uint32]int64 // bytes of each file (the current: its committed end)
	dirty map[uint32]bool  // written and not synced (NoSync)

	failed atomic.Pointer[string] // the first failed fdatasync

	syncs syncStats // the fdatasyncs of writeAsync
}

func fileName(dir string, n uint32) string {
	return filepath.Join(dir, fmt.Sprintf("%08d.dat", n))
}

// openBodyLog opens the body files in dir as the committed state in db
// describes them: the current file truncated to its committed end, later
// files removed.
func openBodyLog(db *badger.DB, dir string, o Options) (*bodyLog, error) {
	bl := &bodyLog{dir: dir, size: o.BodyFileSize, noSync: o.NoSync, files: map[uint32]*os.File{}, sizes: map[uint32]int64{}, dirty: map[uint32]bool{}, cur: 1}
	if bl.size <= 0 {
		bl.size = DefaultBodyFileSize
	}
	bl.sync = fdatasync
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	err := db.View(func(txn *badger.Txn) error {
		switch item, err := txn.Get(keyBodyEnd); {
		case err == nil:
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if len(v) != 12 {
				return fmt.Errorf("%w: body-file end", errCorrupt)
			}
			bl.cur, bl.end = binary.BigEndian.Uint32(v), int64(binary.BigEndian.Uint64(v[4:]))
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".dat")
		n, err := strconv.ParseUint(name, 10, 32)
		if !ok || err != nil || de.IsDir() {
			continue
		}
		file := uint32(n)
		p := fileName(dir, file)
		fi, err := de.Info()
		if err != nil {
			bl.close()
			return nil, err
		}
		switch {
		case file > bl.cur:
			// Made by a transaction that did not commit. (A wholly dead
			// file is GC's: it drops the runs and tombstones that name it.)
			if err := os.Remove(p); err != nil {
				bl.close()
				return nil, err
			}
			continue
		case file == bl.cur && fi.Size() < bl.end:
			bl.close()
			return nil, fmt.Errorf("%w: body file %s holds %d bytes, %d committed", errCorrupt, p, fi.Size(), bl.end)
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			bl.close()
			return nil, err
		}
		size := fi.Size()
		if file == bl.cur && size > bl.end {
			// A torn or uncommitted append, perhaps one whose fdatasync
			// failed: cut, and never appended to again.
			if err := f.Truncate(bl.end); err != nil {
				f.Close()
				bl.close()
				return nil, err
			}
			size, bl.fresh = bl.end, true
		}
		bl.files[file], bl.sizes[file] = f, size
	}
	if bl.end > 0 && bl.files[bl.cur] == nil {
		return nil, fmt.Errorf("%w: body file %s is missing", errCorrupt, fileName(dir, bl.cur))
	}
	return bl, nil
}

// close closes every file.
func (bl *bodyLog) close() error {
	bl.fmu.Lock()
	defer bl.fmu.Unlock()
	var first error
	for n, f := range bl.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
		delete(bl.files, n)
	}
	return first
}

func (bl *bodyLog) file(n uint32) (*os.File, error) {
	bl.fmu.Lock()
	defer bl.fmu.Unlock()
	f := bl.files[n]
	if f == nil {
		return nil, fmt.Errorf("%w: body file %d is missing", errCorrupt, n)
	}
	return f, nil
}

// next returns where the next append goes: the current file's end, or a
// new file once the current one is full. Call with Store.mu held.
func (bl *bodyLog) next() (uint32, int64) {
	if bl.end >= bl.size || bl.fresh {
		return bl.cur + 1, 0
	}
	return bl.cur, bl.end
}

// syncFailure returns ErrSync once an fdatasync of a body file failed.
func (bl *bodyLog) syncFailure() error {
	if m := bl.failed.Load(); m != nil {
		return fmt.Errorf("%w: %s", ErrSync, *m)
	}
	return nil
}

// write writes buf at off of file (creating it when it is new) and makes
// it durable (unless NoSync). Call with Store.mu held, before the commit
// that references what buf holds.
func (bl *bodyLog) write(file uint32, off int64, buf []byte) error {
	wait, err := bl.writeAsync(file, off, buf)
	if err != nil {
		return err
	}
	return wait()
}

// writeAsync writes buf at off of file (creating it when it is new) and
// starts its fdatasync (unless NoSync), whose end the returned func waits
// for. Call with Store.mu held, and wait before the commit that
// references what buf holds. Once an fdatasync failed, it writes nothing
// (ErrSync).
func (bl *bodyLog) writeAsync(file uint32, off int64, buf []byte) (wait func() error, err error) {
	if err := bl.syncFailure(); err != nil {
		return nil, err
	}
	bl.fmu.Lock()
	f := bl.files[file]
	bl.fmu.Unlock()
	if f == nil {
		var err error
		if f, err = os.OpenFile(fileName(bl.dir, file), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			return nil, fmt.Errorf("badgerstore: body file: %w", err)
		}
		if !bl.noSync {
			// The file's name must be durable before a commit names it.
			if err := syncDir(bl.dir); err != nil {
				f.Close()
				return nil, bl.fail(err)
			}
		}
		bl.fmu.Lock()
		bl.files[file] = f
		bl.fmu.Unlock()
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		return nil, fmt.Errorf("badgerstore: body file: %w", err)
	}
	if bl.noSync {
		bl.fmu.Lock()
		bl.dirty[file] = true
		bl.fmu.Unlock()
		return func() error { return nil }, nil
	}
	return bl.syncs.start(f, bl.sync, bl.fail), nil
}

// syncStats counts fdatasyncs and the time they took (Store.Stats).
type syncStats struct {
	n, wait atomic.Int64
}

// start runs sync(f) in a goroutine and returns a func that waits for its
// end and returns fail(err) if it failed.
func (st *syncStats) start(f *os.File, sync func(*os.File) error, fail func(error) error) func() error {
	done := make(chan error, 1)
	go func() {
		t0 := time.Now()
		err := sync(f)
		st.n.Add(1)
		st.wait.Add(int64(time.Since(t0)))
		done <- err
	}()
	return func() error {
		if err := <-done; err != nil {
			return fail(err)
		}
		return nil
	}
}

func (bl *bodyLog) fail(err error) error {
	msg := "fdatasync of a body file: " + err.Error()
	bl.failed.CompareAndSwap(nil, &msg)
	return bl.syncFailure()
}

// committed records that a commit took the bytes up to end of file. Call
// with Store.mu held.
func (bl *bodyLog) committed(file uint32, end int64) {
	bl.fmu.Lock()
	defer bl.fmu.Unlock()
	if file != bl.cur {
		bl.sizes[bl.cur] = bl.end // sealed
	}
	bl.cur, bl.end, bl.fresh = file, end, false
	bl.sizes[file] = end
}

// abandon undoes an append whose commit failed: the bytes past the
// committed end are cut, so that a sealed file never holds garbage past
// what it committed. Call with Store.mu held.
func (bl *bodyLog) abandon(file uint32, off int64) {
	bl.fmu.Lock()
	f := bl.files[file]
	bl.fmu.Unlock()
	if f != nil && file == bl.cur {
		f.Truncate(bl.end) //nolint:errcheck // Open truncates it anyway
	}
	if f != nil && file != bl.cur && off == 0 {
		bl.fmu.Lock()
		delete(bl.files, file)
		bl.fmu.Unlock()
		f.Close()
		os.Remove(fileName(bl.dir, file)) //nolint:errcheck // Open removes it anyway
	}
}

// read reads the body at l, checking the record's CRC; seq is its number.
func (bl *bodyLog) read(seq uint64, l loc) ([]byte, error) {
	f, err := bl.file(l.file)
	if err != nil {
		return nil, err
	}
	return readRecord(f, seq, l)
}

// readRecord reads the record of body seq at l from f, its body file,
// and returns the body once its CRC checks.
func readRecord(f *os.File, seq uint64, l loc) ([]byte, error) {
	h := recordHeader(seq, l.n)
	buf := make([]byte, h+l.n+4)
	if err := readFileAt(f, l.file, buf, l.off-int64(h)); err != nil {
		return nil, err
	}
	return checkRecord(seq, l, buf)
}

func (bl *bodyLog) readAt(file uint32, buf []byte, off int64) error {
	f, err := bl.file(file)
	if err != nil {
		return err
	}
	return readFileAt(f, file, buf, off)
}

// readFileAt fills buf from off of f, body file number file.
func readFileAt(f *os.File, file uint32, buf []byte, off int64) error {
	if _, err := f.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: body file %d ends before %d", errCorrupt, file, off+int64(len(buf)))
		}
		return fmt.Errorf("badgerstore: body file: %w", err)
	}
	return nil
}

// checkRecord checks the record buf of body seq at l and returns the body.
func checkRecord(seq uint64, l loc, buf []byte) ([]byte, error) {
	h := len(buf) - l.n - 4
	n, a := binary.Uvarint(buf)
	s, b := binary.Uvarint(buf[max(a, 0):])
	if a <= 0 || b <= 0 || a+b != h || n != uint64(l.n) || s != seq ||
		crc32.Checksum(buf[:h+l.n], castagnoli) != binary.BigEndian.Uint32(buf[h+l.n:]) {
		return nil, fmt.Errorf("%w: body %d at %d:%d", errCorrupt, seq, l.file, l.off)
	}
	return buf[h : h+l.n], nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// syncAll makes every body file written since the last sync durable
// (after writes with NoSync). Call with Store.mu held.
func (bl *bodyLog) syncAll() error {
	bl.fmu.Lock()
	var fs []*os.File
	for n := range bl.dirty {
		if f := bl.files[n]; f != nil {
			fs = append(fs, f)
		}
	}
	clear(bl.dirty)
	bl.fmu.Unlock()
	for _, f := range fs {
		if err := bl.sync(f); err != nil {
			return bl.fail(err)
		}
	}
	if len(fs) > 0 {
		if err := syncDir(bl.dir); err != nil {
			return bl.fail(err)
		}
	}
	return nil
}

// gcBodies collects the sealed body files at least half dead: it copies
// their live records to the current file and deletes them. It returns how
// many files it deleted.
func (s *Store) gcBodies(ctx context.Context) (int, error) {
	if s.bl == nil {
		return 0, nil
	}
	s.gcmu.Lock()
	defer s.gcmu.Unlock()
	n := 0
	done := map[uint32]bool{}
	for {
		if err := s.gcCheck(ctx); err != nil {
			return n, err
		}
		file, ok, err := s.bodyCandidate(done)
		if err != nil || !ok {
			return n, err
		}
		done[file] = true
		if err := s.collectBodyFile(ctx, file); err != nil {
			return n, fmt.Errorf("badgerstore: body-file gc of %d: %w", file, err)
		}
		n++
	}
}

// bodyCandidate returns the sealed body file with the largest dead share,
// when at least half of it is dead, and deletes the dead counts of files
// that no longer exist.
func (s *Store) bodyCandidate(skip map[uint32]bool) (uint32, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.drain(); err != nil {
		return 0, false, err
	}
	if err := s.syncFailure(); err != nil {
		return 0, false, err
	}
	bl := s.bl
	var best uint32
	var bestShare float64
	var stale [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: keyBodyDead})
		defer it.Close()
		bl.fmu.Lock()
		defer bl.fmu.Unlock()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if len(k) != len(keyBodyDead)+4 || len(v) != 8 {
				return fmt.Errorf("%w: dead count %x", errCorrupt, k)
			}
			file := binary.BigEndian.Uint32(k[len(keyBodyDead):])
			if file >= bl.cur {
				continue
			}
			size, held := bl.sizes[file]
			if _, open := bl.files[file]; !open || !held {
				stale = append(stale, k)
				continue
			}
			dead := int64(binary.BigEndian.Uint64(v))
			// The file with the largest dead share goes first.
			if share := float64(dead) / float64(max(size, 1)); !skip[file] && 2*dead >= size && share > bestShare {
				best, bestShare = file, share
			}
		}
		return nil
	})
	if err != nil || len(stale) == 0 {
		return best, err == nil && bestShare > 0, err
	}
	txn := s.newTxn()
	defer txn.Discard()
	for _, k := range stale {
		if err := txn.Delete(k); err != nil {
			return 0, false, err
		}
	}
	if err := s.commitTxn(txn); err != nil {
		return 0, false, err
	}
	return best, bestShare > 0, s.syncFailure()
}

// gcCheck is check for a GC, which also stops once Close has begun
// (Close waits for it).
func (s *Store) gcCheck(ctx context.Context) error {
	if s.closing.Load() {
		return dag.ErrClosed
	}
	return s.check(ctx)
}

// gcChunk bounds the records one move transaction of the body-file GC
// copies (and its bytes): the store's Puts wait for one chunk at most.
const (
	gcChunkRecords = 4096
	gcChunkBytes   = 4 << 20
)

// record is a record of a body file as GC reads it.
type record struct {
	seq   uint64
	run   uint64 // the first number of its body run; 0 if none holds it
	start int64  // where the record starts
	bytes []byte // the whole record
}

// runAt returns the body run holding seq in txn (with it its reverse
// iterator over the runs), ok false when none does.
func runAt(it *badger.Iterator, seq uint64) (bodyRun, bool, error) {
	if it.Seek(dataKey(seq)); !it.Valid() {
		return bodyRun{}, false, nil
	}
	k := it.Item().Key()
	if len(k) != 9 {
		return bodyRun{}, false, fmt.Errorf("%w: body key %x", errCorrupt, k)
	}
	var r bodyRun
	err := it.Item().Value(func(v []byte) error {
		var err error
		r, err = decodeBodyRun(binary.BigEndian.Uint64(k[1:]), v)
		return err
	})
	return r, err == nil && r.holds(seq), err
}

// collectBodyFile moves the live records of sealed body file file to the
// current file, whole body runs at a time, each move durable before the
// transaction that moves the runs' locations (and drops the deleted
// bodies' tombstones) commits; then it deletes the file, once no view can
// hold a location in it. A crash in the middle leaves every location on
// durable bytes: the file is deleted only after the last move committed,
// and the next GC takes it again (every byte of it is then dead).
func (s *Store) collectBodyFile(ctx context.Context, file uint32) error {
	bl := s.bl
	f, err := bl.file(file)
	if err != nil {
		return err
	}
	bl.fmu.Lock()
	size := bl.sizes[file]
	bl.fmu.Unlock()
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	// Which run holds a record does not change (a run's numbers are fixed;
	// deletions and moves change only its lengths and place), so it is
	// read outside the store's lock, in one view.
	txn := s.db.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pData}, Reverse: true})
	defer it.Close()
	var cur bodyRun
	var off int64
	var chunk []record
	var bytes int
	for off < size {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("%w: body file %d at %d: %v", errCorrupt, file, off, err)
		}
		seq, err := binary.ReadUvarint(r)
		if err != nil || n > 1<<31 {
			return fmt.Errorf("%w: body file %d at %d", errCorrupt, file, off)
		}
		h := recordHeader(seq, int(n))
		rec := record{seq: seq, start: off, bytes: make([]byte, h+int(n)+4)}
		binary.PutUvarint(rec.bytes, n)
		binary.PutUvarint(rec.bytes[uvarintLen(n):], seq)
		if _, err := io.ReadFull(r, rec.bytes[h:]); err != nil {
			return fmt.Errorf("%w: body file %d at %d: %v", errCorrupt, file, off, err)
		}
		if _, err := checkRecord(seq, loc{file, off + int64(h), int(n)}, rec.bytes); err != nil {
			return err
		}
		off += int64(len(rec.bytes))
		if !cur.holds(seq) {
			var ok bool
			if cur, ok, err = runAt(it, seq); err != nil {
				return err
			} else if !ok {
				cur = bodyRun{}
			}
		}
		if cur.holds(seq) {
			rec.run = cur.first
		}
		// A chunk ends between runs: a run's live records move together.
		if len(chunk) > 0 && rec.run != chunk[len(chunk)-1].run && (len(chunk) >= gcChunkRecords || bytes >= gcChunkBytes) {
			if err := s.gcCheck(ctx); err != nil {
				return err
			}
			if err := s.moveRecords(file, chunk); err != nil {
				return err
			}
			chunk, bytes = chunk[:0], 0
		}
		if rec.run != 0 {
			chunk = append(chunk, rec)
			bytes += len(rec.bytes)
		}
	}
	if len(chunk) > 0 {
		if err := s.moveRecords(file, chunk); err != nil {
			return err
		}
	}
	it.Close()
	txn.Discard()
	// Every location that named file has moved, and file is sealed: no
	// new one names it. Views that began before the last move may still
	// read it: wait for them.
	bl.gate.Lock()
	bl.fmu.Lock()
	delete(bl.files, file)
	delete(bl.sizes, file)
	bl.fmu.Unlock()
	bl.gate.Unlock()
	f.Close()
	if err := os.Remove(fileName(bl.dir, file)); err != nil {
		return err
	}
	// The removal is durable before its dead count goes: a file back
	// after a crash without its count would never be collected.
	if err := syncDir(bl.dir); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.drain(); err != nil {
		return err
	}
	dt := s.newTxn()
	defer dt.Discard()
	if err := dt.Delete(bodyDeadKey(file)); err != nil {
		return err
	}
	return s.commitTxn(dt)
}

// moveRecords copies the live records among recs (whole runs, in file
// order) to the current body file and moves their runs, in one
// transaction.
func (s *Store) moveRecords(file uint32, recs []record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(context.Background()); err != nil {
		return err
	}
	if err := s.drain(); err != nil {
		return err
	}
	if err := s.syncFailure(); err != nil {
		return err
	}
	bl := s.bl
	txn := s.newTxn()
	defer txn.Discard()
	bfile, boff := bl.next()
	var buf []byte
	var moved int64
	for len(recs) > 0 {
		k := 1
		for k < len(recs) && recs[k].run == recs[0].run {
			k++
		}
		group := recs[:k]
		recs = recs[k:]
		item, err := txn.Get(dataKey(group[0].run))
		if errors.Is(err, badger.ErrKeyNotFound) {
			continue // every body of the run deleted
		}
		if err != nil {
			return err
		}
		var r bodyRun
		if err := item.Value(func(v []byte) error {
			var err error
			r, err = decodeBodyRun(group[0].run, v)
			return err
		}); err != nil {
			return err
		}
		if r.file != file {
			continue // moved already
		}
		locs := r.locs()
		nr := bodyRun{first: r.first, file: bfile, off: boff + int64(len(buf)), lens: slices.Clone(r.lens)}
		live := 0
		for i, l := range locs {
			if l.n == 0 {
				nr.lens[i] = 0
				continue
			}
			switch _, err := txn.Get(tombKey(r.first + uint64(i))); {
			case err == nil:
				// Deleted: its dead bytes stay behind, its tombstone goes.
				nr.lens[i] = 0
				if err := txn.Delete(tombKey(r.first + uint64(i))); err != nil {
					return err
				}
			case errors.Is(err, badger.ErrKeyNotFound):
				live++
			default:
				return err
			}
		}
		n := 0
		for _, rec := range group {
			i := rec.seq - r.first
			if l := locs[i]; nr.lens[i] == 0 || l.off-int64(recordHeader(rec.seq, l.n)) != rec.start {
				continue // deleted
			}
			buf = append(buf, rec.bytes...)
			moved += int64(len(rec.bytes))
			n++
		}
		if n != live {
			return fmt.Errorf("%w: body run %d: %d of %d live bodies found in file %d", errCorrupt, r.first, n, live, file)
		}
		if live == 0 {
			if err := txn.Delete(dataKey(r.first)); err != nil {
				return err
			}
			continue
		}
		if err := txn.Set(dataKey(r.first), nr.encode()); err != nil {
			return err
		}
	}
	if len(buf) == 0 {
		// Nothing live: only runs and tombstones to drop.
		if err := s.commitTxn(txn); err != nil {
			return err
		}
		return s.syncFailure()
	}
	if err := addDead(txn, map[uint32]int64{file: moved}); err != nil {
		return err
	}
	end := boff + int64(len(buf))
	if err := txn.Set(keyBodyEnd, binary.BigEndian.AppendUint64(sidb(bfile), uint64(end))); err != nil {
		return err
	}
	if err := bl.write(bfile, boff, buf); err != nil {
		bl.abandon(bfile, boff)
		return err
	}
	if err := s.commitTxn(txn); err != nil {
		s.abandonBodies(bfile, boff)
		return err
	}
	bl.committed(bfile, end)
	return s.syncFailure()
}
