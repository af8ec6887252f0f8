package dag_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// purePackages are the packages that must import neither Badger nor libp2p
// (docs/architecture.md, "Packages"). The root package dag is the
// pure codec half of dag; its storage lives in sub-packages.
var purePackages = []string{
	"github.com/witan-dev/witan/dag",
	"github.com/witan-dev/witan/dag/internal/edwards4",
	"github.com/witan-dev/witan/dag/internal/msm",
	"github.com/witan-dev/witan/dag/internal/sha8",
	"github.com/witan-dev/witan/rules",
	"github.com/witan-dev/witan/sessions",
	"github.com/witan-dev/witan/memoryblock",
	"github.com/witan-dev/witan/replica/statute",
	"github.com/witan-dev/witan/replica/house",
	"github.com/witan-dev/witan/replica/mlog",
	"github.com/witan-dev/witan/replica/opinion",
	"github.com/witan-dev/witan/replica/checkpoint",
}

// forbiddenImports: storage, networking and process control belong to the
// shell (replica, sync, cmd), never to a pure package.
var forbiddenImports = []string{
	"github.com/dgraph-io/badger",
	"github.com/libp2p/",
	"github.com/multiformats/go-multiaddr",
	"net/http",
	"os/exec",
	"database/sql",
}

func TestPurePackagesImportNoStorageOrNetwork(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	for _, pkg := range purePackages {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 2 {
				t.Fatalf("go list -deps %s printed %d packages; the check would be vacuous", pkg, len(deps))
			}
			for _, d := range deps {
				for _, f := range forbiddenImports {
					if strings.HasPrefix(d, f) {
						t.Errorf("%s depends on %s", pkg, d)
					}
				}
			}
		})
	}
}

// TestPurePackagesReadNoClock: evaluators take time as an input. A call of
// time.Now, time.Since, time.Until or a timer in a pure package's non-test
// code is a bug.
func TestPurePackagesReadNoClock(t *testing.T) {
	clock := regexp.MustCompile(`\btime\.(Now|Since|Until|After|AfterFunc|NewTimer|NewTicker|Tick|Sleep)\(`)
	goroutine := regexp.MustCompile(`(?m)^\s*go\s+(func\b|[A-Za-z_][\w.]*\()`)
	checked := 0
	for _, pkg := range purePackages {
		dir := filepath.Join("..", strings.TrimPrefix(pkg, "github.com/witan-dev/witan/"))
		if pkg == "github.com/witan-dev/witan/dag" {
			dir = "."
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if m := clock.Find(b); m != nil {
				t.Errorf("%s reads the clock: %s", f, m)
			}
			if m := goroutine.Find(b); m != nil {
				t.Errorf("%s starts a goroutine: %s", f, m)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
