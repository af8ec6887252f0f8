package badgerstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/witan-dev/witan/dag"
)

// Options configures a Store. The zero value is a durable store on disk
// with witan's defaults.
type Options struct {
	// InMemory keeps everything in memory: nothing is written to disk and
	// the directory given to Open is ignored. For tests.
	InMemory bool
	// NoSync skips the fsync of each committed batch (Badger's SyncWrites
	// off, and the body files' fdatasync). A batch that Put acknowledged
	// then survives a crash of the process (the data is in the kernel's
	// page cache) but not a crash of the machine. Call Sync before
	// acknowledging to peers.
	NoSync bool
	// MemTableSize is the size of one Badger memtable; if 0,
	// DefaultMemTableSize on disk and DefaultInMemoryMemTableSize in
	// memory. Badger keeps up to two in memory, and builds each into a
	// table in memory when it is full. A batch must fit in about 15 % of
	// one (Badger's transaction limit). On disk, entry bodies go to the
	// body files and count nothing there, so the default takes batches of
	// some 8000 entries; in memory every byte counts (about 4000 entries of
	// 500 bytes with the default). Smaller memtables lower the peak memory
	// of a long ingest (docs/storage.md) but also the largest batch.
	MemTableSize int64
	// BlockCacheSize is the size of Badger's block cache;
	// DefaultBlockCacheSize if 0.
	BlockCacheSize int64
	// ValueLogFileSize is the size at which Badger starts a new value-log
	// file; DefaultValueLogFileSize if 0. GC reclaims whole files and never
	// the newest, so garbage is reclaimed only once the value log has moved
	// on to a later file (Badger's default, 1 GiB, meant never in a small
	// store).
	ValueLogFileSize int64
	// BodyFileSize is the size from which a store on disk starts a new
	// body file (bodyfile.go); DefaultBodyFileSize if 0. GC reclaims whole
	// files and never the current one.
	BodyFileSize int64
	// BodyDir is the directory of the body files; if empty, "bodies" in
	// the store's directory.
	BodyDir string
	// ZSTD compresses tables with ZSTD instead of Snappy: about 11 % less
	// disk for about twice the compression CPU, which ingest competes for
	// with signature verification (see docs/storage.md).
	ZSTD bool
	// Logger receives Badger's log lines (SlogLogger adapts a
	// *slog.Logger); nil discards them. Whatever it is, the store watches
	// Badger's error lines for a failed fsync and then fails Put (ErrSync).
	Logger badger.Logger
	// Tune, when set, may change the Badger options after witan's defaults
	// are applied. For experiments and tests: a Tune that turns SyncWrites
	// off or lowers ValueThreshold voids the store's durability.
	Tune func(badger.Options) badger.Options
}

// Defaults for Options.
const (
	DefaultMemTableSize         = 8 << 20
	DefaultInMemoryMemTableSize = 16 << 20
	DefaultBlockCacheSize       = 32 << 20
	DefaultValueLogFileSize     = 64 << 20
)

func (o Options) badger(dir string) badger.Options {
	bo := badger.DefaultOptions(dir)
	if o.InMemory {
		bo = badger.DefaultOptions("").WithInMemory(true)
	}
	if o.MemTableSize <= 0 {
		o.MemTableSize = DefaultMemTableSize
		if o.InMemory {
			o.MemTableSize = DefaultInMemoryMemTableSize
		}
	}
	if o.BlockCacheSize <= 0 {
		o.BlockCacheSize = DefaultBlockCacheSize
	}
	if o.ValueLogFileSize <= 0 {
		o.ValueLogFileSize = DefaultValueLogFileSize
	}
	bo = bo.
		// Each commit is durable when Badger returns it: its memtable's
		// log is synced (msync), and a value in the value log too.
		WithSyncWrites(!o.NoSync).
		WithLogger(o.Logger).
		WithMemTableSize(o.MemTableSize).
		WithNumMemtables(2).
		WithBlockCacheSize(o.BlockCacheSize).
		WithValueLogFileSize(o.ValueLogFileSize).
		WithNumCompactors(2).
		// Every new entry costs a lookup of an id the store lacks; a
		// tighter Bloom filter spares most of the table reads (about 10 %
		// less CPU per Put, for some 2 bytes per entry on disk).
		WithBloomFalsePositive(0.001).
		WithMetricsEnabled(false).
		// The LSM tree holds keys and the store's records (entry bodies
		// go to the body files on disk, below); its blocks compress well.
		WithCompression(options.Snappy).
		// Put serialises writers itself, so Badger need not track reads.
		WithDetectConflicts(false).
		// Close compacts level 0 into the next level, which drops what
		// later writes superseded (a promoted entry's pending keys, their
		// tombstones) and tells the value-log GC what is garbage.
		WithCompactL0OnClose(true)
	// Every level's tables the same size (Badger doubles it per level by
	// default): compaction builds tables in memory, up to 8 or more at
	// once, so growing table sizes make the heap grow with the store.
	// The price is more files: about 250 per million typical entries.
	bo.TableSizeMultiplier = 1
	// Small tables: Badger builds tables in memory, several at once during
	// compactions, and keeps the buffers of up to 8 builders for reuse,
	// so the peak RSS of a long ingest follows the table sizes
	// (docs/storage.md).
	bo.BaseTableSize = 1 << 20
	// Level 0 takes 12 tables before they are compacted into level 1
	// (Badger's default is 5), and writes stall at 24 (15). The status
	// records are keyed by random ids, so every level-0 compaction
	// rewrites most of level 1: compacting 12 flushed memtables at once
	// rewrites it less often for as many records, and a burst of some
	// 400k envelopes' records is written with no compaction beside it.
	// The price is read amplification: a lookup tries up to 24 tables'
	// Bloom filters in level 0, and an iterator merges them. Measured in
	// docs/storage.md ("Level 0: twelve tables").
	bo.NumLevelZeroTables = 12
	bo.NumLevelZeroTablesStall = 24
	// Every record of the store stays in the tree: the threshold from
	// which Badger puts a value in its value log is the largest it takes,
	// the transaction limit (15 % of a memtable, at most 1 MiB), and a
	// record that long fails its transaction (wtxn.Set). Entry bodies,
	// the store's bulk, are in the body files on disk (bodyfile.go), so
	// compactions move only the small records. Only an object that long
	// goes to the value log, synced with its commit. The tree alone then
	// holds every record: a power-loss test checks what Badger keeps, not
	// how two of its files agree. In memory every value, bodies
	// included, stays in the tree, up to 1 MiB.
	bo.ValueThreshold = min(bo.ValueThreshold, o.MemTableSize*15/100)
	if o.ZSTD {
		bo = bo.WithCompression(options.ZSTD).WithZSTDCompressionLevel(1)
	}
	if o.Tune != nil {
		bo = o.Tune(bo)
	}
	return bo
}

// Store is a dag.Store kept in Badger. It is safe for concurrent use:
// reads run concurrently, Puts one at a time, each in one Badger
// transaction.
type Store struct {
	db *badger.DB

	mu      sync.Mutex     // serialises Put
	pending map[uint32]int // committed pending entries per space; under mu
	anyQuar bool           // some committed entry is quarantined; under mu
	// dropRefused is the running Put's Batch.DropRefused; under mu.
	dropRefused bool
	// watch sees Badger's log lines: a failed fsync there fails Put.
	watch *watcher
	// bl holds the entry bodies of a store on disk (nil in memory, where
	// they stay in Badger under their keys).
	bl  *bodyLog
	dir string
	// Stats: Badger commits and the time they took.
	commits, commitWait atomic.Int64
	spaces              sync.Map  // space name → uint32 id, and uint32 id → name; only committed spaces
	ids                 *idFilter // a superset of the ids of the entries held
	// applied holds the applied entries' status records (applied.go);
	// landed counts those whose transaction's commit returned.
	applied *appliedIndex
	landed  atomic.Uint64
	maxVal  int    // the largest value Badger takes (in memory: 1 MiB), 0 for no limit
	seq     uint64 // the last body number committed (keyLastSeq); under mu
	// resume: keyPromote is held, a promotion was cut off between two
	// transactions; the next Put in its space finishes it. ready: what it
	// left, per space, once read (nil before). Under mu.
	resume         bool
	ready          map[string][]dag.ID
	marked         bool              // keyPromote is held (also while a Put writes a long promotion); under mu
	testRound      int               // tests: promotions planned per round instead of promoteRound, when not 0
	valueThreshold int64             // Badger's ValueThreshold, for sizing transactions
	promoteHook    func(k int) error // tests: called before promotion transaction k+1; an error stops the Put there
	// viewHook, set by tests only, runs inside each read's Badger
	// transaction before the read.
	viewHook func()
	// landHook, set by tests only, runs after a Put transaction's Badger
	// commit returned and before landed says so.
	landHook   func()
	testLimits [2]budget // tests: limit and wholeLimit instead of Badger's, when not zero

	// flight is the last commit started (txn.go), nil once drained; under
	// mu. hand guards the hand-over of a flight's next transaction;
	// flights counts the commits running; brokenErr is the failed commit
	// that stopped the store's writes.
	flight *flight
	// bbuf is the buffer a commit's new bodies were gathered in, for the
	// next one (the body file has its bytes once writeAsync returned);
	// under mu.
	bbuf []byte
	// pos is a transaction's map of log positions, emptied, for the next
	// one (putTxn.pos; a transaction uses it only until its commit
	// starts); under mu.
	pos     map[dag.ID]uint64
	posRoom int
	// lastPrev is the prev of the last transaction nextTxn started (the
	// record of the commit before it), for passRec; under mu.
	lastPrev  map[string][]byte
	hand      sync.Mutex
	flights   sync.WaitGroup
	brokenErr atomic.Pointer[error]

	closeOnce sync.Once
	closed    chan struct{}
	// gcmu is held by a body-file GC for its whole run (it reads outside
	// mu), and by Close before it closes anything; closing tells a GC
	// to stop at its next step.
	gcmu    sync.Mutex
	closing atomic.Bool
}

var _ dag.Store = (*Store)(nil)

// OpenDB opens a Badger database as badger.Open does, and also opens one
// that a crash left holding an empty .mem or .vlog file.
//
// Badger (v4.9.6) cannot open a directory holding such a file, which a
// kill between creating one and writing to it leaves (dgraph-io/badger#2207):
// it sizes the file, then fails with z.NewFile. The next attempt opens the
// sized file; each attempt sizes one more, so a few suffice (a crash leaves
// at most one new memtable and one new value log).
//
// When Badger's Open fails, it cleans up, and its cleanup waits for the
// flush of the memtables it replayed, which Badger retries every second,
// for ever: on a disk that failed (gone, or failing every write) Open
// would never return, and `witan up` would hang without a word instead of
// saying why it cannot start. OpenDB gives up (untilStuck) 10 s after
// Badger said that its open failed and is cleaning up, or once the open
// has run 10 s while a memtable flush keeps failing.
func OpenDB(bo badger.Options) (*badger.DB, error) {
	db, err := openDB(bo)
	for i := 0; i < 3 && err != nil && !errors.Is(err, errStuck) && strings.Contains(err.Error(), "Create a new file"); i++ {
		db, err = openDB(bo)
	}
	return db, err
}

// openDB is badger.Open through untilStuck.
func openDB(bo badger.Options) (*badger.DB, error) {
	w := &watcher{next: bo.Logger}
	bo.Logger = w
	var db *badger.DB
	stuck := func(start time.Time) error {
		if err := w.openStuck(stuckAfter); err != nil {
			return err
		}
		return w.flushStuck(start, stuckAfter)
	}
	err := untilStuck("open", stuck, func() (err error) {
		db, err = badger.Open(bo)
		return err
	})
	if errors.Is(err, errStuck) {
		return nil, err // db belongs to the abandoned call
	}
	return db, err
}

// stuckAfter is how long untilStuck waits for a Badger open or close
// whose memtable flush keeps failing, or for the cleanup of an open that
// failed.
const stuckAfter = 10 * time.Second

var errStuck = errors.New("badgerstore: Badger's memtable flush keeps failing, or its failed open's cleanup waits for it (is the disk failing?)")

// untilStuck runs call, Badger's open or close (what), and returns its
// error, or an error wrapping errStuck once stuck, asked every second with
// the time call began, says why to give up: Badger retries a failed
// memtable flush every second, for ever, and both its Close (which flushes
// the memtable first) and the cleanup of a failed Open wait for that
// flush. The abandoned call keeps its goroutines and the directory's lock;
// the process is expected to exit. What the store acknowledged was synced
// before.
func untilStuck(what string, stuck func(start time.Time) error, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if err := stuck(start); err != nil {
				return fmt.Errorf("%w: Badger's %s did not end: %v", errStuck, what, err)
			}
		}
	}
}

// Open opens (creating if needed) the store in directory dir.
func Open(dir string, o Options) (*Store, error) {
	if dir == "" && !o.InMemory {
		return nil, errors.New("badgerstore: empty directory (set Options.InMemory for a store in memory)")
	}
	bo := o.badger(dir)
	w := &watcher{next: bo.Logger}
	bo.Logger = w
	db, err := OpenDB(bo)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir, closed: make(chan struct{}), pending: map[uint32]int{}, valueThreshold: bo.ValueThreshold, watch: w}
	if o.InMemory {
		s.maxVal = 1 << 20
	}
	bdir := o.BodyDir
	if bdir == "" {
		bdir = filepath.Join(dir, "bodies")
	}
	err = db.View(func(txn *badger.Txn) error {
		q := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pQueue}})
		for q.Rewind(); q.Valid(); q.Next() {
			s.pending[binary.BigEndian.Uint32(q.Item().Key()[1:])]++
		}
		q.Close()
		switch _, err := txn.Get(keyPromote); {
		case err == nil:
			s.resume, s.marked = true, true
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		seq, err := readCounter(rtxn{Txn: txn}, keyLastSeq, "last body number")
		if err != nil {
			return err
		}
		s.seq = seq
		r := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pRefused}})
		r.Rewind()
		s.anyQuar = r.Valid()
		r.Close()
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pSpaceName}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			sid := binary.BigEndian.Uint32(k[1:])
			name, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			s.spaces.Store(string(name), sid)
			s.spaces.Store(sid, string(name))
		}
		return nil
	})
	if err == nil {
		err = s.checkFormat()
	}
	if err == nil {
		if s.applied, err = loadApplied(db, o.InMemory); err == nil {
			s.landed.Store(uint64(s.applied.len()))
		}
	}
	if err == nil {
		s.ids, err = loadIDFilter(db, s.applied)
	}
	if err == nil && !o.InMemory {
		s.bl, err = openBodyLog(db, bdir, o)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("badgerstore: open %s: %w", dir, err)
	}
	return s, nil
}

// checkFormat refuses a store in another key layout, and marks a new one.
// A format-10 or 11 store is marked 12, and then its applied entries'
// status records, which format 12 does not read, are dropped: should that
// be cut off, the next Open drops what is left.
func (s *Store) checkFormat() error {
	txn := s.newTxn()
	defer txn.Discard()
	if err := checkFormatTxn(txn); err != nil {
		return err
	}
	if err := s.commitTxn(txn); err != nil {
		return err
	}
	return s.dropStatusRecords()
}

// dropStatusRecords drops the e keys a format-10 or 11 store held, if any.
func (s *Store) dropStatusRecords() error {
	any := false
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pOldEntry}, PrefetchValues: false})
		defer it.Close()
		it.Rewind()
		any = it.Valid()
		return nil
	})
	if err != nil || !any {
		return err
	}
	return s.db.DropPrefix([]byte{pOldEntry})
}

func checkFormatTxn(txn *wtxn) error {
	{
		item, err := txn.Get(keyFormat)
		if err == nil {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if len(v) == 4 && (binary.BigEndian.Uint32(v) == 10 || binary.BigEndian.Uint32(v) == 11) {
				// Format 10 differs from 11 only in having a child key for
				// every edge, which Children reads as well, and 11 from 12
				// in the applied entries' status records, which the log
				// runs repeat: the store is read as it is, and marked 12
				// before this version writes an edge without a key or an
				// entry without a status record, which the older readers
				// would miss.
				return txn.Set(keyFormat, binary.BigEndian.AppendUint32(nil, format))
			}
			if len(v) != 4 || binary.BigEndian.Uint32(v) != format {
				return fmt.Errorf("%w %x (this version reads %d): move the directory aside and sync the store again from a peer", ErrFormat, v, format)
			}
			return nil
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{})
		it.Rewind()
		empty := !it.Valid()
		it.Close()
		if !empty {
			return fmt.Errorf("%w 1 (this version reads %d): move the directory aside and sync the store again from a peer", ErrFormat, format)
		}
		return txn.Set(keyFormat, binary.BigEndian.AppendUint32(nil, format))
	}
}

// loadIDFilter builds the id filter from the ids of the entries held (the
// applied ones in applied, the keys of the others), counting them first so
// that one layer holds them all.
func loadIDFilter(db *badger.DB, applied *appliedIndex) (*idFilter, error) {
	prefixes := []byte{pPending, pQuar}
	each := func(fn func(k []byte)) error {
		return db.View(func(txn *badger.Txn) error {
			for _, p := range prefixes {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{p}})
				for it.Rewind(); it.Valid(); it.Next() {
					fn(it.Item().Key())
				}
				it.Close()
			}
			return nil
		})
	}
	n := applied.len()
	if err := each(func([]byte) { n++ }); err != nil {
		return nil, err
	}
	f := newIDFilter(n)
	applied.each(func(d *[32]byte, _ appliedRec) { f.add(dag.IDFromDigest(*d)) })
	err := each(func(k []byte) {
		if len(k) == 33 {
			f.add(idFrom(k[1:]))
		}
	})
	return f, err
}

// Key layout. Every key starts with one prefix byte. ids are the 32-byte
// digests, sids are 4-byte space numbers, positions 8 bytes, all big-endian
// so that keys sort as the indexes need.
const (
	pData      = 'd' // d seq → body (parents, packed data), written once; on disk d run → the body run's location in the body files
	pDead      = 'D' // D seq → "" (on disk: body seq is deleted; GC drops it and this key)
	pOldEntry  = 'e' // e id → status record (sid, pos, seq) of an applied entry, in formats 10 and 11
	pPending   = 'p' // p id → status record (sid, 0, seq)
	pChild     = 'c' // c sid parentpos childpos → "" (see write)
	pLog       = 'l' // l sid first → ids at positions first, first+1, … and their body numbers (one run per batch, encodeRun)
	pHead      = 'h' // h sid id → ""
	pWait      = 'w' // w sid parent child → "" (child is pending, waits for parent)
	pQueue     = 'q' // q sid id → "" (pending entries of a space)
	pQuar      = 'x' // x id → status record (sid, 0, seq)
	pRefused   = 'r' // r sid id → rejection (uvarint code length, code, detail)
	pObject    = 'o' // o id → data
	pSpace     = 's' // s name → sid, next position
	pSpaceName = 'S' // S sid → name
	pMeta      = 'm' // m "sid" → last sid handed out; m "seq" → last body number; m "bend", m "bdead" file: body files
)

var (
	keyLastSID = []byte{pMeta, 's', 'i', 'd'}
	keyFormat  = []byte{pMeta, 'f', 'm', 't'}
	keyLastSeq = []byte{pMeta, 's', 'e', 'q'}
)

// format is the version of the key layout. Format 1 (before log runs) had
// one log key per entry; format 2 kept entry data as it came, not packed;
// format 3 keyed the children index by ids; format 4 kept an entry's body
// in its status record, so that a promotion wrote it again; format 5 keyed
// the body by the entry's id (41 bytes of key in the value log and again
// in the tree, per entry); format 6 kept only ids in a log run, so serving
// the log looked up each entry's status for its body number; format 7 kept
// bodies in Badger's value log; format 8 keeps them in witan's own body
// files (bodyfile.go), with a location record under the body's key;
// format 9 added a commit log of its own beside Badger's, and format 10
// has none: Badger syncs its writes, and every record of the store stays
// in Badger's tree (a format-9 store may hold commits only that log
// had); format 10 had a child key for every edge, where format 11 has
// none for a parent just before its child in the log; format 11 kept each
// applied entry's status record in the tree (e id), where format 12 keeps
// it in memory, rebuilt from the log runs on opening (applied.go). This
// version reads a format-10 or 11 store, marks it 12 and drops its status
// records on opening; it refuses the older ones rather than misread them.
const format = 12

// Format is the store format (the version of the key layout) this package
// reads and writes; Open refuses a store written in another with ErrFormat.
// witan version prints it.
const Format = format

// ErrValueTooLarge is wrapped by Put when an entry or object is larger than
// the store can hold in one value (an in-memory store: 1 MiB). Nothing of
// the batch is written.
var ErrValueTooLarge = errors.New("badgerstore: value too large")

// ErrFormat is returned by Open for a store written in another key layout.
var ErrFormat = errors.New("badgerstore: unsupported store format")

func key(prefix byte, parts ...[]byte) []byte {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 1, n)
	k[0] = prefix
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func idb(id dag.ID) []byte { d := id.Digest(); return d[:] }

func sidb(sid uint32) []byte { return binary.BigEndian.AppendUint32(nil, sid) }

func posb(pos uint64) []byte { return binary.BigEndian.AppendUint64(nil, pos) }

func idFrom(b []byte) dag.ID {
	var d [32]byte
	copy(d[:], b)
	return dag.IDFromDigest(d)
}

// bref names an entry's body: its number seq, and the key it is found
// under, dataKey(run). In memory run is seq (a key per body); on disk run
// is the first number of the body run seq belongs to (bodyfile.go: the
// bodies a transaction wrote, one location record for them all).
type bref struct{ seq, run uint64 }

// head encodes the status record of a pending or quarantined entry (the
// value of its p or x key): uvarint sid, uvarint pos (0), uvarint seq (the
// number of its body), uvarint seq-run (0 in memory; on disk its place in
// its body run). It is a few bytes, kept in the LSM tree; an applied
// entry's status is in memory (applied.go), so promoting a pending entry
// deletes its record and writes nothing of its body.
func head(sid uint32, pos uint64, b bref) []byte {
	v := make([]byte, 0, headSize)
	v = binary.AppendUvarint(v, uint64(sid))
	v = binary.AppendUvarint(v, pos)
	v = binary.AppendUvarint(v, b.seq)
	return binary.AppendUvarint(v, b.seq-b.run)
}

// dataKey is the key of the body numbered seq (in memory), or of the body
// run starting at seq (on disk): 9 bytes instead of the 33 of an id key,
// and consecutive numbers share all but their last bytes in a table's
// blocks.
func dataKey(seq uint64) []byte { return key(pData, posb(seq)) }

// body encodes what an entry holds (the value of its d key, written once
// whatever becomes of the entry): uvarint parent count, the parents'
// digests, then the data, packed (pack.go).
func body(e dag.Entry) []byte { return appendBody(make([]byte, 0, bodySize(e)), e) }

// appendBody appends body(e) to b.
func appendBody(b []byte, e dag.Entry) []byte {
	b = binary.AppendUvarint(b, uint64(len(e.Parents)))
	for _, p := range e.Parents {
		d := p.Digest()
		b = append(b, d[:]...)
	}
	return pack(b, e.Data)
}

var errCorrupt = errors.New("badgerstore: corrupt record")

func encodeRejection(r dag.Rejection) []byte {
	b := binary.AppendUvarint(nil, uint64(len(r.Code)))
	b = append(b, r.Code...)
	return append(b, r.Detail...)
}

func decodeRejection(id dag.ID, b []byte) (dag.Rejection, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return dag.Rejection{}, fmt.Errorf("%w: rejection of %s", errCorrupt, id)
	}
	b = b[k:]
	return dag.Rejection{ID: id, Code: dag.Code(b[:n]), Detail: string(b[n:])}, nil
}

// decodeBody decodes the body of entry id (see body).
func decodeBody(id dag.ID, b []byte) (dag.Entry, error) {
	np, rest, err := bodyParentCount(id, b)
	if err != nil {
		return dag.Entry{}, err
	}
	data, parents := make([]byte, 0, unpackedSize(rest[32*np:])), make([]dag.ID, 0, np)
	return decodeBodyInto(id, np, rest, &data, &parents)
}

// decodeBodyInto is decodeBody, from what bodyParentCount returned for the
// body (np parents, then rest), with the entry's parents and data appended
// to *parents and *data (one allocation for many entries when they have
// room for them all), the entry's slices capped at their own end.
func decodeBodyInto(id dag.ID, np int, rest []byte, data *[]byte, parents *[]dag.ID) (dag.Entry, error) {
	var err error
	p0 := len(*parents)
	for i := range np {
		*parents = append(*parents, idFrom(rest[32*i:]))
	}
	d0 := len(*data)
	if *data, err = unpack(*data, rest[32*np:]); err != nil {
		return dag.Entry{}, fmt.Errorf("%w for %s", err, id)
	}
	return dag.Entry{ID: id, Parents: (*parents)[p0:len(*parents):len(*parents)], Data: (*data)[d0:len(*data):len(*data)]}, nil
}

// bodyParentCount returns how many parents start the body of entry id, and
// the rest: their 32-byte digests, then the packed data.
func bodyParentCount(id dag.ID, b []byte) (int, []byte, error) {
	np, n := binary.Uvarint(b)
	if n <= 0 || np > uint64(len(b)-n)/32 {
		return 0, nil, fmt.Errorf("%w for %s", errCorrupt, id)
	}
	return int(np), b[n:], nil
}

// bodyParents decodes the parents that start the body of entry id, and
// returns the rest (the packed data).
func bodyParents(id dag.ID, b []byte) ([]dag.ID, []byte, error) {
	np, rest, err := bodyParentCount(id, b)
	if err != nil {
		return nil, nil, err
	}
	ps := make([]dag.ID, np)
	for i := range ps {
		ps[i] = idFrom(rest[32*i:])
	}
	return ps, rest[32*np:], nil
}

// readBody reads the body b of entry id in txn.
func (s *Store) readBody(txn getter, id dag.ID, b bref) (dag.Entry, error) {
	var e dag.Entry
	err := s.bodyBytes(txn, id, b, func(v []byte) error {
		var err error
		e, err = decodeBody(id, v)
		return err
	})
	return e, err
}

// bodyBytes calls fn with the body b of entry id: the value of its key in
// memory, read from its body file on disk.
func (s *Store) bodyBytes(txn getter, id dag.ID, b bref, fn func([]byte) error) error {
	if s.bl == nil {
		err := txn.value(dataKey(b.run), fn)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("%w: no body for %s", errCorrupt, id)
		}
		return err
	}
	var l loc
	err := txn.value(dataKey(b.run), func(v []byte) error {
		var err error
		l, err = runLoc(b.run, v, b.seq)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return fmt.Errorf("%w: no body for %s", errCorrupt, id)
	}
	if err != nil {
		return fmt.Errorf("%w (body of %s)", err, id)
	}
	v, err := s.bl.read(b.seq, l)
	if err != nil {
		return err
	}
	return fn(v)
}

// deleteBody deletes body b in txn: in memory its key; on disk its length
// in its body run (the run's key once none is left), counting its
// record's bytes as dead for its file in dead.
func (s *Store) deleteBody(txn *wtxn, b bref, dead map[uint32]int64) error {
	if s.bl == nil {
		return txn.Delete(dataKey(b.run))
	}
	var l loc
	if err := txn.value(dataKey(b.run), func(v []byte) error {
		var err error
		l, err = runLoc(b.run, v, b.seq)
		return err
	}); err != nil {
		return err
	}
	dead[l.file] += recordSize(b.seq, l.n)
	// A tombstone, not a rewrite of the run: a run is some 2 bytes per
	// body, and rewriting it for each body a flood's eviction drops would
	// cost more than the body. GC drops the body and its tombstone when
	// it moves the run.
	return txn.Set(tombKey(b.seq), nil)
}

// readCounter reads the 8-byte counter under k (0 if absent); what names it
// in the error of a corrupt one.
func readCounter(txn getter, k []byte, what string) (uint64, error) {
	var v []byte
	err := txn.value(k, func(b []byte) error { v = slices.Clone(b); return nil })
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: %s", errCorrupt, what)
	}
	return binary.BigEndian.Uint64(v), nil
}

// tombKey is the key of the tombstone of body seq (on disk).
func tombKey(seq uint64) []byte { return key(pDead, posb(seq)) }

// addDead adds dead to the dead counts of the body files in txn.
func addDead(txn *wtxn, dead map[uint32]int64) error {
	for file, n := range dead {
		k := bodyDeadKey(file)
		was, err := readCounter(txn, k, fmt.Sprintf("dead count of body file %d", file))
		if err != nil {
			return err
		}
		if err := txn.Set(k, binary.BigEndian.AppendUint64(nil, was+uint64(n))); err != nil {
			return err
		}
	}
	return nil
}

// recordHead reads the space number, log position and body of a status
// record (see head) of id.
func recordHead(id dag.ID, b []byte) (sid uint32, pos uint64, body bref, err error) {
	var v [4]uint64
	for i := range v {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, 0, bref{}, fmt.Errorf("%w for %s", errCorrupt, id)
		}
		v[i], b = x, b[n:]
	}
	if len(b) != 0 || v[0] > 1<<32-1 || v[3] > v[2] {
		return 0, 0, bref{}, fmt.Errorf("%w for %s", errCorrupt, id)
	}
	return uint32(v[0]), v[1], bref{v[2], v[2] - v[3]}, nil
}

// statusOf reads the status record under k (the p or x key of id): found
// is false when there is none.
func statusOf(txn getter, k []byte, id dag.ID) (sid uint32, pos uint64, body bref, found bool, err error) {
	err = txn.value(k, func(v []byte) error {
		sid, pos, body, err = recordHead(id, v)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, 0, bref{}, false, nil
	}
	return sid, pos, body, err == nil, err
}

// appliedAt returns the space number and log position of applied entry id
// as txn sees it (appliedOf); ok is false when id is not applied.
func (s *Store) appliedAt(txn getter, id dag.ID) (sid uint32, pos uint64, ok bool, err error) {
	if !s.ids.mayHold(id) {
		return 0, 0, false, nil
	}
	r, ok, err := s.appliedOf(txn, id)
	return r.sid, r.pos, ok, err
}

func (s *Store) check(ctx context.Context) error {
	select {
	case <-s.closed:
		return dag.ErrClosed
	default:
	}
	return ctx.Err()
}

func (s *Store) sidOf(space string) (uint32, bool) {
	v, ok := s.spaces.Load(space)
	if !ok {
		return 0, false
	}
	return v.(uint32), true
}

func (s *Store) nameOf(sid uint32) string {
	v, _ := s.spaces.Load(sid)
	name, _ := v.(string)
	return name
}

// anyPending reports whether any committed entry is pending. Call with mu
// held.
func (s *Store) anyPending() bool {
	for _, n := range s.pending {
		if n > 0 {
			return true
		}
	}
	return false
}

// lookup reads the entry under id in txn: applied, pending, quarantined or
// absent. With pending (quar) false it does not look for a pending
// (quarantined) record: Put knows when there is none, which saves a Get
// per new entry.
func (s *Store) lookup(txn getter, id dag.ID, names func(uint32) string, pending, quar bool) (dag.Entry, dag.Status, uint64, error) {
	if !s.ids.mayHold(id) {
		return dag.Entry{}, dag.Absent, 0, nil
	}
	if r, ok, err := s.appliedOf(txn, id); err != nil || ok {
		if err != nil {
			return dag.Entry{}, dag.Absent, 0, err
		}
		e, err := s.readBody(txn, id, r.body())
		if err != nil {
			return dag.Entry{}, dag.Absent, 0, err
		}
		e.Space = names(r.sid)
		return e, dag.Applied, r.pos, nil
	}
	for _, st := range []dag.Status{dag.Pending, dag.Quarantined} {
		p := byte(pPending)
		switch {
		case st == dag.Pending && !pending, st == dag.Quarantined && !quar:
			continue
		case st == dag.Quarantined:
			p = pQuar
		}
		sid, pos, b, found, err := statusOf(txn, key(p, idb(id)), id)
		if err != nil {
			return dag.Entry{}, dag.Absent, 0, err
		}
		if !found {
			continue
		}
		e, err := s.readBody(txn, id, b)
		if err != nil {
			return dag.Entry{}, dag.Absent, 0, err
		}
		e.Space = names(sid)
		return e, st, pos, nil
	}
	return dag.Entry{}, dag.Absent, 0, nil
}

// putTxn is the PlanView and writer of one Put.
type putTxn struct {
	s        *Store
	txn      *wtxn
	newNames map[uint32]string // spaces created in this transaction
	newSIDs  map[string]uint32
	next     map[uint32]uint64 // next log position per touched space
	lastSID  uint32
	loaded   bool
	// pos holds the log positions of the applied entries this transaction
	// has read or written: the parents of the entries it applies, for the
	// children index. posRoom is how many it was made for.
	pos     map[dag.ID]uint64
	posRoom int
	// seq is the last body number handed out, the store's until this
	// transaction writes a body; the store takes it once it commits.
	seq uint64
	// On disk: the records of the new bodies (numbered from brun, of
	// lengths blens), appended at boff of body file bfile before the
	// commit; and the bytes of bodies this transaction deletes, per file.
	bfile uint32
	boff  int64
	brun  uint64
	blens []int
	bbuf  []byte
	// scratch holds one body while newBody frames it.
	scratch []byte
	// appliedFrom is the number of records the applied index held when
	// this transaction began: it adds its own after them.
	appliedFrom int
	dead        map[uint32]int64
}

// newBody writes e's body under a new number in this transaction and
// returns the number: in memory under its key, on disk to the records
// commit appends to the current body file, with its location under its
// key.
func (p *putTxn) newBody(e dag.Entry) (bref, error) {
	p.seq++
	if p.s.bl == nil {
		return bref{p.seq, p.seq}, p.txn.Set(dataKey(p.seq), body(e))
	}
	if len(p.blens) == 0 {
		p.bfile, p.boff = p.s.bl.next()
		p.brun = p.seq
	}
	// Encoded in a scratch buffer reused for every body of the
	// transaction, then framed into the records.
	p.scratch = appendBody(p.scratch[:0], e)
	p.bbuf, _ = appendRecord(p.bbuf, p.seq, p.scratch)
	p.blens = append(p.blens, len(p.scratch))
	return bref{p.seq, p.brun}, nil
}

// pendingBody returns the body of pending entry id.
func (p *putTxn) pendingBody(id dag.ID) (bref, error) {
	_, _, b, found, err := statusOf(p.txn, key(pPending, idb(id)), id)
	if err == nil && !found {
		err = fmt.Errorf("%w: %s is not pending", errCorrupt, id)
	}
	return b, err
}

func (p *putTxn) name(sid uint32) string {
	if n, ok := p.newNames[sid]; ok {
		return n
	}
	return p.s.nameOf(sid)
}

func (p *putTxn) sid(space string) (uint32, bool) {
	if sid, ok := p.newSIDs[space]; ok {
		return sid, true
	}
	return p.s.sidOf(space)
}

func (p *putTxn) Lookup(id dag.ID) (dag.Entry, dag.Status, error) {
	e, st, pos, err := p.s.lookup(p.txn, id, p.name, p.s.anyPending(), p.s.anyQuar)
	if err == nil && st == dag.Applied {
		p.remember(id, pos)
	}
	return e, st, err
}

func (p *putTxn) remember(id dag.ID, pos uint64) {
	if p.pos == nil {
		p.pos = make(map[dag.ID]uint64)
	}
	p.pos[id] = pos
}

// position returns the log position of applied entry id: from this
// transaction's memory (the plan looked up every parent outside the batch;
// the batch's own entries were written before their children), or read.
func (p *putTxn) position(id dag.ID) (uint64, error) {
	if pos, ok := p.pos[id]; ok {
		return pos, nil
	}
	_, pos, ok, err := p.s.appliedAt(p.txn, id)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%w: parent %s of an applied entry is not applied", errCorrupt, id)
	}
	p.remember(id, pos)
	return pos, nil
}

func (p *putTxn) Waiting(space string, parent dag.ID) ([]dag.ID, error) {
	sid, ok := p.sid(space)
	if !ok || p.s.pending[sid] == 0 {
		// No committed entry of the space is pending (the usual case):
		// skip the index scan. Entries pending within this batch are the
		// plan's own business.
		return nil, nil
	}
	prefix := key(pWait, sidb(sid), idb(parent))
	var out []dag.ID
	it := p.txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		out = append(out, idFrom(it.Item().Key()[len(prefix):]))
	}
	return out, nil
}

// ensureSpace returns the sid of space, creating it in this transaction.
func (p *putTxn) ensureSpace(space string) (uint32, error) {
	if sid, ok := p.sid(space); ok {
		if _, ok := p.next[sid]; !ok {
			var v []byte
			err := p.txn.value(key(pSpace, []byte(space)), func(b []byte) error { v = slices.Clone(b); return nil })
			if err != nil {
				return 0, err
			}
			if len(v) != 12 {
				return 0, fmt.Errorf("%w: space %q", errCorrupt, space)
			}
			p.next[sid] = binary.BigEndian.Uint64(v[4:])
		}
		return sid, nil
	}
	if !p.loaded {
		var v []byte
		err := p.txn.value(keyLastSID, func(b []byte) error { v = slices.Clone(b); return nil })
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return 0, err
		default:
			if len(v) != 4 {
				return 0, fmt.Errorf("%w: last sid", errCorrupt)
			}
			p.lastSID = binary.BigEndian.Uint32(v)
		}
		p.loaded = true
	}
	if p.lastSID == 1<<32-1 {
		return 0, errors.New("badgerstore: too many spaces")
	}
	p.lastSID++
	sid := p.lastSID
	p.newNames[sid], p.newSIDs[space] = space, sid
	p.next[sid] = 1
	if err := p.txn.Set(keyLastSID, sidb(sid)); err != nil {
		return 0, err
	}
	return sid, p.txn.Set(key(pSpaceName, sidb(sid)), []byte(space))
}

// Put implements dag.Putter. The batch, with its indexes, heads and log
// positions, commits in one Badger transaction, synced to disk unless
// Options.NoSync. So do the pending entries it makes ready, unless there
// are more than fit: the rest are promoted in further transactions, each a
// causal prefix of what is left, before Put returns (see promote.go).
func (s *Store) Put(ctx context.Context, b dag.Batch) (dag.Result, error) {
	return s.put(ctx, b, "")
}

// Resume finishes a promotion that a crash cut off between two of its
// transactions in space (see Unfinished), judging what is left with admit,
// as a Put of an entry of space would. It does nothing when space has none.
func (s *Store) Resume(ctx context.Context, space string, admit func(dag.Entry) error) (dag.Result, error) {
	return s.put(ctx, dag.Batch{Admit: admit}, space)
}

// Unfinished returns the spaces, sorted, where a crash cut off a promotion
// between two of its transactions: pending entries wait there whose
// parents are all applied (or one quarantined). The next Put of an entry of
// such a space, or Resume, finishes it. Without a crash it returns none.
func (s *Store) Unfinished(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := s.drain(); err != nil {
		return nil, err
	}
	if !s.resume {
		return nil, nil
	}
	if err := s.loadReady(); err != nil {
		return nil, err
	}
	var out []string
	for sp, ids := range s.ready {
		if len(ids) > 0 {
			out = append(out, sp)
		}
	}
	slices.Sort(out)
	return out, nil
}

// loadReady reads the pending set for what a cut-off promotion left, once
// per cut. Call with mu held and s.resume set.
func (s *Store) loadReady() error {
	if s.ready != nil {
		return nil
	}
	r, err := s.readyPending()
	if err != nil {
		return fmt.Errorf("badgerstore: resume a promotion: %w", err)
	}
	s.ready = r
	return nil
}

// put is Put; a non-empty also names a space to resume besides those of
// b's entries.
func (s *Store) put(ctx context.Context, b dag.Batch, also string) (dag.Result, error) {
	return s.putAsync(ctx, b, also)()
}

// PutAsync plans and writes b as Put does and starts its commit, and
// returns once the next Put or PutAsync may plan on top of b: it returns
// a func that waits for b's commit and returns what Put would have. b is
// acknowledged (durable, visible to readers) only once that func returned
// a nil error; b's bodies are fdatasynced and its Badger commit synced
// meanwhile, while the caller goes on with the next batch, whose commit
// runs after b's and only if b's succeeded. A failed commit fails the
// writes planned on it too, and every later write, until the store is
// reopened. A batch that makes ready more pending entries than one
// transaction holds is committed in several, the last one asynchronously.
// b's slices may be in use until that func has returned (Put's own: until
// it returns), not after.
func (s *Store) PutAsync(ctx context.Context, b dag.Batch) func() (dag.Result, error) {
	return s.putAsync(ctx, b, "")
}

func (s *Store) putAsync(ctx context.Context, b dag.Batch, also string) func() (dag.Result, error) {
	res, wait, err := s.putStart(ctx, b, also)
	return func() (dag.Result, error) {
		// Even when the Put failed: what it committed before the failure
		// has landed when it returns.
		if werr := wait(); err == nil && werr != nil {
			err = werr
		}
		if err != nil {
			return dag.Result{}, err
		}
		return res, nil
	}
}

// PutStart is PutAsync for a caller that acts on b's Result before b is
// durable (the replica's writer, which brings its in-memory state up to
// the batch while the commit syncs, and shows it to nobody until then): it
// plans and writes b as Put does, starts its commit, and returns the
// Result and error Put would have, with a func that waits for the commit
// and returns its error. The Result is not acknowledged: b is durable and
// visible to readers only once wait returned nil, and if it returns an
// error, nothing of b may have been kept (the store writes nothing more
// until it is reopened). When err is not nil, wait still waits for what
// the Put committed before it failed, and returns nil or that commit's
// error; Put would have returned err.
func (s *Store) PutStart(ctx context.Context, b dag.Batch) (res dag.Result, wait func() error, err error) {
	return s.putStart(ctx, b, "")
}

func (s *Store) putStart(ctx context.Context, b dag.Batch, also string) (dag.Result, func() error, error) {
	s.mu.Lock()
	res, err := s.putLocked(ctx, b, also)
	f := s.flight
	s.mu.Unlock()
	return res, func() error {
		if f == nil {
			return nil
		}
		<-f.done
		return f.err
	}, err
}

// putLocked is put with s.mu held, up to the start of its last commit.
func (s *Store) putLocked(ctx context.Context, b dag.Batch, also string) (dag.Result, error) {
	if err := s.check(ctx); err != nil {
		return dag.Result{}, err
	}
	// After a failed fsync or commit nothing more is acknowledged (reads
	// go on).
	if err := s.broken(); err != nil {
		return dag.Result{}, err
	}
	if err := s.syncFailure(); err != nil {
		return dag.Result{}, err
	}
	s.dropRefused = b.DropRefused
	defer func() { s.dropRefused = false }()
	if s.maxVal > 0 {
		for _, o := range b.Objects {
			if len(o.Data) > s.maxVal {
				return dag.Result{}, fmt.Errorf("%w: object %s is %d bytes, more than the %d an in-memory store holds", ErrValueTooLarge, o.ID, len(o.Data), s.maxVal)
			}
		}
		for _, e := range b.Entries {
			if len(e.Data)+32*len(e.Parents)+32 > s.maxVal {
				return dag.Result{}, fmt.Errorf("%w: entry %s is %d bytes, more than the %d an in-memory store holds", ErrValueTooLarge, e.ID, len(e.Data), s.maxVal)
			}
		}
	}
	// A promotion cut off by a crash is finished by the next Put in its
	// space, with that Put's Admit (which may judge only its own space's
	// entries: the replica's does).
	var ready []dag.ID
	var resumed []string
	keep := false // a cut-off promotion waits in a space this Put does not touch
	if s.resume {
		if err := s.loadReady(); err != nil {
			return dag.Result{}, err
		}
		for _, sp := range slices.Sorted(maps.Keys(s.ready)) {
			mine := sp == also || slices.ContainsFunc(b.Entries, func(e dag.Entry) bool { return e.Space == sp })
			switch {
			case mine:
				ready = append(ready, s.ready[sp]...)
				resumed = append(resumed, sp)
			case len(s.ready[sp]) > 0:
				keep = true
			}
		}
	}
	// The batch is held once its transaction commits. Should a later one
	// fail, the next Put in the space finishes the promotion, as after a
	// crash.
	cut := func(err error) (dag.Result, error) {
		s.resume, s.ready = true, nil
		return dag.Result{}, err
	}
	var res dag.Result
	later := map[dag.ID]bool{} // decided after the first round
	batch, max := b, s.roundMax()
	for round, k := 0, 0; ; round++ {
		// A round plans at most max promotions (its plan is in memory),
		// and writes them in as many transactions as they need.
		if round > 0 {
			if k++; s.promoteHook != nil {
				if err := s.promoteHook(k); err != nil {
					return cut(err)
				}
			}
		}
		p, err := s.newPutTxn()
		if err != nil {
			if round > 0 {
				return cut(err)
			}
			return dag.Result{}, err
		}
		plan, err := dag.PlanResume(batch, p, ready, max)
		if err != nil {
			p.txn.Discard()
			if round > 0 {
				return cut(fmt.Errorf("badgerstore: promotion after the batch committed: %w", err))
			}
			return dag.Result{}, err
		}
		pr := &promotion{plan: plan, keep: keep, more: len(plan.Ready) > 0}
		objects := batch.Objects
		if b.KeepObject != nil && len(objects) > 0 {
			// Asked after Admit judged the batch (in the plan).
			objects = slices.DeleteFunc(slices.Clone(objects), func(o dag.Object) bool { return !b.KeepObject(o.ID) })
		}
		first := func(lim, whole budget) chunk {
			c := s.first(pr, objects, lim, whole)
			if c.marker == 0 && s.marked && !keep {
				c.marker = -1 // the last cut-off promotion ends here
			}
			return c
		}
		c := first(s.limit(), s.wholeLimit())
		if err = s.commit(p, c, round == 0); isTooBig(err) && c.promotes() {
			// The estimate was short: write the batch with only the
			// promotions its own entries need, the rest after it.
			c = first(budget{}, budget{})
			if p, err = s.newPutTxn(); err == nil {
				err = s.commit(p, c, round == 0)
			}
		}
		if err != nil {
			if round > 0 {
				return cut(fmt.Errorf("badgerstore: promotion after the batch committed: %w", err))
			}
			return dag.Result{}, err
		}
		for len(pr.rest)+len(pr.quar) > 0 {
			if k++; s.promoteHook != nil {
				if err := s.promoteHook(k); err != nil {
					return cut(err)
				}
			}
			lim := s.limit()
			for {
				c := s.next(pr, lim)
				p, err := s.newPutTxn()
				if err != nil {
					return cut(err)
				}
				err = s.commit(p, c, false)
				if err == nil {
					pr.consume(c)
					break
				}
				if isTooBig(err) && len(c.apply)+len(c.quar) > 1 {
					lim = budget{lim.count / 2, lim.size / 2}
					continue
				}
				return cut(fmt.Errorf("badgerstore: promotion after the batch committed: %w", err))
			}
		}
		if round == 0 {
			res = plan.Result
			res.Applied = pr.applied
		} else {
			res.Applied = append(res.Applied, pr.applied...)
			res.Quarantined = append(res.Quarantined, plan.Result.Quarantined...)
			for _, id := range pr.applied {
				later[id] = true
			}
			for _, r := range plan.Result.Quarantined {
				later[r.ID] = true
			}
		}
		if len(plan.Ready) == 0 {
			break
		}
		batch, ready = dag.Batch{Admit: b.Admit}, plan.Ready
	}
	if len(later) > 0 {
		// An entry of the batch behind a promotion left for a later round
		// was pending after the first.
		res.Pending = slices.DeleteFunc(res.Pending, func(id dag.ID) bool { return later[id] })
	}
	for _, sp := range resumed {
		delete(s.ready, sp)
	}
	return res, nil
}

func (s *Store) newPutTxn() (*putTxn, error) {
	txn, err := s.nextTxn()
	if err != nil {
		return nil, err
	}
	p := &putTxn{s: s, txn: txn, appliedFrom: s.applied.len(), newNames: map[uint32]string{}, newSIDs: map[string]uint32{}, next: map[uint32]uint64{}, seq: s.seq, dead: map[uint32]int64{}}
	p.pos, p.posRoom, s.pos, s.posRoom = s.pos, s.posRoom, nil, 0
	return p, nil
}

// maxPosRoom bounds the position maps the store keeps for the next
// transaction (a map keeps the room it once took).
const maxPosRoom = 1 << 16

// keepPos takes back p's map of positions, emptied, for the next
// transaction: p's commit has started (or failed), and only writing it
// reads the map. A fresh sync allocated some 100 bytes an entry for these
// maps, one per transaction, before (BenchmarkFreshSync's alloc-B/entry,
// 2026-12-07).
func (s *Store) keepPos(p *putTxn) {
	if p.pos == nil || p.posRoom > maxPosRoom {
		return
	}
	clear(p.pos)
	s.pos, s.posRoom = p.pos, p.posRoom
	p.pos, p.posRoom = nil, 0
}

// promotes reports whether c promotes any pending entry.
func (c chunk) promotes() bool {
	for _, st := range c.apply {
		if st.WasPending {
			return true
		}
	}
	for _, r := range c.quar {
		if r.WasPending {
			return true
		}
	}
	return false
}

// maxBodyBuf is the largest body buffer the store keeps for the next
// commit (Store.bbuf).
const maxBodyBuf = 4 << 20

// commit writes c in p's transaction and starts its commit (a flight,
// s.flight, after the one running), updating the store's memory of what
// it holds as if it had committed: the next Put plans on top of it. Should
// the commit fail, the store writes nothing more (broken). first marks
// the batch's own transaction.
func (s *Store) commit(p *putTxn, c chunk, first bool) error {
	dispatched := false
	defer func() {
		if !dispatched {
			p.txn.Discard()
			// What write added to the applied index goes with it.
			s.applied.truncate(p.appliedFrom)
		}
		s.keepPos(p)
	}()
	if s.bl != nil {
		// The records of the new bodies, sized at once: growing the buffer
		// by appending copied it some ten times over (0.22 of 3.3 CPU-s of
		// a 100k fresh sync, in runtime.growslice under appendRecord).
		n := 0
		for _, st := range c.apply {
			if !st.WasPending {
				n += bodySize(st.Entry) + recordFraming
			}
		}
		for _, w := range c.pending {
			n += bodySize(w.Entry) + recordFraming
		}
		switch {
		case cap(s.bbuf) >= n:
			p.bbuf = s.bbuf[:0]
		case n <= maxBodyBuf:
			s.bbuf = make([]byte, 0, n)
			p.bbuf = s.bbuf
		default:
			// A batch of large bodies does not keep its buffer (a
			// typical commit's is some 400 KiB).
			p.bbuf = make([]byte, 0, n)
		}
	}
	if err := p.write(c); err != nil {
		return fmt.Errorf("badgerstore: put: %w", err)
	}
	if first {
		// Before the commit, so that the filter never misses a held id; an
		// id of a batch that then fails only costs a lookup later. A
		// promoted or refused pending entry is in the filter already.
		for _, st := range c.apply {
			if !st.WasPending {
				s.ids.add(st.ID)
			}
		}
		for _, w := range c.pending {
			s.ids.add(w.ID)
		}
		for _, r := range c.quar {
			if !r.WasPending && !s.dropRefused {
				s.ids.add(r.ID)
			}
		}
	}
	if len(p.bbuf) > 0 {
		// The bodies are durable before the commit that references them.
		end := p.boff + int64(len(p.bbuf))
		r := bodyRun{file: p.bfile, off: p.boff, lens: p.blens}
		if err := p.txn.Set(dataKey(p.brun), r.encode()); err != nil {
			return fmt.Errorf("badgerstore: put: %w", err)
		}
		if err := p.txn.Set(keyBodyEnd, binary.BigEndian.AppendUint64(sidb(p.bfile), uint64(end))); err != nil {
			return fmt.Errorf("badgerstore: put: %w", err)
		}
		wait, err := s.bl.writeAsync(p.bfile, p.boff, p.bbuf)
		if err != nil {
			s.bl.abandon(p.bfile, p.boff)
			return err
		}
		// Badger commits once the bodies are durable.
		p.txn.before = wait
		// The next append goes after these bytes; should this commit
		// fail, the store appends nothing more, and Open cuts them off.
		s.bl.committed(p.bfile, end)
	}
	dispatched = true
	p.txn.applied = uint64(s.applied.len())
	s.flight = s.dispatch(p.txn, s.flight)
	// Badger holds the numbers this commit gave out, durable or not: none
	// may be given again.
	s.seq = p.seq
	for sid, name := range p.newNames {
		s.spaces.Store(name, sid)
		s.spaces.Store(sid, name)
	}
	for _, st := range c.apply {
		if st.WasPending {
			sid, _ := s.sidOf(st.Space)
			s.pending[sid]--
		}
	}
	for _, w := range c.pending {
		sid, _ := s.sidOf(w.Space)
		s.pending[sid]++
	}
	for _, r := range c.quar {
		if r.WasPending {
			sid, _ := s.sidOf(r.Space)
			s.pending[sid]--
		}
		s.anyQuar = s.anyQuar || !s.dropRefused
	}
	switch {
	case c.marker > 0:
		s.marked = true
	case c.marker < 0:
		s.marked, s.resume, s.ready = false, false, nil
	}
	return nil
}

func (p *putTxn) write(c chunk) error {
	t := p.txn
	for _, o := range c.objects {
		k := key(pObject, idb(o.ID))
		if err := t.value(k, func([]byte) error { return nil }); err == nil {
			continue
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := t.Set(k, slices.Clone(o.Data)); err != nil {
			return err
		}
	}
	newHeads := make(map[dag.ID]uint32) // heads added by this transaction
	// The log of a transaction is one key per space: positions are
	// consecutive within it, so a run of ids stands for a key per entry,
	// which saves a third of the keys a Put writes.
	type logRun struct {
		first uint64
		ids   []byte
		seqs  []uint64
	}
	runs := map[uint32]*logRun{}
	// Sized for the entries to come rather than grown by doubling (a
	// fresh sync allocated a fifth less with these and the log run's
	// slices sized at once).
	if need := len(p.pos) + len(c.apply); p.posRoom < need {
		pos := make(map[dag.ID]uint64, need)
		maps.Copy(pos, p.pos)
		p.pos, p.posRoom = pos, need
	}
	t.grow(len(c.apply))
	for i, st := range c.apply {
		sid, err := p.ensureSpace(st.Space)
		if err != nil {
			return err
		}
		id := idb(st.ID)
		var seq bref
		if st.WasPending {
			// Promotion: the body stays where the pending entry put it;
			// only the few bytes of its status change.
			if seq, err = p.pendingBody(st.ID); err != nil {
				return err
			}
			if err := unpend(t, sid, st.Entry); err != nil {
				return err
			}
		} else if seq, err = p.newBody(st.Entry); err != nil {
			return err
		}
		pos := p.next[sid]
		p.next[sid] = pos + 1
		if seq.seq-seq.run > 1<<32-1 {
			return fmt.Errorf("badgerstore: body %d is too far from its run's first, %d", seq.seq, seq.run)
		}
		// Its status record: the log run below names it durably.
		p.s.applied.add((*[32]byte)(id), appliedRec{sid: sid, delta: uint32(seq.seq - seq.run), pos: pos, seq: seq.seq})
		r := runs[sid]
		if r == nil {
			r = &logRun{first: pos}
			if len(runs) == 0 {
				// Most batches are of one space.
				r.ids, r.seqs = make([]byte, 0, len(id)*(len(c.apply)-i)), make([]uint64, 0, len(c.apply)-i)
			}
			runs[sid] = r
		}
		r.ids = append(r.ids, id...)
		r.seqs = append(r.seqs, seq.seq)
		// The children index is keyed by log positions, not ids: a parent
		// is a recent entry of the same space, so the keys of a batch are
		// nearly sorted and come after every older one, and at 21 bytes
		// they are a third of an id pair. With ids (format 3), random
		// 65-byte keys made the LSM tree twice as large as it is, and
		// compacting it took a third of a 1M ingest's CPU. A parent at
		// the position just before its child's has no key: Children finds
		// that child from the log (format 11). In a chain, or a session
		// whose entries each follow the last, that is most edges, and a
		// key fewer an entry cost a fresh sync a tenth of its CPU.
		p.remember(st.ID, pos)
		for _, par := range st.Parents {
			ppos, err := p.position(par)
			if err != nil {
				return err
			}
			if ppos+1 != pos { // else implicit: see Children
				if err := t.Set(key(pChild, sidb(sid), posb(ppos), posb(pos)), nil); err != nil {
					return err
				}
			}
			// Write only the net change of the heads: a head added and
			// superseded within this transaction never reaches Badger.
			if _, ok := newHeads[par]; ok {
				delete(newHeads, par)
			} else if err := t.Delete(key(pHead, sidb(sid), idb(par))); err != nil {
				return err
			}
		}
		newHeads[st.ID] = sid
	}
	for sid, r := range runs {
		if err := t.Set(key(pLog, sidb(sid), posb(r.first)), encodeRun(r.ids, r.seqs)); err != nil {
			return err
		}
	}
	for h, sid := range newHeads {
		if err := t.Set(key(pHead, sidb(sid), idb(h)), nil); err != nil {
			return err
		}
	}
	for _, w := range c.pending {
		sid, err := p.ensureSpace(w.Space)
		if err != nil {
			return err
		}
		id := idb(w.ID)
		seq, err := p.newBody(w.Entry)
		if err != nil {
			return err
		}
		if err := t.Set(key(pPending, id), head(sid, 0, seq)); err != nil {
			return err
		}
		if err := t.Set(key(pQueue, sidb(sid), id), nil); err != nil {
			return err
		}
		for _, par := range w.WaitsFor {
			if err := t.Set(key(pWait, sidb(sid), idb(par), id), nil); err != nil {
				return err
			}
		}
	}
	for _, r := range c.quar {
		if p.s.dropRefused && !r.WasPending {
			continue // nothing is kept of what is refused
		}
		sid, err := p.ensureSpace(r.Space)
		if err != nil {
			return err
		}
		id := idb(r.ID)
		var seq bref
		if r.WasPending {
			if seq, err = p.pendingBody(r.ID); err != nil {
				return err
			}
			if err := unpend(t, sid, r.Entry); err != nil {
				return err
			}
		}
		if p.s.dropRefused {
			if err := p.s.deleteBody(t, seq, p.dead); err != nil {
				return err
			}
			continue
		}
		if !r.WasPending {
			if seq, err = p.newBody(r.Entry); err != nil {
				return err
			}
		}
		if err := t.Set(key(pQuar, id), head(sid, 0, seq)); err != nil {
			return err
		}
		if err := t.Set(key(pRefused, sidb(sid), id), encodeRejection(r.Rejection)); err != nil {
			return err
		}
	}
	switch {
	case c.marker > 0:
		if err := t.Set(keyPromote, nil); err != nil {
			return err
		}
	case c.marker < 0:
		if err := t.Delete(keyPromote); err != nil {
			return err
		}
	}
	if p.seq != p.s.seq {
		if err := t.Set(keyLastSeq, posb(p.seq)); err != nil {
			return err
		}
	}
	if err := addDead(t, p.dead); err != nil {
		return err
	}
	for sid, next := range p.next {
		v := binary.BigEndian.AppendUint64(sidb(sid), next)
		if err := t.Set(key(pSpace, []byte(p.name(sid))), v); err != nil {
			return err
		}
	}
	return nil
}

// unpend deletes a pending entry's status record and waiting index (not its
// body: a promoted or quarantined entry keeps it).
func unpend(t *wtxn, sid uint32, e dag.Entry) error {
	id := idb(e.ID)
	if err := t.Delete(key(pPending, id)); err != nil {
		return err
	}
	if err := t.Delete(key(pQueue, sidb(sid), id)); err != nil {
		return err
	}
	for _, par := range e.Parents {
		if err := t.Delete(key(pWait, sidb(sid), idb(par), id)); err != nil {
			return err
		}
	}
	return nil
}

// Get implements dag.Getter.
func (s *Store) Get(ctx context.Context, id dag.ID) (dag.Entry, error) {
	var e dag.Entry
	err := s.viewAt(ctx, func(txn rtxn) error {
		var st dag.Status
		var err error
		e, st, _, err = s.lookup(txn, id, s.nameOf, true, true)
		if err == nil && st != dag.Applied {
			err = fmt.Errorf("badgerstore: entry %s: %w", id, dag.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return dag.Entry{}, err
	}
	return e, nil
}

// Has implements dag.Haser.
func (s *Store) Has(ctx context.Context, id dag.ID) (dag.Status, error) {
	st := dag.Absent
	if err := s.check(ctx); err != nil {
		return st, err
	}
	if !s.ids.mayHold(id) {
		return st, nil
	}
	r, i, held := s.applied.get(id)
	if held && i < s.landed.Load() {
		return dag.Applied, nil
	}
	err := s.viewAt(ctx, func(txn rtxn) error {
		if held {
			in, err := inView(txn.Txn, txn.at, id, r, i)
			if err != nil || in {
				if in {
					st = dag.Applied
				}
				return err
			}
		}
		for _, c := range []struct {
			p  byte
			st dag.Status
		}{{pPending, dag.Pending}, {pQuar, dag.Quarantined}} {
			_, err := txn.Get(key(c.p, idb(id)))
			if err == nil {
				st = c.st
				return nil
			}
			if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
		}
		return nil
	})
	return st, err
}

// Object implements dag.ObjectGetter.
func (s *Store) Object(ctx context.Context, id dag.ID) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(txn *badger.Txn) error {
		item, err := txn.Get(key(pObject, idb(id)))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("badgerstore: object %s: %w", id, dag.ErrNotFound)
		}
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		if out == nil {
			out = []byte{}
		}
		return err
	})
	return out, err
}

// Parents implements dag.Index.
func (s *Store) Parents(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	var ps []dag.ID
	err := s.viewAt(ctx, func(txn rtxn) error {
		r, found, err := s.appliedOf(txn, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("badgerstore: parents of %s: %w", id, dag.ErrNotFound)
		}
		return s.bodyBytes(txn, id, r.body(), func(v []byte) error {
			// Decode only the parents, not the data.
			var err error
			ps, _, err = bodyParents(id, v)
			return err
		})
	})
	return ps, err
}

// scan returns the ids that end the keys under prefix, in key order, up
// to limit (all if limit <= 0), starting at seek when it is not nil.
func (s *Store) scan(ctx context.Context, prefix, seek []byte, limit int) ([]dag.ID, error) {
	out := []dag.ID{}
	err := s.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		if seek == nil {
			seek = prefix
		}
		for it.Seek(seek); it.Valid(); it.Next() {
			k := it.Item().Key()
			out = append(out, idFrom(k[len(k)-32:]))
			if limit > 0 && len(out) == limit {
				break
			}
		}
		return nil
	})
	return out, err
}

// Children implements dag.Index.
func (s *Store) Children(ctx context.Context, id dag.ID) ([]dag.ID, error) {
	out := []dag.ID{}
	err := s.viewAt(ctx, func(rt rtxn) error {
		txn := rt.Txn
		sid, pos, ok, err := s.appliedAt(rt, id)
		if err != nil || !ok {
			return err // only applied entries have applied children
		}
		prefix := key(pChild, sidb(sid), posb(pos))
		var at []uint64
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != len(prefix)+8 {
				it.Close()
				return fmt.Errorf("%w: child key %x", errCorrupt, k)
			}
			at = append(at, binary.BigEndian.Uint64(k[len(prefix):]))
		}
		it.Close()
		// The entry just after id in the log is a child with no key of
		// its own when it names id as a parent (write); a format-10
		// store has a key for it too.
		if !slices.Contains(at, pos+1) {
			ok, err := s.nextIsChild(txn, sid, pos, id)
			if err != nil {
				return err
			}
			if ok {
				at = append(at, pos+1)
			}
		}
		if out, err = idsAt(txn, sid, at); err != nil {
			return err
		}
		slices.SortFunc(out, dag.ID.Compare)
		return nil
	})
	return out, err
}

// nextIsChild reports whether the entry at log position pos+1 of space
// sid, if there is one, names id (at pos) as a parent: the edge write
// leaves without a key.
func (s *Store) nextIsChild(txn *badger.Txn, sid uint32, pos uint64, id dag.ID) (bool, error) {
	c := newRunCursor(txn, sid)
	defer c.close()
	if _, ok, err := c.at(pos); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%w: no log run holds position %d", errCorrupt, pos)
		}
		return false, err
	}
	next, ok, err := c.at(pos + 1)
	if err != nil || !ok {
		return false, err // !ok: id is the last entry of its space
	}
	// next is in this view's log: its commit landed, and the index holds
	// it whether or not landed says so yet.
	r, _, ok := s.applied.get(next)
	if !ok {
		return false, fmt.Errorf("%w: %s at log position %d is not applied", errCorrupt, next, pos+1)
	}
	var named bool
	err = s.bodyBytes(rtxn{Txn: txn}, next, r.body(), func(v []byte) error {
		ps, _, err := bodyParents(next, v)
		named = slices.Contains(ps, id)
		return err
	})
	return named, err
}

// idsAt returns the ids at log positions at (ascending) of space sid,
// reading each log run once.
func idsAt(txn *badger.Txn, sid uint32, at []uint64) ([]dag.ID, error) {
	out := make([]dag.ID, 0, len(at))
	c := newRunCursor(txn, sid)
	defer c.close()
	for _, pos := range at {
		id, ok, err := c.at(pos)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: no log run holds position %d", errCorrupt, pos)
		}
		out = append(out, id)
	}
	return out, nil
}

// runCursor reads the ids of a space's log runs, keeping the run it read
// last, so that positions asked in ascending order read each run once.
type runCursor struct {
	sid    uint32
	it     *badger.Iterator
	prefix []byte
	first  uint64
	ids    []byte // the ids of the run held, nil before the first
}

func newRunCursor(txn *badger.Txn, sid uint32) *runCursor {
	prefix := key(pLog, sidb(sid))
	return &runCursor{sid: sid, it: txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true}), prefix: prefix}
}

func (c *runCursor) close() { c.it.Close() }

// at returns the id at log position pos; ok is false when no run holds it.
func (c *runCursor) at(pos uint64) (id dag.ID, ok bool, err error) {
	if c.ids == nil || pos < c.first || pos-c.first >= uint64(len(c.ids)/32) {
		// The run holding pos is the last one starting at or before it.
		if c.it.Seek(key(pLog, sidb(c.sid), posb(pos))); !c.it.Valid() {
			return dag.ID{}, false, nil
		}
		k := c.it.Item().Key()
		if len(k) != len(c.prefix)+8 {
			return dag.ID{}, false, fmt.Errorf("%w: log key %x", errCorrupt, k)
		}
		c.first = binary.BigEndian.Uint64(k[len(c.prefix):])
		v, err := c.it.Item().ValueCopy(nil)
		if err != nil {
			return dag.ID{}, false, err
		}
		if c.ids, _, err = decodeRun(v); err != nil {
			return dag.ID{}, false, fmt.Errorf("%w: log run at %d: %v", errCorrupt, c.first, err)
		}
		if pos-c.first >= uint64(len(c.ids)/32) {
			return dag.ID{}, false, nil
		}
	}
	return idFrom(c.ids[32*(pos-c.first):]), true, nil
}

// encodeRun encodes a log run (the value of a pLog key): uvarint n, the n
// ids (32 bytes each), then their body numbers, the first as a uvarint and
// each next one as the zigzag uvarint of its difference from the one
// before. A batch's new bodies are numbered consecutively, so most take one
// byte; a promoted entry's body keeps the number it had while pending.
func encodeRun(ids []byte, seqs []uint64) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(ids)+len(seqs)+binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(len(seqs)))
	b = append(b, ids...)
	var last uint64
	for i, q := range seqs {
		if i == 0 {
			b = binary.AppendUvarint(b, q)
		} else {
			b = binary.AppendVarint(b, int64(q-last))
		}
		last = q
	}
	return b
}

// decodeRun splits a log run into its ids and its encoded body numbers
// (runSeqs decodes them). The returned slices alias v.
func decodeRun(v []byte) (ids, seqs []byte, err error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k)/32 {
		return nil, nil, errors.New("bad run length")
	}
	end := k + 32*int(n)
	return v[k:end], v[end:], nil
}

// runSeqs appends to dst the n body numbers encoded in b (decodeRun's seqs).
func runSeqs(dst []uint64, b []byte, n int) ([]uint64, error) {
	var last uint64
	for i := 0; i < n; i++ {
		var k int
		if i == 0 {
			last, k = binary.Uvarint(b)
		} else {
			var d int64
			d, k = binary.Varint(b)
			last += uint64(d)
		}
		if k <= 0 {
			return nil, errors.New("bad body number")
		}
		dst = append(dst, last)
		b = b[k:]
	}
	if len(b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	return dst, nil
}

// Heads implements dag.Index.
func (s *Store) Heads(ctx context.Context, space string) ([]dag.ID, error) {
	sid, ok := s.sidOf(space)
	if !ok {
		return []dag.ID{}, s.check(ctx)
	}
	return s.scan(ctx, key(pHead, sidb(sid)), nil, 0)
}

// Pending implements dag.Index.
func (s *Store) Pending(ctx context.Context, space string) ([]dag.ID, error) {
	sid, ok := s.sidOf(space)
	if !ok {
		return []dag.ID{}, s.check(ctx)
	}
	return s.scan(ctx, key(pQueue, sidb(sid)), nil, 0)
}

// Position implements dag.Index.
func (s *Store) Position(ctx context.Context, id dag.ID) (uint64, error) {
	var pos uint64
	err := s.viewAt(ctx, func(txn rtxn) error {
		_, p, ok, err := s.appliedAt(txn, id)
		if err == nil && !ok {
			err = fmt.Errorf("badgerstore: position of %s: %w", id, dag.ErrNotFound)
		}
		pos = p
		return err
	})
	return pos, err
}

// Log implements dag.Index.
func (s *Store) Log(ctx context.Context, space string, after uint64, limit int) ([]dag.ID, error) {
	sid, ok := s.sidOf(space)
	if !ok || after == 1<<64-1 {
		return []dag.ID{}, s.check(ctx)
	}
	var out []dag.ID
	err := s.view(ctx, func(txn *badger.Txn) error {
		var err error
		out, err = logIDs(txn, sid, after, limit, nil)
		return err
	})
	return out, err
}

// logIDs is Log in txn, for space number sid. If seqs is not nil, the body
// number of each id is appended to it.
func logIDs(txn *badger.Txn, sid uint32, after uint64, limit int, seqs *[]uint64) ([]dag.ID, error) {
	out := []dag.ID{}
	prefix := key(pLog, sidb(sid))
	var runSeq []uint64
	err := func() error {
		// The run holding position after+1 is the last one starting at or
		// before it.
		start := prefix
		rev := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
		if rev.Seek(key(pLog, sidb(sid), posb(after+1))); rev.Valid() {
			start = rev.Item().KeyCopy(nil)
		}
		rev.Close()
		// Values are read in place (Item.Value), not prefetched: a prefetch
		// copies the next runs whole, up to 32 KiB each, where a page of
		// sync's log serving needs a few dozen ids of one.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(start); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != len(prefix)+8 {
				return fmt.Errorf("%w: log key %x", errCorrupt, k)
			}
			first := binary.BigEndian.Uint64(k[len(prefix):])
			err := it.Item().Value(func(v []byte) error {
				ids, enc, err := decodeRun(v)
				if err == nil && seqs != nil {
					runSeq, err = runSeqs(runSeq[:0], enc, len(ids)/32)
				}
				if err != nil {
					return fmt.Errorf("%w: log run at %d: %v", errCorrupt, first, err)
				}
				for i := 0; i < len(ids); i += 32 {
					if first+uint64(i/32) <= after {
						continue
					}
					out = append(out, idFrom(ids[i:]))
					if seqs != nil {
						*seqs = append(*seqs, runSeq[i/32])
					}
					if limit > 0 && len(out) == limit {
						return errDone
					}
				}
				return nil
			})
			if errors.Is(err, errDone) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		return nil
	}()
	return out, err
}

// LogEntries returns up to limit applied entries of space in log order,
// starting after position after, as Log and then Get for each would, in one
// read: the log runs name each entry's body number, and the bodies,
// numbered in the order they were written (mostly the log's), are read in
// that order, on disk each run of adjacent records with one read (its
// entries then share one allocation for their data and one for their
// parents, as ScanLog's do), in memory with one iterator, stepping to the
// next key where it is the one wanted and seeking only across a gap.
// sync's responder serves a space's log with it (sync.LogReader).
func (s *Store) LogEntries(ctx context.Context, space string, after uint64, limit int) ([]dag.Entry, error) {
	sid, ok := s.sidOf(space)
	if !ok || after == 1<<64-1 {
		return []dag.Entry{}, s.check(ctx)
	}
	var out []dag.Entry
	err := s.view(ctx, func(txn *badger.Txn) error {
		var seqs []uint64
		ids, err := logIDs(txn, sid, after, limit, &seqs)
		if err != nil {
			return err
		}
		refs := make([]logRef, len(ids))
		for i, seq := range seqs {
			refs[i] = logRef{seq, i}
		}
		slices.SortFunc(refs, func(a, b logRef) int { return cmp.Compare(a.seq, b.seq) })
		out = make([]dag.Entry, len(ids))
		if s.bl != nil {
			// On disk: the body runs holding the numbers, each read once.
			locs := make([]loc, len(refs))
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pData}, Reverse: true})
			defer it.Close()
			var run bodyRun
			var runLocs []loc
			for k, r := range refs {
				if !run.holds(r.seq) {
					var ok bool
					if run, ok, err = runAt(it, r.seq); err != nil {
						return err
					} else if !ok {
						return fmt.Errorf("%w: no body for %s", errCorrupt, ids[r.i])
					}
					runLocs = run.locs()
				}
				if locs[k] = runLocs[r.seq-run.first]; locs[k].n == 0 {
					return fmt.Errorf("%w: no body for %s", errCorrupt, ids[r.i])
				}
			}
			return s.readLogBodies(space, ids, refs, locs, out, new([]byte))
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pData}, PrefetchValues: false})
		defer it.Close()
		for k, r := range refs {
			want := dataKey(r.seq)
			if k == 0 || !it.Valid() || !bytes.Equal(it.Item().Key(), want) {
				if it.Seek(want); !it.Valid() || !bytes.Equal(it.Item().Key(), want) {
					return fmt.Errorf("%w: no body for %s", errCorrupt, ids[r.i])
				}
			}
			if err := it.Item().Value(func(v []byte) error {
				var err error
				out[r.i], err = decodeBody(ids[r.i], v)
				return err
			}); err != nil {
				return err
			}
			out[r.i].Space = space
			it.Next()
		}
		return nil
	})
	return out, err
}

// readLogBodies reads the bodies at locs (of refs, sorted by number) from
// the body files into out, for LogEntries and ScanLog. Each run of
// adjacent records (up to about 1 MiB) is one read into *buf (grown as
// needed, and kept for the caller's next call: nothing read points into
// it), and the entries it holds share one allocation for their data and
// one for their parents, as dag.MemStore's LogEntries does, rather than
// two allocations an entry.
func (s *Store) readLogBodies(space string, ids []dag.ID, refs []logRef, locs []loc, out []dag.Entry, buf *[]byte) error {
	// The bodies of one read, checked: each one's parent count and the
	// rest, as bodyParentCount returns them.
	type body struct {
		np   int
		rest []byte
	}
	var bodies []body
	for k := 0; k < len(refs); {
		start := locs[k].off - int64(recordHeader(refs[k].seq, locs[k].n))
		end := locs[k].off + int64(locs[k].n) + 4
		j := k + 1
		for ; j < len(refs) && end-start < 1<<20; j++ {
			l := locs[j]
			if l.file != locs[k].file || l.off-int64(recordHeader(refs[j].seq, l.n)) != end {
				break
			}
			end = l.off + int64(l.n) + 4
		}
		if int64(cap(*buf)) < end-start {
			*buf = make([]byte, end-start)
		}
		rd := (*buf)[:end-start]
		if err := s.bl.readAt(locs[k].file, rd, start); err != nil {
			return err
		}
		bodies = bodies[:0]
		dataN, parN := 0, 0
		for i := k; i < j; i++ {
			l, r := locs[i], refs[i]
			h := int64(recordHeader(r.seq, l.n))
			b, err := checkRecord(r.seq, l, rd[l.off-h-start:l.off+int64(l.n)+4-start])
			if err != nil {
				return err
			}
			np, rest, err := bodyParentCount(ids[r.i], b)
			if err != nil {
				return err
			}
			bodies = append(bodies, body{np, rest})
			dataN += unpackedSize(rest[32*np:])
			parN += np
		}
		data, parents := make([]byte, 0, dataN), make([]dag.ID, 0, parN)
		for i, b := range bodies {
			r := refs[k+i]
			e, err := decodeBodyInto(ids[r.i], b.np, b.rest, &data, &parents)
			if err != nil {
				return err
			}
			e.Space = space
			out[r.i] = e
		}
		k = j
	}
	return nil
}

// logRef is an entry of LogEntries' answer: its body number, and its
// index in the answer.
type logRef struct {
	seq uint64
	i   int
}

var errDone = errors.New("done")

// Missing implements dag.Index.
func (s *Store) Missing(ctx context.Context, space string) ([]dag.ID, error) {
	sid, ok := s.sidOf(space)
	if !ok {
		return []dag.ID{}, s.check(ctx)
	}
	out := []dag.ID{}
	prefix := key(pWait, sidb(sid))
	err := s.viewAt(ctx, func(txn rtxn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		var last []byte
		for it.Rewind(); it.Valid(); it.Next() {
			par := it.Item().Key()[len(prefix) : len(prefix)+32]
			if bytes.Equal(par, last) {
				continue
			}
			last = slices.Clone(par)
			id := idFrom(par)
			e, st, _, err := s.lookup(txn, id, s.nameOf, true, true)
			if err != nil {
				return err
			}
			if st == dag.Absent || e.Space != space && st != dag.Quarantined {
				out = append(out, id)
			}
		}
		return nil
	})
	return out, err
}

// Quarantine implements dag.Index.
func (s *Store) Quarantine(ctx context.Context, space string) ([]dag.Rejection, error) {
	sid, ok := s.sidOf(space)
	if !ok {
		return []dag.Rejection{}, s.check(ctx)
	}
	out := []dag.Rejection{}
	prefix := key(pRefused, sidb(sid))
	err := s.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			id := idFrom(it.Item().Key()[len(prefix):])
			err := it.Item().Value(func(v []byte) error {
				r, err := decodeRejection(id, v)
				out = append(out, r)
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Spaces implements dag.Index.
func (s *Store) Spaces(ctx context.Context) ([]string, error) {
	var out []string
	err := s.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pSpace}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			out = append(out, string(it.Item().Key()[1:]))
		}
		return nil
	})
	return out, err
}

func (s *Store) view(ctx context.Context, fn func(*badger.Txn) error) (err error) {
	if err := s.check(ctx); err != nil {
		return err
	}
	// A read runs without the store's lock, so Close can close Badger
	// while it iterates; Badger then panics ("DB Closed") instead of
	// returning an error. Such a read ends with dag.ErrClosed; any other
	// panic goes on.
	defer func() {
		if r := recover(); r != nil {
			if !s.closing.Load() {
				panic(r)
			}
			err = dag.ErrClosed
		}
	}()
	if s.bl != nil {
		// GC deletes a body file only when no view can hold a location
		// in it.
		s.bl.gate.RLock()
		defer s.bl.gate.RUnlock()
	}
	if h := s.viewHook; h != nil {
		inner := fn
		fn = func(txn *badger.Txn) error { h(); return inner(txn) }
	}
	err = s.db.View(fn)
	if errors.Is(err, badger.ErrDBClosed) {
		return dag.ErrClosed
	}
	return err
}

// Sync forces every committed batch to disk. With the default options
// each Put already syncs; with NoSync, call Sync before acknowledging.
func (s *Store) Sync() error {
	if err := s.check(context.Background()); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.drain()
	if err == nil && s.bl != nil {
		err = s.bl.syncAll()
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.db.Sync()
}

// abandonBodies cuts the bodies of a commit that failed off the body
// file, unless the store failed (ErrSync): then it writes nothing more to
// any body file, and the next Open cuts what no commit names and appends
// to a new file (openBodyLog).
func (s *Store) abandonBodies(file uint32, off int64) {
	if s.syncFailure() == nil {
		s.bl.abandon(file, off)
	}
}

// syncFailure returns ErrSync once a write could not be made durable:
// Badger's (its log line) or a body file's.
func (s *Store) syncFailure() error {
	if s.bl != nil {
		if err := s.bl.syncFailure(); err != nil {
			return err
		}
	}
	return s.watch.syncFailure()
}

// GC collects the body files at least half dead (moving their live bodies
// to the current file, then deleting them: bodyfile.go), then runs
// Badger's value-log garbage collection until it finds no file worth
// rewriting (half of it garbage), and returns how many files it deleted
// or rewrote. witan up runs it on a schedule (-gc-every). Neither takes
// the newest file; Badger learns what is garbage from its compactions, so
// a young store has nothing to collect there.
func (s *Store) GC(ctx context.Context) (int, error) {
	n, err := s.gcBodies(ctx)
	if err != nil {
		return n, err
	}
	for {
		if err := s.check(ctx); err != nil {
			return n, err
		}
		err := s.runValueLogGC()
		switch {
		case err == nil:
			n++
		case errors.Is(err, badger.ErrNoRewrite), errors.Is(err, badger.ErrGCInMemoryMode):
			return n, nil
		default:
			return n, fmt.Errorf("badgerstore: value log gc: %w", err)
		}
	}
}

// runValueLogGC runs one round of Badger's value-log GC (at most one
// file rewritten) with the store's writes held off. Badger's GC reads the
// memtable's newest version (DB.MaxVersion) while its writer goroutine
// updates it without a lock, a data race in Badger 4.9 that the race
// detector reports (TestSybilFloodFlat under -race); no Put commits while
// s.mu is held, so the writer is idle but for the GC's own rewrite. Writes
// wait for one file's rewrite at most: the lock is released between files.
// Only objects too long for the tree are in the value log; with
// SyncWrites, the GC's rewrite is synced before it deletes a file.
func (s *Store) runValueLogGC() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.drain(); err != nil {
		return err
	}
	return s.db.RunValueLogGC(0.5)
}

// Compact rewrites the LSM tree into as few levels as it can and collects
// the body files and the value log, to measure or reclaim space. It is
// slow; the store stays usable meanwhile.
func (s *Store) Compact(ctx context.Context) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, err := s.gcBodies(ctx); err != nil {
		return err
	}
	if err := s.db.Flatten(2); err != nil {
		return fmt.Errorf("badgerstore: flatten: %w", err)
	}
	for {
		err := s.runValueLogGC()
		if err != nil {
			if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrGCInMemoryMode) {
				return nil
			}
			return fmt.Errorf("badgerstore: value log gc: %w", err)
		}
	}
}

// DB returns the underlying Badger database, for metrics and backups.
// Writing to it directly breaks the store's invariants.
func (s *Store) DB() *badger.DB { return s.db }

// Close closes the store; later calls return dag.ErrClosed. Close waits
// for a Put in progress, then compacts level 0 of the LSM tree (on disk),
// which drops the keys promotions and evictions deleted and tells the
// value-log GC what they left (docs/storage.md).
func (s *Store) Close() error {
	err := dag.ErrClosed
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.gcmu.Lock()
		defer s.gcmu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.drain() //nolint:errcheck // a failed commit failed its Put
		s.flights.Wait()
		close(s.closed)
		err = untilStuck("close", func(start time.Time) error { return s.watch.flushStuck(start, stuckAfter) }, s.db.Close)
		if s.bl != nil {
			if cerr := s.bl.close(); err == nil {
				err = cerr
			}
		}
	})
	if errors.Is(err, dag.ErrClosed) {
		return nil
	}
	return err
}

// DropPending removes pending entries of space, as if they had never
// arrived: their records and their waiting index. A replica calls it to
// bound what waits for parents (docs/security.md); ids that are not
// pending in space are skipped. It returns how many it removed. Their
// bodies become dead bytes of their body files (in memory: Badger's
// garbage), which GC reclaims.
func (s *Store) DropPending(ctx context.Context, space string, ids []dag.ID) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	if err := s.drain(); err != nil {
		return 0, err
	}
	sid, ok := s.sidOf(space)
	if !ok || len(ids) == 0 {
		return 0, nil
	}
	// In transactions of dropChunk ids, so that any number fits: each
	// entry goes whole, and an error leaves those before it dropped.
	total := 0
	for len(ids) > 0 {
		k := min(len(ids), dropChunk)
		n, err := s.dropPending(sid, ids[:k])
		total += n
		if err != nil {
			return total, err
		}
		ids = ids[k:]
	}
	return total, nil
}

// dropChunk is how many pending entries DropPending removes per
// transaction: each costs up to some ten keys (status, body, queue,
// waiting keys).
const dropChunk = 512

// dropPending removes the pending entries ids of space sid in one
// transaction. Call with mu held.
func (s *Store) dropPending(sid uint32, ids []dag.ID) (int, error) {
	txn := s.newTxn()
	defer txn.Discard()
	n := 0
	dead := map[uint32]int64{}
	for _, id := range ids {
		esid, _, seq, found, err := statusOf(txn, key(pPending, idb(id)), id)
		if err != nil {
			return 0, err
		}
		if !found || esid != sid {
			continue
		}
		e, err := s.readBody(txn, id, seq)
		if err != nil {
			return 0, err
		}
		if err := unpend(txn, sid, e); err != nil {
			return 0, err
		}
		// Nothing is kept of it: its body becomes dead bytes of its body
		// file (in memory: Badger's garbage), which GC reclaims.
		if err := s.deleteBody(txn, seq, dead); err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if err := addDead(txn, dead); err != nil {
		return 0, err
	}
	if err := s.commitTxn(txn); err != nil {
		return 0, fmt.Errorf("badgerstore: drop pending: %w", err)
	}
	if err := s.syncFailure(); err != nil {
		return 0, err
	}
	s.pending[sid] -= n
	return n, nil
}
