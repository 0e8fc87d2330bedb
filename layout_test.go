package warden_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentwarden/warden"

// Package roles, for the import rules below. A package not listed is a core
// package: it may import the domain and other core packages, never adapters or
// the wiring.
var (
	adapters = map[string]bool{"sqlite": true, "postgres": true, "httpapi": true, "hook": true, "mcpproxy": true, "mcp": true, "telegram": true, "httpexchange": true}
	wiring   = map[string]bool{"app": true}
	// bench holds programs that drive warden from outside, as a user's
	// tools would (a load generator through the daemon): front ends too.
	frontend = map[string]bool{"cli": true, "cmd/warden": true, "bench": true}
)

type listedPackage struct {
	ImportPath string
	Doc        string
	Imports    []string
	Name       string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

// top is the first path element: "audit/audittest" belongs to "audit".
func top(r string) string {
	if r == "cmd/warden" {
		return r
	}
	first, _, _ := strings.Cut(r, "/")
	return first
}

// TestImportDirection enforces the layout of DESIGN.md §7: the domain imports
// only the standard library; core packages never import adapters, the wiring or
// the front end; adapters never import each other or the wiring; only the wiring
// and cmd/warden reach concrete adapters; cmd/warden is thin.
func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		from := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				if from == "" && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
					t.Errorf("the domain package imports %s; it may use the standard library only", imp)
				}
				continue
			}
			to := top(rel(imp))
			switch {
			case from == "cmd/warden":
				if to != "cli" {
					t.Errorf("cmd/warden imports %s; it should only call cli", imp)
				}
			case frontend[top(from)]:
				if adapters[to] {
					t.Errorf("%s imports the adapter %s; reach adapters through app", from, imp)
				}
			case wiring[top(from)]:
				if frontend[to] {
					t.Errorf("%s imports the front end %s", from, imp)
				}
			case adapters[top(from)]:
				if adapters[to] && to != top(from) || wiring[to] || frontend[to] {
					t.Errorf("adapter %s imports %s; adapters depend on the domain and core packages only", from, imp)
				}
			case from == "":
				t.Errorf("the domain package imports %s", imp)
			default: // core
				if adapters[to] || wiring[to] || frontend[to] {
					t.Errorf("core package %s imports %s; only app and cmd/warden may", from, imp)
				}
			}
		}
	}
}

// TestPackageDocs fails on a package without a package doc comment.
func TestPackageDocs(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no package doc comment", p.ImportPath)
		}
	}
}
