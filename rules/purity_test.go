package rules_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// §3: no floating point anywhere in rule evaluation, no wall clock; docs/architecture.md:
// the pure core imports neither storage nor network and starts no
// goroutine. dag's purity test checks the imports of every pure package
// (TestPurePackagesImportNoStorageOrNetwork); this one adds the
// rules-specific checks on the source.
func TestPureSource(t *testing.T) {
	forbidden := map[string]*regexp.Regexp{
		"floating point": regexp.MustCompile(`\bfloat(32|64)\b|\bParseFloat\b|\bmath\.(Inf|NaN|Floor|Ceil|Round)\b|\bbig\.(Float|Rat)\b`),
		"the clock":      regexp.MustCompile(`\btime\.(Now|Since|Until|After|AfterFunc|NewTimer|NewTicker|Tick|Sleep)\(`),
		"goroutines":     regexp.MustCompile(`(?m)^\s*go\s+(func\b|[A-Za-z_][\w.]*\()`),
		"randomness":     regexp.MustCompile(`"math/rand|"crypto/rand"`),
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for what, re := range forbidden {
			if m := re.Find(b); m != nil {
				t.Errorf("%s uses %s: %s", f, what, m)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d files", checked)
	}
}
