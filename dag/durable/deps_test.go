package durable_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNeitherBadgerNorLibp2p: the helper sits beside the store and
// the network, under both; it must depend on neither.
func TestImportsNeitherBadgerNorLibp2p(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/witan-dev/witan/dag/durable").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps printed %d packages; the check would be vacuous", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/dgraph-io/") || strings.HasPrefix(d, "github.com/libp2p/") {
			t.Errorf("dag/durable depends on %s", d)
		}
	}
}
