package node_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/witan-dev/witan"

// goList runs go list with args and returns the packages it prints,
// failing if it prints too few for the check to mean anything.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, out)
	}
	pkgs := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(string(out)))
	if len(pkgs) < 2 {
		t.Fatalf("go list %v printed %d packages; the check would be vacuous", args, len(pkgs))
	}
	return pkgs
}

// The import graph of docs/architecture.md ("The node"): replica and sync
// do not depend on each other; the write core (replica) reads no view
// (replica/view sits above it); the node sits above both; httpapi and cmd
// above the node. No package below the node depends on it or on httpapi.
func TestLayers(t *testing.T) {
	below := map[string][]string{
		module + "/replica": {module + "/sync", module + "/replica/node", module + "/replica/httpapi", module + "/replica/view"},
		module + "/sync":    {module + "/replica", module + "/replica/node", module + "/replica/httpapi"},
	}
	for pkg, forbidden := range below {
		for _, d := range goList(t, "-deps", pkg) {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
	deps := goList(t, "-deps", module+"/replica/node")
	for _, want := range []string{module + "/replica", module + "/sync", module + "/replica/view"} {
		if !contains(deps, want) {
			t.Errorf("replica/node does not depend on %s: the drawing is wrong", want)
		}
	}
	for _, d := range deps {
		if d == module+"/replica/httpapi" || strings.HasPrefix(d, module+"/cmd/") {
			t.Errorf("replica/node depends on %s, which sits above it", d)
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
