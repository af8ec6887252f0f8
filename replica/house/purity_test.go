package house_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPure: the house imports neither storage nor networking, reads no
// clock, starts no goroutine and uses no floats (STYLE.md habit 1).
func TestPure(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/witan-dev/witan/replica/house").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list printed %d packages; the check would be vacuous", len(deps))
	}
	for _, d := range deps {
		for _, f := range []string{"github.com/dgraph-io/badger", "github.com/libp2p/", "net/http", "os/exec"} {
			if strings.HasPrefix(d, f) {
				t.Errorf("replica/house depends on %s", d)
			}
		}
	}
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
