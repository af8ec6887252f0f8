package main

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// goListDeps returns the packages pkgs depend on (themselves included),
// failing if there are too few for the check to mean anything.
func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %v printed %d packages; the check would be vacuous", pkgs, len(deps))
	}
	return deps
}

// Production code and the examples never link a test helper: not the
// testing package, not rapid, not any of witan's …test packages
// (housetest, dagtest, synctest, storetest). They build envelopes with
// replica/author.
//
// One exception: go-libp2p-kad-dht (witan's DHT, sync/discovery.go)
// imports testing in its own non-test code, for options only its tests
// call; testing is allowed when that package is the only one importing it.
func TestNoTestPackagesLinked(t *testing.T) {
	for _, pkg := range []string{".", "../../examples/..."} {
		viaDHT := testingOnlyVia(t, pkg, "github.com/libp2p/go-libp2p-kad-dht")
		for _, d := range goListDeps(t, pkg) {
			if d == "testing" && viaDHT {
				continue
			}
			if d == "testing" || strings.HasPrefix(d, "testing/") || strings.HasPrefix(d, "pgregory.net/rapid") ||
				strings.HasPrefix(d, "github.com/witan-dev/witan/") && strings.HasSuffix(path.Base(d), "test") {
				t.Errorf("%s links %s", pkg, d)
			}
		}
	}
}

// testingOnlyVia reports whether the packages importing "testing" among
// pkg's dependencies are exactly importer.
func testingOnlyVia(t *testing.T, pkg, importer string) bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	var importers []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && slices.Contains(f[1:], "testing") {
			importers = append(importers, f[0])
		}
	}
	return len(importers) == 1 && importers[0] == importer
}

// examples/embed and examples/agents embed a node through replica/node
// and replica/author only: no HTTP door, no hand-wired sync.
func TestEmbedExamplesUseTheNode(t *testing.T) {
	for _, ex := range []string{"../../examples/embed", "../../examples/agents"} {
		deps := goListDeps(t, ex)
		has := map[string]bool{}
		for _, d := range deps {
			has[d] = true
		}
		if !has["github.com/witan-dev/witan/replica/node"] {
			t.Errorf("%s does not use replica/node", ex)
		}
		if has["github.com/witan-dev/witan/replica/httpapi"] {
			t.Errorf("%s depends on replica/httpapi", ex)
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "../../examples/embed").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/witan-dev/witan/replica/author") {
		t.Errorf("examples/embed does not write with replica/author: imports %s", out)
	}
}
