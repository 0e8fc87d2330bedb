package warden_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// initWork are calls that do real work (compile, build a table, decode) and
// must not run at package init in warden's own packages: every warden
// process, a hook's included, would pay for them before main. Keep such a
// value behind sync.OnceValue (or compile it where it is used).
// docs/benchmarks.md ("Package init of warden's own packages") has what each
// cost.
var initWork = map[string][]string{
	"regexp":                               {"Compile", "CompilePOSIX", "MustCompile", "MustCompilePOSIX"},
	"hash/crc32":                           {"MakeTable"},
	"hash/crc64":                           {"MakeTable"},
	"text/template":                        {"Must"},
	"html/template":                        {"Must"},
	"encoding/json":                        {"Unmarshal"},
	"go.yaml.in/yaml/v3":                   {"Unmarshal"},
	"gopkg.in/yaml.v3":                     {"Unmarshal"},
	"github.com/agentwarden/warden/config": {"Parse"},
}

// TestNoInitWorkInWarden parses every package of this module that
// cmd/warden links and fails on each call of initWork that runs at package
// init: in a package-level variable's initialiser, in a func init, or in a
// function of the same package that either calls (transitively), naming the
// file and line and the variable. A function literal that is only passed on
// (sync.OnceValue(func…)) runs later and is not counted; one called at once
// is.
func TestNoInitWorkInWarden(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/agentwarden/warden"}}{{.ImportPath}}|{{.Dir}}|{{join .GoFiles ","}}{{end}}{{end}}`,
		"./cmd/warden").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/warden: %v", err)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimSpace(line), "|")
		if len(fields) != 3 || fields[2] == "" {
			continue
		}
		n++
		var files []string
		for _, f := range strings.Split(fields[2], ",") {
			files = append(files, filepath.Join(fields[1], f))
		}
		for _, problem := range initWorkIn(t, files) {
			t.Errorf("%s: %s", fields[0], problem)
		}
	}
	if n < 20 {
		t.Fatalf("go list found %d of warden's packages in cmd/warden, want the whole tree", n)
	}
}

// initWorkIn returns, for one package's files, each initWork call that runs
// at package init, as "file:line: what (runs at package init through var X)".
func initWorkIn(t *testing.T, files []string) []string {
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}          // package-level functions by name
	imports := map[*ast.File]map[string]string{} // per file: local name → import path
	type root struct {
		file *ast.File
		what string
		node ast.Node
	}
	var roots []root
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		imports[f] = map[string]string{}
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			local := path[strings.LastIndex(path, "/")+1:]
			if path == "gopkg.in/yaml.v3" || path == "go.yaml.in/yaml/v3" {
				local = "yaml"
			}
			if is.Name != nil {
				local = is.Name.Name
			}
			imports[f][local] = path
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					continue
				}
				if d.Name.Name == "init" {
					roots = append(roots, root{f, "func init", d.Body})
				} else {
					funcs[d.Name.Name] = d
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for _, v := range vs.Values {
						roots = append(roots, root{f, "var " + vs.Names[0].Name, v})
					}
				}
			}
		}
	}
	fileOf := func(n ast.Node) *ast.File {
		for f := range imports {
			if f.FileStart <= n.Pos() && n.Pos() < f.FileEnd {
				return f
			}
		}
		return nil
	}
	var problems []string
	for _, r := range roots {
		seen := map[string]bool{}
		var walk func(f *ast.File, n ast.Node)
		walk = func(f *ast.File, n ast.Node) {
			ast.Inspect(n, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					// A function literal runs at init only when called at
					// once, and then it is the Fun of a CallExpr below.
					_, lit := n.(*ast.FuncLit)
					return !lit
				}
				if lit, ok := call.Fun.(*ast.FuncLit); ok {
					walk(f, lit.Body)
				}
				switch fun := call.Fun.(type) {
				case *ast.SelectorExpr:
					if x, ok := fun.X.(*ast.Ident); ok {
						path := imports[f][x.Name]
						for _, name := range initWork[path] {
							if fun.Sel.Name == name {
								problems = append(problems, fmt.Sprintf("%s: %s.%s runs at package init (%s): every warden process pays for it before main; build it on first use (sync.OnceValue)",
									fset.Position(call.Pos()), x.Name, name, r.what))
							}
						}
					}
				case *ast.Ident:
					if d := funcs[fun.Name]; d != nil && !seen[fun.Name] {
						seen[fun.Name] = true
						walk(fileOf(d), d.Body)
					}
				}
				return true
			})
		}
		walk(r.file, r.node)
	}
	return problems
}

// TestInitWorkInFindsEachForm runs initWorkIn over small packages: each way
// a call can run at init is found, and each way it is deferred is not.
func TestInitWorkInFindsEachForm(t *testing.T) {
	const header = "package p\n\nimport (\n\t\"hash/crc32\"\n\t\"regexp\"\n\t\"sync\"\n)\n\nvar _ = crc32.IEEE\nvar _ sync.Once\nvar _ *regexp.Regexp\n\n"
	cases := []struct {
		name, src string
		want      int
	}{
		{"var", "var re = regexp.MustCompile(`a`)\n", 1},
		{"table", "var tab = crc32.MakeTable(crc32.Castagnoli)\n", 1},
		{"func init", "var re *regexp.Regexp\n\nfunc init() { re = regexp.MustCompile(`a`) }\n", 1},
		{"through a helper", "var re = compile(`a`)\n\nfunc compile(s string) *regexp.Regexp { return helper(s) }\n\nfunc helper(s string) *regexp.Regexp { return regexp.MustCompile(s) }\n", 1},
		{"literal called at once", "var re = func() *regexp.Regexp { return regexp.MustCompile(`a`) }()\n", 1},
		{"renamed import", "var re = rx.MustCompile(`a`)\n", 1},
		{"sync.OnceValue", "var re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`a`) })\n", 0},
		{"helper returning OnceValue", "var re = lazy(`a`)\n\nfunc lazy(s string) func() *regexp.Regexp {\n\treturn sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(s) })\n}\n", 0},
		{"in a function", "func match(s string) bool { return regexp.MustCompile(`a`).MatchString(s) }\n", 0},
		{"function value", "var compile = regexp.MustCompile\n", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := header + c.src
			if c.name == "renamed import" {
				src = strings.Replace(src, "\t\"regexp\"\n", "\trx \"regexp\"\n", 1)
				src = strings.ReplaceAll(src, "*regexp.", "*rx.")
			}
			name := filepath.Join(t.TempDir(), "p.go")
			if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := initWorkIn(t, []string{name}); len(got) != c.want {
				t.Errorf("initWorkIn(%s) found %d calls at init, want %d: %q", c.name, len(got), c.want, got)
			}
		})
	}
}
