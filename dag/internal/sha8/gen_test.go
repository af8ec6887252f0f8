package sha8

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed kernels are exactly what gen.go writes: nobody edited the
// assembly by hand, and nobody changed the generator without running it.
func TestGeneratedAssembly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs gen.go; scripts/test.sh runs it without -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	out := filepath.Join(t.TempDir(), "sha8_amd64.s")
	cmd := exec.Command(goBin, "run", "gen.go", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen.go: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("sha8_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Fatalf("sha8_amd64.s differs from gen.go's output (%d bytes against %d): run go generate in dag/internal/sha8", len(committed), len(got))
	}
}
