package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommandPathsReadTheValueAsShell: the files a program git starts is
// named by are read from the value as the shell reads it (red-team-20: a
// quoted path with a space, a path after $(git rev-parse --show-toplevel),
// a Python module, a cd before the script, a file on standard input were
// all missed); a bare name is the PATH's, an option no file.
func TestCommandPathsReadTheValueAsShell(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	for _, c := range []struct {
		value string
		want  []string
		ok    bool
	}{
		{"sh tools/fsmonitor.sh", []string{"tools/fsmonitor.sh"}, true},
		{"sh 'tools/fs monitor.sh'", []string{"tools/fs monitor.sh"}, true},
		{`sh "$(git rev-parse --show-toplevel)/tools/tc.sh"`, []string{"tools/tc.sh"}, true},
		{"python3 -m tools.fsmon", []string{"tools/fsmon.py", "tools/fsmon/__init__.py"}, true},
		{"cd tools && sh ./fsmon.sh", []string{"tools/fsmon.sh"}, true},
		{"sh < tools/x.sh", []string{"tools/x.sh"}, true},
		{"!./scripts/release.sh --dry-run", []string{"scripts/release.sh"}, true},
		{"diff-so-fancy | less --tabs=4 -RFX", nil, true},
		{"git-lfs clean -- %f", nil, true},
		{"ENV=tools/env.sh ./run", []string{"tools/env.sh", "run"}, true},
		{"delta --config=tools/delta.conf", []string{"tools/delta.conf"}, true},
		{". tools/fsmon.env; fsmon", []string{"tools/fsmon.env"}, true},
		{"sh 'unclosed", nil, false},
		// An interpreter's script is a file of the top even with no slash
		// in its name (red-team-27); code given inline is not a file.
		{"sh fsmon.sh", []string{"fsmon.sh"}, true},
		{"bash -e fsmon.sh --x", []string{"fsmon.sh"}, true},
		{"python3 -u fsmon.py", []string{"fsmon.py"}, true},
		{"node fsmon.js", []string{"fsmon.js"}, true},
		{"python3 -c 'import x'", nil, true},
		{"sh -c true", nil, true},
		{"node --eval 1", nil, true},
		// Paths of the home however the value names them (red-team-28).
		{`sh "$HOME/.cache/pc/fsmon.sh"`, []string{"~/.cache/pc/fsmon.sh"}, true},
		{`sh "${XDG_CACHE_HOME:-$HOME/.cache}/md/tc.sh"`, []string{"~/.cache/md/tc.sh"}, true},
		{"cd ~/.cache/hook && sh fsmon.sh", []string{"~/.cache/hook/fsmon.sh"}, true},
		{`sh -c 'exec sh ~/.cache/w/run.sh "$@"'`, []string{"~/.cache/w/run.sh"}, true},
	} {
		got, ok := commandPaths(c.value)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("commandPaths(%q) = %q, %v; want %q, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}

// FuzzCommandPaths: any value is read without a panic, and every path it
// gives is one the value names.
func FuzzCommandPaths(f *testing.F) {
	for _, s := range []string{"sh tools/x.sh", `sh "$(git rev-parse --show-toplevel)/x"`, "python3 -m a.b", "cd a && ./b", "!f() { echo; }; f", "'", "$("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		paths, _ := commandPaths(v)
		for _, p := range paths {
			if p == "" {
				t.Errorf("commandPaths(%q) gave an empty path", v)
			}
		}
	})
}

// FuzzImports: the readers of a Python module's imports and a JavaScript
// file's requires take any text, and name only paths in the module's
// directory (Python) or relative to it (JavaScript), never the directory
// itself.
func FuzzImports(f *testing.F) {
	for _, s := range []string{"import a.b, c as d\nfrom .x import (y, z)\n", "from . import *", "require('./a'); import b from \"../b.mjs\"", "'.", "import", "from a import", "`./${x}`"} {
		f.Add(s)
	}
	const dir = "/p/tools"
	f.Fuzz(func(t *testing.T, src string) {
		for _, p := range pythonImports(src, dir) {
			if !strings.HasPrefix(p, dir+"/") {
				t.Errorf("pythonImports(%q) named %q, outside %s", src, p, dir)
			}
		}
		for _, p := range nodeRequires(src, dir) {
			if !filepath.IsAbs(p) || p == dir {
				t.Errorf("nodeRequires(%q) named %q", src, p)
			}
		}
	})
}

// TestSourcedHelpersAreNamedToo: the files a named script sources, and
// theirs in turn, run as much as it does (red-team-20: fsmon.sh sourced
// fsmon.env, which a command rewrote).
func TestSourcedHelpersAreNamedToo(t *testing.T) {
	top := t.TempDir()
	write := fileWriter(t, top)
	write("tools/fsmon.sh", ". ./tools/fsmon.env\nsource tools/lib.sh\necho tools/other.go\n")
	write("tools/fsmon.env", "WATCH_ROOT=.\n")
	write("tools/lib.sh", ". tools/deeper.sh\n")
	got, _, _ := loadedBy(filepath.Join(top, "tools/fsmon.sh"), top, "", false)
	want := []string{filepath.Join(top, "tools/fsmon.env"), filepath.Join(top, "tools/lib.sh"), filepath.Join(top, "tools/deeper.sh")}
	if !slices.Equal(got, want) {
		t.Errorf("loadedBy = %q, want %q", got, want)
	}
	// A Python module's imports of modules beside it, and a JavaScript
	// file's relative requires, are followed as a script's sources are.
	write("tools/fsmon.py", "import os, json\nfrom helpers import watch as w\nfrom . import sibling\n")
	write("tools/helpers.py", "from pkg.deep import thing\n")
	write("tools/pkg/deep.py", "x = 1\n")
	write("tools/fsmon.js", "const lib = require('./lib');\nimport x from \"../shared/y.mjs\";\nrequire('lodash')\n")
	write("tools/lib.js", "module.exports = require(`./more/index.js`)\n")
	py, _, _ := loadedBy(filepath.Join(top, "tools/fsmon.py"), top, "", false)
	for _, p := range []string{"tools/json.py", "tools/helpers.py", "tools/helpers/watch.py", "tools/sibling.py", "tools/pkg/deep.py", "tools/pkg/__init__.py"} {
		if !slices.Contains(py, filepath.Join(top, p)) {
			t.Errorf("loadedBy(fsmon.py) lacks %s: %q", p, py)
		}
	}
	js, _, _ := loadedBy(filepath.Join(top, "tools/fsmon.js"), top, "", false)
	for _, p := range []string{"tools/lib.js", "shared/y.mjs", "tools/more/index.js"} {
		if !slices.Contains(js, filepath.Join(top, p)) {
			t.Errorf("loadedBy(fsmon.js) lacks %s: %q", p, js)
		}
	}
	if slices.ContainsFunc(js, func(p string) bool { return strings.Contains(p, "lodash") }) {
		t.Errorf("loadedBy(fsmon.js) names a package of node_modules: %q", js)
	}
}

// TestFilesAProgramNamesAreKept: at the top of the work tree, where a
// program's directory is the whole project, the files its text names are
// kept with it, whatever reads them (red-team-27): a file sourced through
// $(dirname "$0"), a settings file exec'd, a plugin imported by a name
// in a list, a file in the git directory it evals; Node's first
// candidate for a require is the name as written. Not a directory it
// names, nor git's own files.
func TestFilesAProgramNamesAreKept(t *testing.T) {
	top := t.TempDir()
	write := fileWriter(t, top)
	write("fsmon.sh", ". \"$(dirname \"$0\")/fsmon.env\"\neval \"$(cat .git/fsmon.local)\"\ngit -C src diff .git/index HEAD\n")
	write("fsmon.env", "W=1\n")
	write(".git/fsmon.local", "W=2\n")
	write(".git/index", "")
	write("src/main.go", "package main\n")
	write("fsmon.py", "import importlib\nexec(open('fsmon.conf').read())\nfor n in ['fsmon_git']:\n    importlib.import_module(n)\n")
	write("fsmon.conf", "exec(open('deeper.conf').read())\n")
	write("deeper.conf", "X = 1\n")
	write("fsmon_git.py", "W = []\n")
	write("fsmon.js", "const c = require('./fsmon.config');\n")
	has := namedHas(top)
	sh := programFiles(filepath.Join(top, "fsmon.sh"), top, "", false)
	for _, p := range []string{"fsmon.env", ".git/fsmon.local"} {
		if !has(sh, p, false) {
			t.Errorf("programFiles(fsmon.sh) = %v; want %s", sh, p)
		}
	}
	for _, p := range []string{"src", ".git/index", "."} {
		if has(sh, p, false) || has(sh, p, true) {
			t.Errorf("programFiles(fsmon.sh) = %v; %s is the work or git's", sh, p)
		}
	}
	py := programFiles(filepath.Join(top, "fsmon.py"), top, "", false)
	for _, p := range []string{"fsmon.conf", "deeper.conf", "fsmon_git.py"} {
		if !has(py, p, false) {
			t.Errorf("programFiles(fsmon.py) = %v; want %s", py, p)
		}
	}
	if js := programFiles(filepath.Join(top, "fsmon.js"), top, "", false); !has(js, "fsmon.config", false) {
		t.Errorf("programFiles(fsmon.js) = %v; want fsmon.config, Node's first candidate", js)
	}
}

// TestPythonProgramsImportPathIsSwept: a Python program git runs from the
// top or the git directory imports from there first, which is not kept
// whole: that directory is named for the sandbox to sweep the modules a
// command adds (red-team-27: selectors.py shadowed the standard library's),
// with its __pycache__ kept; the file tools' writes of a module there
// count as writes to what git's configuration names. A program elsewhere
// has its directory kept whole instead; a shell script names none.
func TestPythonProgramsImportPathIsSwept(t *testing.T) {
	top := t.TempDir()
	write := fileWriter(t, top)
	write("fsmon.py", "import subprocess\n")
	write(".git/hooks-py/mon.py", "import json\n")
	write("tools/mon.py", "import json\n")
	write("fsmon.sh", "exit 1\n")
	modules := func(got []configNamed) []string {
		var dirs []string
		for _, n := range got {
			if n.modules {
				dirs = append(dirs, n.path)
			}
		}
		return dirs
	}
	has := namedHas(top)
	if got := programFiles(filepath.Join(top, "fsmon.py"), top, "", false); !slices.Equal(modules(got), []string{top}) || !has(got, "__pycache__", true) {
		t.Errorf("programFiles(fsmon.py) = %v; want the top named for its modules, and its __pycache__", got)
	}
	if got := programFiles(filepath.Join(top, "fsmon.sh"), top, "", true); !slices.Equal(modules(got), []string{top}) {
		t.Errorf("programFiles of a module python -m runs = %v; want the top named for its modules", got)
	}
	if got := modules(programFiles(filepath.Join(top, ".git/hooks-py/mon.py"), top, "", false)); !slices.Equal(got, []string{filepath.Join(top, ".git/hooks-py")}) {
		t.Errorf("a program in the git directory imports from %v; want its directory", got)
	}
	for _, p := range []string{"tools/mon.py", "fsmon.sh"} {
		if got := modules(programFiles(filepath.Join(top, p), top, "", false)); len(got) != 0 {
			t.Errorf("programFiles(%s) names %v for its modules; want none", p, got)
		}
	}
	named := []configNamed{{path: top, modules: true}}
	if got := namedInside(top, named, nil); len(got) != 0 {
		t.Errorf("namedInside keeps %v read-only; a directory named for its modules stays writable", got)
	}
	for p, want := range map[string]bool{"selectors.py": true, "json.abi3.so": true, "http/__init__.py": true, "subprocess": true, "README.md": false, "src/selectors.py": false, "x.pyi": false} {
		if got := addsModule(filepath.Join(top, p), top); got != want {
			t.Errorf("addsModule(%s) = %v, want %v", p, got, want)
		}
	}
}

// TestVirtualEnvironmentsInterpreterKeepsTheEnvironment: a program git
// runs with a virtual environment's interpreter keeps the whole
// environment (its site-packages' .pth files run at every start); a
// bin directory without pyvenv.cfg is only itself.
func TestVirtualEnvironmentsInterpreterKeepsTheEnvironment(t *testing.T) {
	top := t.TempDir()
	write := fileWriter(t, top)
	write(".venv/pyvenv.cfg", "home = /usr/bin\n")
	write(".venv/bin/python3", "")
	write(".venv/lib/python3.11/site-packages/x.pth", "")
	write("tools/bin/run", "")
	has := namedHas(top)
	if got := programFiles(filepath.Join(top, ".venv/bin/python3"), top, "", false); !has(got, ".venv", true) {
		t.Errorf("programFiles(.venv/bin/python3) = %v; want .venv/ whole", got)
	}
	if got := programFiles(filepath.Join(top, "tools/bin/run"), top, "", false); has(got, "tools", true) {
		t.Errorf("programFiles(tools/bin/run) = %v; tools/ is no environment", got)
	}
}

// TestNodePackagesFollowTheirDependencies: a package a Node program git
// runs requires by name is kept with what it depends on, as Node resolves
// each from it (a scoped package looks in its scope's node_modules first),
// and so are the places nearer the requiring file where Node would look
// first and finds nothing now (a package made there would be loaded: a
// required package missing everywhere is kept where Node would look);
// Node's own modules are none of these.
func TestNodePackagesFollowTheirDependencies(t *testing.T) {
	top := t.TempDir()
	write := fileWriter(t, top)
	write("fsmon.js", "const w = require('@acme/watch');\nrequire('fs');\ntry { require('fsmon-plugin') } catch {}\n")
	write("node_modules/@acme/watch/package.json", `{"dependencies": {"chokidar": "^3", "../escape": "1"}, "peerDependencies": {"picomatch": "*"}}`)
	write("node_modules/@acme/watch/index.js", "")
	write("node_modules/chokidar/package.json", `{"dependencies": {"readdirp": "^3"}}`)
	write("node_modules/readdirp/index.js", "")
	write("node_modules/picomatch/index.js", "")
	write("node_modules/unrelated/index.js", "")
	has := namedHas(top)
	got := programFiles(filepath.Join(top, "fsmon.js"), top, "", false)
	for _, p := range []string{"node_modules/@acme/watch", "node_modules/@acme/node_modules/chokidar", "node_modules/chokidar", "node_modules/readdirp", "node_modules/picomatch", "node_modules/fsmon-plugin"} {
		if !has(got, p, true) {
			t.Errorf("programFiles(fsmon.js) = %v; want %s", got, p)
		}
	}
	for _, p := range []string{"node_modules/unrelated", "node_modules/fs", "escape", "node_modules/escape"} {
		if has(got, p, true) {
			t.Errorf("programFiles(fsmon.js) keeps %s: %v", p, got)
		}
	}
}

// TestProgramFilesAreItsDirectory: a program git runs from the project is
// its directory as a whole (its modules, their compiled caches, plugins
// and files it reads: red-team-26), with the packages of node_modules its
// JavaScript requires by name, the directories a PYTHONPATH in the value
// names, and, for python -m, its imports from the top; at the top, the
// files alone.
func TestProgramFilesAreItsDirectory(t *testing.T) {
	top := t.TempDir()
	write := fileWriter(t, top)
	write("tools/fsmon.js", "const w = require('fsmon-watch');\nrequire('fs')\n")
	write("node_modules/fsmon-watch/index.js", "")
	write("tools/mod.py", "import shlex\ntry: import fsmon_local\nexcept ImportError: pass\n")
	write("top.sh", ". ./top.env\nsh scripts/scan.sh\n")
	has := namedHas(top)
	js := programFiles(filepath.Join(top, "tools/fsmon.js"), top, "", false)
	if !has(js, "tools", true) || !has(js, "node_modules/fsmon-watch", true) {
		t.Errorf("programFiles(fsmon.js) = %v; want tools/ and node_modules/fsmon-watch/", js)
	}
	py := programFiles(filepath.Join(top, "tools/mod.py"), top, "", true)
	if !has(py, "shlex.py", false) || !has(py, "tools", true) {
		t.Errorf("programFiles(python -m tools.mod) = %v; want shlex.py at the top and tools/", py)
	}
	if !has(programFiles(filepath.Join(top, "tools/mod.py"), top, "", false), "tools", true) {
		t.Error("a module's directory is not named")
	}
	sh := programFiles(filepath.Join(top, "top.sh"), top, "", false)
	if !has(sh, "top.sh", false) || !has(sh, "top.env", false) || !has(sh, "scripts", true) || has(sh, ".", true) {
		t.Errorf("programFiles(top.sh) = %v; want top.sh, top.env and scripts/, not the top", sh)
	}
	// .github is no git directory: its scripts' directory is the program's.
	write(".github/scripts/fsmon.sh", "true\n")
	if gh := programFiles(filepath.Join(top, ".github/scripts/fsmon.sh"), top, "", false); !has(gh, ".github/scripts", true) {
		t.Errorf("programFiles(.github/scripts/fsmon.sh) = %v; want .github/scripts/", gh)
	}
	if got, _ := commandPaths("PYTHONPATH=lib:vendor/py python3 tools/fsmon.py"); !slices.Contains(got, "lib/") || !slices.Contains(got, "vendor/py/") {
		t.Errorf("commandPaths with PYTHONPATH = %q; want lib/ and vendor/py/", got)
	}
}

// namedHas reports whether got names path (below top), as a directory or
// a file.
func namedHas(top string) func(got []configNamed, path string, dir bool) bool {
	return func(got []configNamed, path string, dir bool) bool {
		return slices.Contains(got, configNamed{path: filepath.Join(top, path), dir: dir})
	}
}

// fileWriter writes files below top, making their directories.
func fileWriter(t *testing.T, top string) func(name, content string) {
	return func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(top, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
