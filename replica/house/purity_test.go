package house_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPure: the house reads no clock, starts no goroutine and uses no
// floats (docs/architecture.md, "Packages"). That it imports neither storage nor networking
// is checked for every pure package by dag's TestPurePackagesImportNoStorageOrNetwork.
func TestPure(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	bad := regexp.MustCompile(`time\.(Now|Since|Until|After|Tick|NewTimer|NewTicker)\b|\bgo func\b|\bfloat(32|64)\b`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if bad.MatchString(line) {
				t.Errorf("%s:%d: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	if n == 0 {
		t.Fatal("no source files checked")
	}
}
