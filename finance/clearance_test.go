package finance

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheTraderIssuesClearances proves, from the source, that no code
// path executes a trade without the gate: every Backend's executing method
// refuses a Clearance the Trader did not issue (each backend's tests show
// the zero value is refused), a Clearance's only field is unexported, and
// the one place in the module that builds a Clearance with a value is
// Trader.Execute — after the gate, whose trade stages are the
// FullRiskManager (app.TestTradingPipelineIsTheFullRiskManager), allowed it.
func TestOnlyTheTraderIssuesClearances(t *testing.T) {
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || len(lit.Elts) == 0 {
				return true
			}
			switch typ := lit.Type.(type) {
			case *ast.Ident:
				if typ.Name == "Clearance" {
					found = append(found, filepath.ToSlash(path))
				}
			case *ast.SelectorExpr:
				if typ.Sel.Name == "Clearance" {
					found = append(found, filepath.ToSlash(path))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0] != "../finance/trader.go" {
		t.Fatalf("Clearances with a value are built in %v; only ../finance/trader.go may", found)
	}
}
