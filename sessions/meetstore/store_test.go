package meetstore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// clock is an injected clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func open(t *testing.T, dir string, c *clock) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir, Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeepAndClasses(t *testing.T) {
	// keep(r, k) = min((3, 30, 365) d for r = 3, 2, 1, days(k)), worked by
	// hand from §7.8.
	want := map[int]map[Class]int64{
		3: {Class1d: 1, Class7d: 3, Class30d: 3, ClassKeep: 3},
		2: {Class1d: 1, Class7d: 7, Class30d: 30, ClassKeep: 30},
		1: {Class1d: 1, Class7d: 7, Class30d: 30, ClassKeep: 365},
	}
	for r, byClass := range want {
		for k, d := range byClass {
			if got := Keep(r, k); got != d {
				t.Errorf("keep(%d, %s) = %d, want %d", r, k, got, d)
			}
		}
	}
	if Keep(4, ClassKeep) != 0 || Keep(0, Class1d) != 0 {
		t.Errorf("levels outside 1-3 have copies")
	}
	// Limits round down to a class, never up (D3).
	classes := []struct {
		limit time.Duration
		k     Class
		ok    bool
	}{
		{12 * time.Hour, 0, false}, {Day - 1, 0, false}, {Day, Class1d, true}, {6 * Day, Class1d, true},
		{7 * Day, Class7d, true}, {29 * Day, Class7d, true}, {30 * Day, Class30d, true},
		{364 * Day, Class30d, true}, {Forever, ClassKeep, true},
	}
	for _, c := range classes {
		if k, ok := ClassFor(c.limit); k != c.k || ok != c.ok {
			t.Errorf("ClassFor(%v) = %v %v, want %v %v", c.limit, k, ok, c.k, c.ok)
		}
	}
	if DayOf(utc("1970-01-01T23:59:59Z")) != 0 || DayOf(utc("1969-12-31T23:59:59Z")) != -1 ||
		DayOf(utc("2026-10-14T00:00:00Z")) != 20740 {
		t.Errorf("DayOf")
	}
}

func levels(t *testing.T, s *Store, item string) []int {
	t.Helper()
	var ls []int
	if err := s.Scan(context.Background(), []byte(item), func(c Copy) error {
		if string(c.Plain) != item+"@"+string(rune('0'+c.Level)) {
			t.Errorf("copy %s at %d reads %q", item, c.Level, c.Plain)
		}
		ls = append(ls, c.Level)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ls
}

func put(t *testing.T, s *Store, item string, at time.Time, k Class, rs ...int) []int {
	t.Helper()
	cs := map[int][]byte{}
	for _, r := range rs {
		cs[r] = []byte(item + "@" + string(rune('0'+r)))
	}
	kept, err := s.Put(context.Background(), []byte(item), at, k, cs)
	if err != nil {
		t.Fatal(err)
	}
	return kept
}

func same(a, b []int) bool { return slices.Equal(a, b) }

// A copy's lifetime lies in (keep − 1 d, keep]: filed on day D, it is gone
// at the midnight that starts D + keep, whether or not Forget has run, and
// after Forget its seed is gone too.
func TestLifetimeByMidnights(t *testing.T) {
	c := &clock{t: utc("2026-10-14T00:00:04Z")}
	s := open(t, t.TempDir(), c)
	defer s.Close()
	put(t, s, "early", utc("2026-10-14T00:00:04Z"), ClassKeep, 1, 2, 3)
	put(t, s, "late", utc("2026-10-14T23:59:59Z"), ClassKeep, 1, 2, 3)
	put(t, s, "week", utc("2026-10-14T12:00:00Z"), Class7d, 1, 2, 3)
	steps := []struct {
		at                string
		early, late, week []int
	}{
		{"2026-10-14T23:59:59Z", []int{1, 2, 3}, []int{1, 2, 3}, []int{1, 2, 3}},
		{"2026-10-16T23:59:59.999Z", []int{1, 2, 3}, []int{1, 2, 3}, []int{1, 2, 3}},
		// 2026-10-17 00:00 starts D + 3: the level-3 copies go, 3 d − 4 s
		// and 2 d + 1 s after they were filed.
		{"2026-10-17T00:00:00Z", []int{1, 2}, []int{1, 2}, []int{1, 2}},
		{"2026-10-20T23:59:59Z", []int{1, 2}, []int{1, 2}, []int{1, 2}},
		// D + 7: the week's copies go.
		{"2026-10-21T00:00:00Z", []int{1, 2}, []int{1, 2}, nil},
		{"2026-11-12T23:59:59Z", []int{1, 2}, []int{1, 2}, nil},
		// D + 30 = 2026-11-13.
		{"2026-11-13T00:00:00Z", []int{1}, []int{1}, nil},
		{"2027-10-13T23:59:59Z", []int{1}, []int{1}, nil},
		// D + 365 = 2027-10-14.
		{"2027-10-14T00:00:00Z", nil, nil, nil},
	}
	for _, st := range steps {
		c.Set(utc(st.at))
		for pass := 0; pass < 2; pass++ { // before and after Forget
			for _, w := range []struct {
				item string
				want []int
			}{{"early", st.early}, {"late", st.late}, {"week", st.week}} {
				if got := levels(t, s, w.item); !same(got, w.want) {
					t.Errorf("at %s (forgot=%v) %s has copies %v, want %v", st.at, pass == 1, w.item, got, w.want)
				}
			}
			if err := s.Forget(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A copy for a day its chain has forgotten is not kept.
	if kept := put(t, s, "stale", utc("2027-10-10T12:00:00Z"), ClassKeep, 1, 2, 3); !same(kept, []int{1, 2}) {
		t.Errorf("filing 4 days late kept %v, want [1 2] (level 3 keeps 3 days)", kept)
	}
}

func TestPutRefusesBadInput(t *testing.T) {
	c := &clock{t: utc("2026-10-14T10:00:00Z")}
	s := open(t, t.TempDir(), c)
	defer s.Close()
	ctx := context.Background()
	at := c.Now()
	for name, f := range map[string]func() error{
		"level 4": func() error {
			_, err := s.Put(ctx, []byte("x"), at, ClassKeep, map[int][]byte{4: []byte("q")})
			return err
		},
		"level 0": func() error {
			_, err := s.Put(ctx, []byte("x"), at, ClassKeep, map[int][]byte{0: []byte("q")})
			return err
		},
		"class 0": func() error { _, err := s.Put(ctx, []byte("x"), at, 0, map[int][]byte{1: []byte("q")}); return err },
		"too big": func() error {
			_, err := s.Put(ctx, []byte("x"), at, ClassKeep, map[int][]byte{1: make([]byte, MaxPlain+1)})
			return err
		},
		"no item": func() error { _, err := s.Put(ctx, nil, at, ClassKeep, map[int][]byte{1: []byte("q")}); return err },
		"future": func() error {
			_, err := s.Put(ctx, []byte("x"), at.Add(3*Day), ClassKeep, map[int][]byte{1: []byte("q")})
			return err
		},
	} {
		if err := f(); !errors.Is(err, ErrBadCopy) {
			t.Errorf("%s: %v, want ErrBadCopy", name, err)
		}
	}
	if got := levels(t, s, "x"); len(got) != 0 {
		t.Errorf("refused puts left copies %v", got)
	}
}

// rawContains reports whether any file under dir holds b.
func rawContains(t *testing.T, dir string, b []byte) []string {
	t.Helper()
	// An open store's background work (Badger flushing a memtable and
	// removing its file) can remove a file between the listing and the
	// read; what it held went to a file the walk may or may not have
	// listed, so the walk starts again.
	for try := 0; ; try++ {
		in, vanished, err := rawWalk(dir, b)
		if err != nil {
			t.Fatal(err)
		}
		if !vanished {
			return in
		}
		if try == 10 {
			t.Fatalf("files kept vanishing while %s was read", dir)
		}
	}
}

// rawWalk returns the names of the files under dir that hold b, and
// whether a file listed was gone when it was read.
func rawWalk(dir string, b []byte) (in []string, vanished bool, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			vanished = true
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			vanished = true
			return nil
		}
		if err != nil {
			return err
		}
		if bytes.Contains(data, b) {
			in = append(in, filepath.Base(path))
		}
		return nil
	})
	return in, vanished, err
}

func rawFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, filepath.Ext(path))
		}
		return nil
	})
	return names
}

// After forgetting, nothing in the store's files can decrypt a forgotten
// copy: neither the plaintext (never written) nor the seed of its chain
// (destroyed), in any file: tables, value log, memtable WAL, manifest.
func TestRawFilesHoldNoForgottenKey(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: utc("2026-10-14T09:00:00Z")}
	s := open(t, dir, c)
	plain := "the vendor is late again, says the record at three"
	// Many puts and several forgets, so that seeds and copies move through
	// memtables, WAL files and tables of several levels.
	for i := 0; i < 40; i++ {
		at := c.Now()
		if _, err := s.Put(context.Background(), []byte{'m', byte(i)}, at, ClassKeep,
			map[int][]byte{3: []byte(plain), 2: []byte(plain + " (gist)"), 1: []byte("outcome " + plain)}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			c.Set(c.Now().Add(Day))
			if err := s.Forget(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Set(utc("2026-10-19T09:00:00Z"))
	seed3, ok := s.seedOf(3, ClassKeep)
	if !ok {
		t.Fatal("no level-3 chain")
	}
	// The test can see what it looks for: the live seed is in the files.
	if in := rawContains(t, dir, seed3[:]); len(in) == 0 {
		t.Fatalf("the live seed is in no file of %v: the raw check would be vacuous", rawFiles(t, dir))
	}
	if in := rawContains(t, dir, []byte("vendor is late")); len(in) != 0 {
		t.Errorf("plaintext in %v before forgetting", in)
	}
	// A level-3 copy as it lies in the store, to try every candidate key
	// on after forgetting.
	ck, cv, err := s.rawCopy([]byte{'m', 35}, 3, ClassKeep, DayOf(utc("2026-10-17T09:00:00Z")))
	if err != nil {
		t.Fatal(err)
	}
	if !opens(3, ClassKeep, seed3[:], ck, cv) {
		t.Fatal("the live seed does not open its own copy: the key search would be vacuous")
	}
	if keyIn(t, dir, ck, cv) == "" {
		t.Fatal("the key search finds no key before forgetting: it would be vacuous")
	}
	// Every level-3 copy filed so far was for days ≤ 2026-10-18; at
	// 2026-10-22 00:00 (D′ − 3 = 10-19) the chain forgets them all.
	c.Set(utc("2026-10-22T00:00:00Z"))
	if err := s.Forget(context.Background()); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		if in := rawContains(t, dir, seed3[:]); len(in) != 0 {
			t.Errorf("%s: the destroyed seed is still in %v", when, in)
		}
		if in := rawContains(t, dir, []byte("vendor is late")); len(in) != 0 {
			t.Errorf("%s: plaintext in %v", when, in)
		}
	}
	check("after forgetting")
	// No 32 bytes anywhere in the store's files, taken as a seed (of that
	// day or up to three days before) or as a day key, open the copy.
	if at := keyIn(t, dir, ck, cv); at != "" {
		t.Errorf("%s holds a key that opens a forgotten copy", at)
	}
	for i := 0; i < 40; i++ {
		if _, err := s.Get(context.Background(), []byte{'m', byte(i)}, 3); !errors.Is(err, ErrNotFound) {
			t.Errorf("copy %d at 3: %v, want not found", i, err)
		}
	}
	if got := levels0(t, s, "m"); got[2] != 40 || got[1] != 40 || got[3] != 0 {
		t.Errorf("copies by level %v, want 40 at 1 and 2, none at 3", got)
	}
	s.Close()
	check("after close")
	s = open(t, dir, c)
	check("after reopen")
	s.Close()
}

func levels0(t *testing.T, s *Store, prefix string) map[int]int {
	n := map[int]int{}
	if err := s.Scan(context.Background(), []byte(prefix), func(c Copy) error { n[c.Level]++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// keyIn returns where in dir's files 32 bytes open the level-3 copy (key
// ck, value cv) as a seed or a day key, or "".
func keyIn(t *testing.T, dir string, ck, cv []byte) string {
	t.Helper()
	found := ""
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i := 0; i+32 <= len(data); i++ {
			w := data[i : i+32]
			if w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0 {
				continue // preallocated zeros of WAL and value log files
			}
			if opens(3, ClassKeep, w, ck, cv) {
				found = filepath.Base(path) + " at " + strconv.Itoa(i)
				return nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
