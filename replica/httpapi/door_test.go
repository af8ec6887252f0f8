package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// httpapi is a door: it translates HTTP to calls on a *node.Node and back.
// The write path (the store, sync, the memory spaces) lives in the node,
// so httpapi imports no store or network package itself, and reaches sync
// only through the node (docs/architecture.md, "The node").
func TestDoorImportsNoWritePath(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/witan-dev/witan/replica/httpapi").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	if !contains(imports, "github.com/witan-dev/witan/replica/node") {
		t.Fatalf("httpapi does not import replica/node (imports %v): the check would be vacuous", imports)
	}
	forbidden := []string{
		"github.com/witan-dev/witan/dag/badgerstore",
		"github.com/witan-dev/witan/dag/dagtest",
		"github.com/witan-dev/witan/sync",
		"github.com/dgraph-io/badger",
		"github.com/libp2p/",
	}
	for _, imp := range imports {
		for _, f := range forbidden {
			if strings.HasPrefix(imp, f) {
				t.Errorf("httpapi imports %s: the write path belongs to replica/node", imp)
			}
		}
	}
}

// writeMethods are the methods that change a node's state. httpapi may
// call them on the node (s.n) only, never on the replica or a store it
// reached some other way, or subscribers (sync) would not hear of it.
var writeMethods = map[string]bool{
	"Submit": true, "Ingest": true, "Put": true, "PutBlock": true, "Checkpoint": true,
}

func TestDoorWritesOnlyThroughTheNode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !writeMethods[sel.Sel.Name] {
				return true
			}
			if recv, ok := sel.X.(*ast.SelectorExpr); ok && recv.Sel.Name == "n" {
				if id, ok := recv.X.(*ast.Ident); ok && id.Name == "s" {
					calls++
					return true
				}
			}
			t.Errorf("%s: %s is called on something other than the node (s.n)", fset.Position(call.Pos()), sel.Sel.Name)
			return true
		})
	}
	if calls == 0 {
		t.Fatal("httpapi calls no write method on its node: the check would be vacuous (or the parser missed them)")
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
