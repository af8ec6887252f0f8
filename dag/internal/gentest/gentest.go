// Package gentest checks, in a package's tests, that a committed file
// written by a generator (a `go generate` program such as the assembly
// kernels' gen.go) is exactly what the generator writes now: nobody
// edited the output by hand, and nobody changed the generator without
// running it.
package gentest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Check runs `go run generator OUT` in the test's package directory and
// fails t unless OUT equals the committed file. It builds and runs a
// program, so it is skipped with -short (scripts/test.sh runs it without).
func Check(t *testing.T, generator, committed string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs " + generator + "; scripts/test.sh runs it without -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(committed))
	cmd := exec.Command(goBin, "run", generator, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run %s: %v\n%s", generator, err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		wd, _ := os.Getwd()
		t.Fatalf("%s differs from %s's output (%d bytes against %d): run go generate in %s", committed, generator, len(want), len(got), wd)
	}
}
