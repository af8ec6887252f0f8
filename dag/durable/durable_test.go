package durable_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/witan-dev/witan/dag/crashtest"
	"github.com/witan-dev/witan/dag/durable"
)

// leftovers lists the names in dir other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		keep := false
		for _, w := range want {
			keep = keep || e.Name() == w
		}
		if !keep {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := durable.WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := durable.WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("after two writes: %q, %v; want \"two\"", b, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %o, want 644", st.Mode().Perm())
	}
	if extra := leftovers(t, dir, "state.json"); len(extra) > 0 {
		t.Errorf("temporary files left: %v", extra)
	}
}

func TestCreateFileRefusesAnExistingFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node.key")
	if err := durable.CreateFile(p, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", st.Mode().Perm())
	}
	err := durable.CreateFile(p, []byte("second"), 0o600)
	if !errors.Is(err, os.ErrExist) {
		t.Fatalf("second CreateFile: %v, want an error wrapping os.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Errorf("the existing file now holds %q; want \"first\"", b)
	}
	if extra := leftovers(t, dir, "node.key"); len(extra) > 0 {
		t.Errorf("temporary files left: %v", extra)
	}
}

func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "a", "b", "c")
	if err := durable.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", d, st, err)
	}
	if err := durable.MkdirAll(d, 0o700); err != nil {
		t.Errorf("MkdirAll of an existing directory: %v", err)
	}
	f := filepath.Join(root, "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := durable.MkdirAll(filepath.Join(f, "x"), 0o700); err == nil {
		t.Error("MkdirAll under a file succeeded")
	}
	if err := durable.MkdirAll(f, 0o700); err == nil {
		t.Error("MkdirAll of a file succeeded")
	}
}

// TestPowerCut: on a LazyFS disk, a file written by WriteFile or
// CreateFile and then cut at once is on the disk whole; a file rewritten
// in a loop and cut at a random moment holds one of the versions written,
// whole, never an empty or partial one.
func TestPowerCut(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a LazyFS disk and cuts its power; skipped with -short")
	}
	rng := crashtest.Rand(t, "WITAN_POWERLOSS_SEED", 3)
	d := crashtest.Mount(t)
	dir := filepath.Join(d.Mnt, "data", "keys")
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := durable.CreateFile(filepath.Join(dir, "node.key"), []byte("the node key"), 0o600); err != nil {
		t.Fatal(err)
	}
	version := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("version %06d;", i)), 500) }
	state := filepath.Join(d.Mnt, "state")
	stop := make(chan struct{})
	done := make(chan int)
	first := make(chan struct{}) // closed once a write has returned
	go func() {
		i := 0
		for {
			select {
			case <-stop:
				done <- i
				return
			default:
			}
			if durable.WriteFile(state, version(i), 0o600) != nil {
				done <- i
				return
			}
			if i == 0 {
				close(first)
			}
			i++
		}
	}()
	// The moment is drawn from the first write's return on, not from the
	// start: a loaded machine's first write (a file, its fsync and the
	// directory's through FUSE) can outlast any fixed pause.
	select {
	case <-first:
	case <-time.After(time.Minute):
		t.Fatal("no write of the state file returned in a minute")
	}
	time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
	if err := d.PowerCut(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	n := <-done
	if b, err := os.ReadFile(filepath.Join(d.Root, "data", "keys", "node.key")); err != nil || string(b) != "the node key" {
		t.Errorf("node.key after the cut: %q, %v", b, err)
	}
	b, err := os.ReadFile(filepath.Join(d.Root, "state"))
	if n == 0 {
		t.Fatalf("no write of the state file returned before the cut")
	}
	var v int
	if err != nil || len(b) == 0 || scan(b, &v) != nil {
		t.Fatalf("state after the cut, %d writes returned: %d bytes, %v", n, len(b), err)
	}
	if !bytes.Equal(b, version(v)) || v < n-1 || v > n {
		t.Errorf("state after the cut holds version %d (%d bytes, whole: %v); %d writes had returned", v, len(b), bytes.Equal(b, version(v)), n)
	}
	t.Logf("%d writes returned before the cut; the disk holds version %d", n, v)
}

func scan(b []byte, v *int) error {
	_, err := fmt.Sscanf(string(b), "version %06d;", v)
	return err
}
