package meetstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestCrashChild is the child of TestKillDuringForgetting: it opens the
// store with the clock past a midnight, so Open forgets, and kills itself
// with SIGKILL after the named step (or is killed by its parent).
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("MEETSTORE_CRASH_DIR")
	if dir == "" {
		t.Skip("only run as the child of TestKillDuringForgetting")
	}
	at := os.Getenv("MEETSTORE_CRASH_AT")
	c := &clock{t: utc(os.Getenv("MEETSTORE_CRASH_NOW"))}
	opts := WithAfterStep(Options{Clock: c}, func(step string) {
		if step == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	})
	s, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// No named step: forget day after day until the parent kills us, for
	// at most 20 days (the level-2 copies the parent checks keep 30).
	for i := 0; ; i++ {
		if i < 20 {
			c.Set(c.Now().Add(Day))
		}
		if err := s.Forget(context.Background()); err != nil {
			t.Fatal(err)
		}
		put(t, s, "later", c.Now(), ClassKeep, 1, 2, 3)
	}
}

// After the midnight that ends a copy's keep, its key is gone across a
// kill -9 at any point of the forgetting: a child process is killed after
// each step (and, last, at a few arbitrary moments), the store is
// reopened, and its raw files are searched for the destroyed seed.
func TestKillDuringForgetting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, at := range []string{"begin", "advanced", "dropped", "done", "2ms", "5ms", "10ms", "20ms", "40ms", "80ms", "150ms", "300ms"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			c := &clock{t: utc("2026-10-14T09:00:00Z")}
			s := open(t, dir, c)
			for i := 0; i < 30; i++ {
				put(t, s, "rec"+string(rune('a'+i)), c.Now(), ClassKeep, 1, 2, 3)
			}
			seed3, _ := s.seedOf(3, ClassKeep)
			if len(rawContains(t, dir, seed3[:])) == 0 {
				t.Fatal("the seed is in no file: vacuous")
			}
			s.Close()

			// 2026-10-17 00:00 starts D + 3: the level-3 chain forgets 10-14.
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MEETSTORE_CRASH_DIR="+dir, "MEETSTORE_CRASH_AT="+at,
				"MEETSTORE_CRASH_NOW=2026-10-17T00:00:00Z")
			if d, err := time.ParseDuration(at); err == nil {
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(d) // the moment of the kill, not a wait for a condition
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
			} else {
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("child was not killed at %s: %v\n%s", at, err, out)
				}
			}

			c.Set(utc("2026-10-17T00:00:00Z"))
			s = open(t, dir, c)
			defer s.Close()
			if in := rawContains(t, dir, seed3[:]); len(in) != 0 {
				t.Errorf("the destroyed seed survives in %v", in)
			}
			for i := 0; i < 30; i++ {
				item := []byte("rec" + string(rune('a'+i)))
				if _, err := s.Get(context.Background(), item, 3); !errors.Is(err, ErrNotFound) {
					t.Errorf("%s at 3: %v, want forgotten", item, err)
				}
				if cp, err := s.Get(context.Background(), item, 2); err != nil || string(cp.Plain) != string(item)+"@2" {
					t.Errorf("%s at 2: %q %v, want kept", item, cp.Plain, err)
				}
			}
		})
	}
}
