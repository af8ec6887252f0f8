package meetstore

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/dag/durable"
)

// Errors.
var (
	ErrForgotten = errors.New("meetstore: forgotten")
	ErrNotFound  = errors.New("meetstore: not found")
	ErrBadCopy   = errors.New("meetstore: invalid copy")
	ErrResidue   = errors.New("meetstore: a destroyed seed is still in the store's files")
	ErrClosed    = errors.New("meetstore: closed")
)

// Class is a retention class k of §7.8.
type Class uint8

// The classes of §7.8.
const (
	Class1d Class = iota + 1
	Class7d
	Class30d
	ClassKeep
)

var classDays = [...]int64{0, 1, 7, 30, 365 * 1000}

func (k Class) valid() bool { return k >= Class1d && k <= ClassKeep }

func (k Class) String() string {
	switch k {
	case Class1d:
		return "1d"
	case Class7d:
		return "7d"
	case Class30d:
		return "30d"
	case ClassKeep:
		return "keep"
	}
	return fmt.Sprintf("class(%d)", k)
}

// Day is 24 hours, the unit of every class and step.
const Day = 24 * time.Hour

// Forever stands for "no limit" (it is sessions.Forever's value).
const Forever = time.Duration(1<<63 - 1)

// ClassFor is the class of a record whose limit is λ* (Forever if none):
// the longest class not longer than the limit, so a record is never kept
// longer than asked. A limit under one day has no class (ok is false): the
// store keeps nothing of such a record.
func ClassFor(limit time.Duration) (k Class, ok bool) {
	switch {
	case limit == Forever:
		return ClassKeep, true
	case limit >= 30*Day:
		return Class30d, true
	case limit >= 7*Day:
		return Class7d, true
	case limit >= Day:
		return Class1d, true
	}
	return 0, false
}

// Keep is keep(r, k) of §7.8 in days: min((3, 30, 365) days for r = 3, 2, 1,
// days(k)). It is 0 for a level outside 1–3 or an unknown class.
func Keep(r int, k Class) int64 {
	var byLevel int64
	switch r {
	case 1:
		byLevel = 365
	case 2:
		byLevel = 30
	case 3:
		byLevel = 3
	default:
		return 0
	}
	if !k.valid() {
		return 0
	}
	return min(byLevel, classDays[k])
}

// DayOf is the UTC day number of t (days since 1970-01-01).
func DayOf(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return d
}

// Clock tells the store the time. The node's clock is the system's; tests
// inject one.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now().UTC() }

// Options configure a Store. The zero value works (system clock,
// crypto/rand).
type Options struct {
	Clock   Clock
	Entropy io.Reader
	// afterStep, if set, is called after each step of forgetting (tests
	// kill the process there).
	afterStep func(step string)
}

// MaxPlain is the largest copy Put accepts, in bytes. Copies stay far below
// Badger's value threshold, so they live in the LSM tree, never the value
// log.
const MaxPlain = 64 << 10

// chain names one (r, k) chain: 3 levels × 4 classes.
type chain struct {
	r int
	k Class
}

func (c chain) id() byte { return byte(c.r)<<4 | byte(c.k) }

// Key layout. Seeds: 'k' chain day(8, big-endian, offset) → seed (32).
// Copies: 'c' chain day item → nonce(12) ‖ sealed. The day is in the key so
// that a chain's forgotten days are whole prefixes.
const (
	seedPrefix = 'k'
	copyPrefix = 'c'
	dayOffset  = 1 << 62 // days are stored offset so that they sort as unsigned
)

func seedKey(c chain, day int64) []byte {
	b := make([]byte, 10)
	b[0], b[1] = seedPrefix, c.id()
	binary.BigEndian.PutUint64(b[2:], uint64(day+dayOffset))
	return b
}

func copyDayPrefix(c chain, day int64) []byte {
	b := make([]byte, 10)
	b[0], b[1] = copyPrefix, c.id()
	binary.BigEndian.PutUint64(b[2:], uint64(day+dayOffset))
	return b
}

func copyKey(c chain, day int64, item []byte) []byte {
	return append(copyDayPrefix(c, day), item...)
}

// Store is the §7.8 store on its own Badger database. It is safe for
// concurrent use.
type Store struct {
	db      *badger.DB
	dir     string
	clock   Clock
	entropy io.Reader
	after   func(string)

	mu     sync.Mutex
	seeds  map[chain]liveSeed // the oldest live seed of each chain
	closed bool
}

type liveSeed struct {
	day  int64
	seed [32]byte
}

// Open opens (or creates) the store in dir and forgets what the clock says
// is due, so nothing a crash left half-forgotten survives the open.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	if opts.Entropy == nil {
		opts.Entropy = rand.Reader
	}
	// Badger makes a missing directory without syncing its parent.
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("meetstore: %w", err)
	}
	bo := badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(nil).
		WithValueThreshold(256 << 10).
		WithNumVersionsToKeep(1).
		WithCompression(options.None).
		WithMemTableSize(2 << 20).
		WithNumMemtables(1).
		WithNumLevelZeroTables(1).
		WithNumLevelZeroTablesStall(2).
		WithBlockCacheSize(1 << 20).
		WithIndexCacheSize(1 << 20).
		WithValueLogFileSize(1 << 20).
		WithNumCompactors(2).
		WithMetricsEnabled(false)
	db, err := badgerstore.OpenDB(bo) // survives the empty file a kill can leave
	if err != nil {
		return nil, fmt.Errorf("meetstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir, clock: opts.Clock, entropy: opts.Entropy, after: opts.afterStep,
		seeds: map[chain]liveSeed{}}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.Forget(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// load reads each chain's newest seed; older ones (left by a crash between
// the steps of forgetting) are dropped by the next Forget.
func (s *Store) load() error {
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{seedPrefix}, PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != 10 {
				return fmt.Errorf("%w: seed key %x", ErrBadCopy, k)
			}
			c := chain{r: int(k[1] >> 4), k: Class(k[1] & 0xf)}
			day := int64(binary.BigEndian.Uint64(k[2:])) - dayOffset
			var ls liveSeed
			ls.day = day
			if err := it.Item().Value(func(v []byte) error {
				if len(v) != 32 {
					return fmt.Errorf("%w: seed of %d bytes", ErrBadCopy, len(v))
				}
				copy(ls.seed[:], v)
				return nil
			}); err != nil {
				return err
			}
			if old, ok := s.seeds[c]; !ok || old.day < day {
				s.seeds[c] = ls
			}
		}
		return nil
	})
}

// Close closes the store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

func nextSeed(seed [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("witan/meetstore/seed"))
	h.Write(seed[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// seedAt hashes a live seed forward to day (≥ its own day).
func (ls liveSeed) at(day int64) [32]byte {
	seed := ls.seed
	for d := ls.day; d < day; d++ {
		seed = nextSeed(seed)
	}
	return seed
}

func dayKey(c chain, seed [32]byte) ([]byte, error) {
	return hkdf.Key(sha256.New, seed[:], []byte{'w', 'm', c.id()}, "witan/meetstore/day-key", 32)
}

func aead(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// maxAhead bounds how far into the future a copy's day may be (a device
// clock ahead of the node's): hashing forward costs one SHA-256 a day.
const maxAhead = 2

// cutoff is the last forgotten day of chain c at day today: D′ − keep.
func cutoff(c chain, today int64) int64 { return today - Keep(c.r, c.k) }

// Put files item as copies at the levels of copies (1–3), in class k, for
// the instant at (the end of the segment; its UTC day picks the day key).
// A copy whose day its chain has already forgotten is not kept. It returns
// the levels kept.
func (s *Store) Put(ctx context.Context, item []byte, at time.Time, k Class, copies map[int][]byte) ([]int, error) {
	if !k.valid() {
		return nil, fmt.Errorf("%w: class %d", ErrBadCopy, k)
	}
	if len(item) == 0 || len(item) > 64 {
		return nil, fmt.Errorf("%w: item of %d bytes", ErrBadCopy, len(item))
	}
	for r, p := range copies {
		if r < 1 || r > 3 {
			return nil, fmt.Errorf("%w: level %d (copies are at 1, 2, 3)", ErrBadCopy, r)
		}
		if len(p) > MaxPlain {
			return nil, fmt.Errorf("%w: %d bytes over %d", ErrBadCopy, len(p), MaxPlain)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	today := DayOf(s.clock.Now())
	day := DayOf(at)
	if day > today+maxAhead {
		return nil, fmt.Errorf("%w: day %d is after today %d", ErrBadCopy, day, today)
	}
	var kept []int
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for r := 1; r <= 3; r++ {
		p, ok := copies[r]
		if !ok {
			continue
		}
		c := chain{r, k}
		if day <= cutoff(c, today) {
			continue
		}
		ls, err := s.chainSeed(c, today)
		if err != nil {
			return nil, err
		}
		if day < ls.day {
			continue
		}
		key, err := dayKey(c, ls.at(day))
		if err != nil {
			return nil, err
		}
		a, err := aead(key)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, a.NonceSize())
		if _, err := io.ReadFull(s.entropy, nonce); err != nil {
			return nil, fmt.Errorf("meetstore: nonce: %w", err)
		}
		ck := copyKey(c, day, item)
		v := a.Seal(nonce, nonce, p, ck)
		if err := wb.Set(ck, v); err != nil {
			return nil, err
		}
		kept = append(kept, r)
	}
	if err := wb.Flush(); err != nil {
		return nil, fmt.Errorf("meetstore: put: %w", err)
	}
	return kept, nil
}

// chainSeed returns chain c's live seed, creating the chain (a fresh seed
// for its first live day) if it has none. Called with s.mu held.
func (s *Store) chainSeed(c chain, today int64) (liveSeed, error) {
	if ls, ok := s.seeds[c]; ok {
		return ls, nil
	}
	ls := liveSeed{day: cutoff(c, today) + 1}
	if _, err := io.ReadFull(s.entropy, ls.seed[:]); err != nil {
		return ls, fmt.Errorf("meetstore: seed: %w", err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(seedKey(c, ls.day), ls.seed[:])
	}); err != nil {
		return ls, fmt.Errorf("meetstore: new chain: %w", err)
	}
	s.seeds[c] = ls
	return ls, nil
}

// Copy is one copy read back.
type Copy struct {
	Item  []byte
	Level int
	Class Class
	Day   int64 // the UTC day of the instant it was filed for
	Plain []byte
}

// Scan calls fn for every live copy whose item begins with prefix, in key
// order (chain, then day, then item). Copies of forgotten days are
// skipped, whether or not Forget has run yet.
func (s *Store) Scan(ctx context.Context, prefix []byte, fn func(Copy) error) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	today := DayOf(s.clock.Now())
	seeds := make(map[chain]liveSeed, len(s.seeds))
	for c, ls := range s.seeds {
		seeds[c] = ls
	}
	s.mu.Unlock()
	var found []Copy
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{copyPrefix}, PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := it.Item().Key()
			if len(k) < 11 || !bytes.HasPrefix(k[10:], prefix) {
				continue
			}
			c := chain{r: int(k[1] >> 4), k: Class(k[1] & 0xf)}
			day := int64(binary.BigEndian.Uint64(k[2:10])) - dayOffset
			ls, ok := seeds[c]
			if !ok || day < ls.day || day <= cutoff(c, today) {
				continue
			}
			key, err := dayKey(c, ls.at(day))
			if err != nil {
				return err
			}
			a, err := aead(key)
			if err != nil {
				return err
			}
			var plain []byte
			if err := it.Item().Value(func(v []byte) error {
				if len(v) < a.NonceSize() {
					return fmt.Errorf("%w: %d bytes", ErrBadCopy, len(v))
				}
				var err error
				plain, err = a.Open(nil, v[:a.NonceSize()], v[a.NonceSize():], k)
				if err != nil {
					return fmt.Errorf("%w: %v", ErrBadCopy, err)
				}
				return nil
			}); err != nil {
				return err
			}
			found = append(found, Copy{Item: bytes.Clone(k[10:]), Level: c.r, Class: c.k, Day: day, Plain: plain})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, cp := range found {
		if err := fn(cp); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the live copy of item at level r, or ErrNotFound.
func (s *Store) Get(ctx context.Context, item []byte, r int) (Copy, error) {
	var out *Copy
	err := s.Scan(ctx, item, func(c Copy) error {
		if c.Level == r && bytes.Equal(c.Item, item) {
			out = &c
		}
		return nil
	})
	if err != nil {
		return Copy{}, err
	}
	if out == nil {
		return Copy{}, ErrNotFound
	}
	return *out, nil
}

func (s *Store) step(name string) {
	if s.after != nil {
		s.after(name)
	}
}

// Forget destroys, in each chain, the seeds of every day ≤ D′ − keep, where
// D′ is the clock's UTC day, together with the copies of those days, and
// checks that no destroyed seed is left in the store's files. It is
// idempotent and safe to run at any time; a crash in it is finished by the
// next Forget (Open runs one).
func (s *Store) Forget(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.step("begin")
	today := DayOf(s.clock.Now())
	// Step 1: advance every chain whose live day is forgotten, in one
	// synced transaction.
	var destroyed [][32]byte
	next := map[chain]liveSeed{}
	for c, ls := range s.seeds {
		cut := cutoff(c, today)
		if ls.day > cut {
			continue
		}
		nls := liveSeed{day: cut + 1, seed: ls.at(cut + 1)}
		// Only the live seed was ever written; the days between it and the
		// cut were derived from it and exist nowhere.
		destroyed = append(destroyed, ls.seed)
		next[c] = nls
	}
	if len(next) > 0 {
		if err := s.db.Update(func(txn *badger.Txn) error {
			for c, ls := range next {
				if err := txn.Set(seedKey(c, ls.day), ls.seed[:]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("meetstore: forget: %w", err)
		}
		for c, ls := range next {
			s.seeds[c] = ls
		}
	}
	s.step("advanced")
	// Step 2: drop the old seed keys (this run's and any a crash left) and
	// the copies of forgotten days.
	var drop [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		for _, pre := range []byte{seedPrefix, copyPrefix} {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{pre}, PrefetchValues: false})
			for it.Rewind(); it.Valid(); it.Next() {
				k := it.Item().Key()
				if len(k) < 10 {
					continue
				}
				c := chain{r: int(k[1] >> 4), k: Class(k[1] & 0xf)}
				day := int64(binary.BigEndian.Uint64(k[2:10])) - dayOffset
				ls, ok := s.seeds[c]
				stale := day <= cutoff(c, today) || (ok && day < ls.day)
				if pre == seedPrefix && stale && ok && day != ls.day {
					if err := it.Item().Value(func(v []byte) error {
						var sd [32]byte
						copy(sd[:], v)
						destroyed = append(destroyed, sd)
						return nil
					}); err != nil {
						it.Close()
						return err
					}
				}
				if stale && (pre == copyPrefix || day != ls.day) {
					p := bytes.Clone(k[:10])
					if len(drop) == 0 || !bytes.Equal(drop[len(drop)-1], p) {
						drop = append(drop, p)
					}
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("meetstore: forget: %w", err)
	}
	if len(drop) == 0 {
		s.step("done")
		return nil
	}
	if err := s.db.DropPrefix(drop...); err != nil {
		return fmt.Errorf("meetstore: forget: drop: %w", err)
	}
	s.step("dropped")
	// Step 3: check the files.
	for attempt := 0; ; attempt++ {
		left, err := s.residue(destroyed)
		if err != nil {
			return err
		}
		if !left {
			break
		}
		if attempt == 2 {
			return ErrResidue
		}
		if err := s.db.Flatten(1); err != nil {
			return fmt.Errorf("meetstore: forget: flatten: %w", err)
		}
		if err := s.db.DropPrefix(drop...); err != nil {
			return fmt.Errorf("meetstore: forget: drop: %w", err)
		}
	}
	s.step("done")
	return nil
}

// residue reports whether any of seeds occurs in any file of the store's
// directory.
func (s *Store) residue(seeds [][32]byte) (bool, error) {
	if len(seeds) == 0 {
		return false, nil
	}
	found := false
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || found {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, sd := range seeds {
			if bytes.Contains(b, sd[:]) {
				found = true
				return nil
			}
		}
		return nil
	})
	return found, err
}
