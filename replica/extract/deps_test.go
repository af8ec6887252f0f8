package extract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVerifierLinksNoServer: what witan verify-extract links to check a
// file offline (this package and its dependencies, go list -deps) holds
// no HTTP stack, no store and no network: not net/http (client or
// server), not Badger, not libp2p, and none of witan's packages that
// serve or store (the write core, the node, the door, sync). An import of
// any of them here, direct or not, fails it.
func TestVerifierLinksNoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/witan-dev/witan/replica/extract").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !contains(deps, "github.com/witan-dev/witan/replica/checkpoint") {
		t.Fatalf("go list -deps answered %d packages without replica/checkpoint: not the list asked for", len(deps))
	}
	banned := []string{
		"net/http", "github.com/dgraph-io/badger", "github.com/libp2p/",
		"github.com/witan-dev/witan/replica/httpapi", "github.com/witan-dev/witan/replica/node",
		"github.com/witan-dev/witan/sync", "github.com/witan-dev/witan/dag/badgerstore",
	}
	for _, d := range deps {
		for _, b := range banned {
			if b = strings.TrimSuffix(b, "/"); d == b || strings.HasPrefix(d, b+"/") {
				t.Errorf("replica/extract links %s", d)
			}
		}
		if d == "github.com/witan-dev/witan/replica" {
			t.Errorf("replica/extract links the write core (github.com/witan-dev/witan/replica), which opens Badger")
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
