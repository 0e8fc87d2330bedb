package redact

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestDocs checks that the package and every exported name are documented.
func TestDocs(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/agentwarden/warden/redact")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pkg.Doc, "Package redact ") {
		t.Errorf("package doc = %q, want one starting %q", pkg.Doc, "Package redact ")
	}
	for _, f := range pkg.Funcs {
		if f.Doc == "" {
			t.Errorf("func %s has no doc comment", f.Name)
		}
	}
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		if v.Doc == "" {
			t.Errorf("%s has no doc comment", strings.Join(v.Names, ", "))
		}
	}
	for _, typ := range pkg.Types {
		t.Errorf("unexpected exported type %s", typ.Name)
	}
}
