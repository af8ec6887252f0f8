// Package crashtest is the harness the crash tests share (dag/badgerstore's
// and replica's): a test binary re-runs itself as a child process that
// writes and acknowledges, the parent SIGKILLs it at a moment drawn from a
// seeded generator, reopens what the child wrote and checks that nothing
// acknowledged was lost.
//
// The seed comes from an environment variable when set (to replay a
// failure), else from the clock; it is logged at the start, and again at
// the end of a failing test, with the variable to set. Only tests import
// this package.
package crashtest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Rand returns the generator of the test's kill timings: seeded from the
// environment variable env when it is set, else from the clock, and logged
// so that a failing run can be replayed with env=<seed>. stream separates
// the generators of tests that share one variable.
func Rand(t testing.TB, env string, stream uint64) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(env); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", env, v, err)
		}
	}
	t.Logf("kill timings from %s=%d", env, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay this run's kill timings with %s=%d", env, seed)
		}
	})
	return rand.New(rand.NewPCG(seed, stream))
}

// Count returns the number in the environment variable env, or def when it
// is not set; a malformed value fails the test.
func Count(t testing.TB, env string, def int) int {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", env, v)
	}
	return n
}

// Start starts this test binary running only the test named, with env
// added to this process's environment, and returns it with its standard
// output (its standard error is this process's).
func Start(t testing.TB, test string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// Kill sends SIGKILL to the child: no deferred function, no flush, no
// Close runs in it.
func Kill(cmd *exec.Cmd) { cmd.Process.Signal(syscall.SIGKILL) }

// WaitKilled waits for the child and reports an error unless SIGKILL ended
// it (it exited by itself, so the kill proved nothing).
func WaitKilled(cmd *exec.Cmd) error {
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		return fmt.Errorf("crashtest: the child was not killed: %v", err)
	}
	return nil
}
