// Package docs holds the test that keeps docs/*.md and README.md honest
// about the code: every function, type, field, endpoint and flag a page
// names in backticks must exist.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// stdOverlap are standard-library package names that docs also use: a
// name qualified by one of them that no witan package of that name
// declares is taken for the standard library's.
var stdOverlap = map[string]bool{"sync": true, "context": true, "time": true, "http": true, "rand": true, "slog": true, "debug": true, "unsafe": true, "json": true, "errors": true}

// code is what the tree declares: exported top-level names per package
// name, and methods and fields per type name (over every package, tests
// included, so that a doc may name a test helper package's function).
type code struct {
	pkgs    map[string]map[string]bool
	members map[string]map[string]bool
}

// has reports whether package pkg declares name at top level, or as a
// method of one of its types (docs write "replica.Submit" for the
// replica's Submit).
func (c code) has(pkg, name string) bool {
	return c.pkgs[pkg][name] || c.pkgs[pkg]["."+name]
}

func readCode(t *testing.T, root string) code {
	c := code{pkgs: map[string]map[string]bool{}, members: map[string]map[string]bool{}}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if c.pkgs[pkg] == nil {
			c.pkgs[pkg] = map[string]bool{}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(c.pkgs, pkg, d.Name.Name)
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					add(c.members, id.Name, d.Name.Name)
					add(c.pkgs, pkg, "."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						add(c.pkgs, pkg, s.Name.Name)
						if c.members[s.Name.Name] == nil {
							c.members[s.Name.Name] = map[string]bool{}
						}
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									add(c.members, s.Name.Name, n.Name)
								}
								if len(fl.Names) == 0 { // embedded: its name is a field
									typ := fl.Type
									if s, ok := typ.(*ast.StarExpr); ok {
										typ = s.X
									}
									switch e := typ.(type) {
									case *ast.Ident:
										add(c.members, s.Name.Name, e.Name)
									case *ast.SelectorExpr:
										add(c.members, s.Name.Name, e.Sel.Name)
									}
								}
							}
						}
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									add(c.members, s.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(c.pkgs, pkg, n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// routes are the paths the HTTP API serves (Base+"…" in httpapi's route
// table, and the meeting service's), with every {param} written {}.
func routes(t *testing.T, root string) map[string]bool {
	out := map[string]bool{}
	// Base+"/x" (httpapi), base+"/x" (the meetings under Base), and
	// Prefix+"/x" (the classroom page's own /classroom/v0 API).
	re := regexp.MustCompile(`(Base|base|Prefix)\+"(/[^"]*)"`)
	for _, f := range []string{"replica/httpapi/server.go", "replica/meeting/http.go", "replica/classroom/classroom.go"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			p := m[2]
			if m[1] == "Prefix" {
				p = "/classroom/v0" + p
			}
			out[param.ReplaceAllString(strings.TrimSuffix(p, "/"), "{}")] = true
		}
	}
	out["/.well-known/oth"], out[""] = true, true // the capability document; /oth/v0 itself
	return out
}

func docs(t *testing.T, root string) map[string]string {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

var (
	backticked = regexp.MustCompile("`([^`\n]+)`")
	qualified  = regexp.MustCompile(`\b([A-Za-z_]\w*)\.([A-Z]\w*)\b`)
	endpoint   = regexp.MustCompile(`^(?:(?:GET|POST|DELETE) )?(?:/oth/v0)?(/[a-z][\w./{}-]*)(?:\?\S*)?$`)
	command    = regexp.MustCompile(`^witan ([a-z-]+)\b(.*)$`)
	flagName   = regexp.MustCompile(`(?:^|\s)-([a-z][a-z0-9-]*)\b`)
	param      = regexp.MustCompile(`\{[^}]*\}`)
)

// TestDocsNameWhatExists: every pkg.Name and Type.Member a doc names in
// backticks is declared in the tree (pkg a witan package name, Type a
// type witan declares; other qualifiers are other projects'), every
// endpoint (`GET /x`, `/oth/v0/x`) is in the route table, and every flag
// of a witan command line (`witan up -gc-every`) is a flag witan defines.
func TestDocsNameWhatExists(t *testing.T) {
	root := ".."
	c := readCode(t, root)
	served := routes(t, root)
	cmdSrc := ""
	cmdFiles, _ := filepath.Glob(filepath.Join(root, "cmd", "witan", "*.go"))
	for _, f := range cmdFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmdSrc += string(b)
	}
	var bad []string
	for name, text := range docs(t, root) {
		for _, m := range backticked.FindAllStringSubmatch(text, -1) {
			s := m[1]
			for _, q := range qualified.FindAllStringSubmatch(s, -1) {
				a, b := q[1], q[2]
				if _, ok := c.pkgs[a]; ok && !(stdOverlap[a] && !c.has(a, b)) {
					if !c.has(a, b) {
						bad = append(bad, name+": `"+s+"`: package "+a+" declares no "+b)
					}
					continue
				}
				if ms, ok := c.members[a]; ok && !ms[b] {
					bad = append(bad, name+": `"+s+"`: type "+a+" has no method or field "+b)
				}
			}
			if e := endpoint.FindStringSubmatch(s); e != nil && (strings.HasPrefix(s, "GET ") || strings.HasPrefix(s, "POST ") || strings.HasPrefix(s, "/oth/v0")) {
				p := param.ReplaceAllString(strings.TrimSuffix(e[1], "/"), "{}")
				if strings.HasPrefix(s, "/oth/v0") && !strings.HasPrefix(s, "/oth/v0/") {
					p = ""
				}
				if !served[p] && !strings.ContainsAny(p, "|…") {
					bad = append(bad, name+": `"+s+"`: no route "+p)
				}
			}
			if cm := command.FindStringSubmatch(s); cm != nil {
				if !strings.Contains(cmdSrc, `"`+cm[1]+`"`) {
					bad = append(bad, name+": `"+s+"`: no witan command "+cm[1])
				}
				for _, f := range flagName.FindAllStringSubmatch(cm[2], -1) {
					if !strings.Contains(cmdSrc, `"`+f[1]+`"`) {
						bad = append(bad, name+": `"+s+"`: no flag -"+f[1])
					}
				}
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if len(c.pkgs["replica"]) < 20 || len(served) < 30 {
		t.Fatalf("read %d names of package replica and %d routes: the checker read the wrong tree", len(c.pkgs["replica"]), len(served))
	}
}

// TestDocsDescribeNotNarrate: docs and the comments of non-test code say
// what the project is, not its history (which is git log's): no "issue N"
// or "session N", and no citation of design notes that are not in the
// repository.
func TestDocsDescribeNotNarrate(t *testing.T) {
	narration := regexp.MustCompile(`\b[Ii]ssues? #?[0-9]+|\b[Ss]ession [0-9]+\b|\bSTYLE\.md\b|\bARCHITECTURE\.md\b`)
	n := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for i, line := range strings.Split(string(b), "\n") {
			if m := narration.FindString(line); m != "" {
				t.Errorf("%s:%d: %q narrates (say what the code is; history is git log's)", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read %d files: the wrong tree", n)
	}
}
