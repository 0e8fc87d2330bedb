package pyimport

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleFile(t *testing.T) {
	for name, want := range map[string]bool{
		"selectors.py": true, "selectors.pyc": true, "_json.so": true, "json.abi3.so": true,
		"fsmon_git.cpython-311-x86_64-linux-gnu.so": true,
		"README.md": false, "fsmon.conf": false, "selectors": false, "9x.py": false, "a-b.py": false,
		".py": false, "x.pyi": false, "x.py.orig": false, "x.so.1": false,
	} {
		if got := ModuleFile(name); got != want {
			t.Errorf("ModuleFile(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{"__init__.py": true, "__init__.pyc": true, "__init__.cpython-312-aarch64-linux-gnu.so": true, "__main__.py": false, "init.py": false} {
		if got := PackageInit(name); got != want {
			t.Errorf("PackageInit(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestPythonImportsWhatModuleFileNames: a module file this package names
// in a script's directory is what python3 imports in place of the standard
// library's module of that name; a file it does not name is not imported.
func TestPythonImportsWhatModuleFileNames(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	for name, shadows := range map[string]bool{"selectors.py": true, "selectors.pyi": false, "selectors.py.bak": false} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("SHADOW = True\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "main.py")
		if err := os.WriteFile(script, []byte("import selectors\nprint(getattr(selectors, 'SHADOW', False))\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, script).Output()
		if err != nil {
			t.Fatalf("python3 %s: %v", script, err)
		}
		if got := strings.TrimSpace(string(out)) == "True"; got != shadows || ModuleFile(name) != shadows {
			t.Errorf("%s: python3 imported it: %v; ModuleFile: %v", name, got, ModuleFile(name))
		}
	}
}
