package rules_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// §3: no floating point anywhere in rule evaluation, no wall clock; STYLE.md:
// the pure core imports neither storage nor network and starts no
// goroutine. dag's purity test covers the imports as well; this one adds
// the rules-specific checks on the source.
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

func TestImportsNoStorageOrNetwork(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("only %d deps listed; the check would be vacuous", len(deps))
	}
	for _, d := range deps {
		for _, bad := range []string{"github.com/dgraph-io/", "github.com/libp2p/", "github.com/multiformats/go-multiaddr", "net/http"} {
			if strings.HasPrefix(d, bad) {
				t.Errorf("rules depends on %s", d)
			}
		}
	}
}
