package app

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentwarden/warden/internal/pyimport"
	"github.com/agentwarden/warden/internal/regfile"
)

// commandPaths are the files a git configuration value that runs a
// program (core.fsmonitor, a diff textconv, a filter…) names by a path,
// read as the shell git hands it to reads it: a word with a slash, quoted
// or not ("tools/fs monitor.sh"), the tail of one that starts with an
// expansion ("$(git rev-parse --show-toplevel)/tools/tc.sh" is
// tools/tc.sh from the top of the work tree, where git runs it), a file
// sourced or read on standard input, a Python module run with -m (its .py
// and its package directory), each relative to the directory a cd before
// it in the value leads to, and the directories a PYTHONPATH (or another
// of searchPathVars) names, each with a trailing slash. A bare name is
// looked up on the PATH, not in the work tree. ok is false when the value
// does not parse as shell: what it names is not known. What the named
// program itself loads is loadedBy's.
func commandPaths(v string) (paths []string, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "!")
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(v), "")
	if err != nil {
		f, err = syntax.NewParser().Parse(strings.NewReader(v), "")
		if err != nil {
			return nil, false
		}
	}
	base := ""
	add := func(p string) {
		q := p
		if p != "" && !strings.HasPrefix(p, "~") && !path.IsAbs(p) {
			q = path.Join(base, p)
			if strings.HasSuffix(p, "/") {
				q += "/" // a directory
			}
		}
		if q != "" && !slices.Contains(paths, q) {
			paths = append(paths, q)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				if r.Op == syntax.RdrIn && r.Word != nil {
					if p, _ := wordPath(r.Word); p != "" {
						add(p)
					}
				}
			}
		case *syntax.CallExpr:
			for _, a := range n.Assigns {
				if a.Value == nil {
					continue
				}
				p, _ := wordPath(a.Value)
				if a.Name != nil && searchPathVars[a.Name.Value] {
					// PYTHONPATH=lib: directories the program's modules
					// are looked up in first (a trailing slash: a
					// directory).
					for _, d := range strings.Split(p, ":") {
						if d != "" && d != "." {
							add(strings.TrimSuffix(d, "/") + "/")
						}
					}
					continue
				}
				if strings.Contains(p, "/") {
					add(p)
				}
			}
			if len(n.Args) == 0 {
				return true
			}
			prog, _ := wordPath(n.Args[0])
			switch path.Base(prog) {
			case "cd", "pushd":
				if len(n.Args) > 1 {
					if dir, lit := wordPath(n.Args[1]); lit && dir != "" {
						if path.IsAbs(dir) || dir == "~" || strings.HasPrefix(dir, "~/") {
							base = dir // cd ~/.cache/hook && sh run.sh (red-team-28)
						} else {
							base = path.Join(base, dir)
						}
					}
				}
				return true
			case "source", ".":
				if len(n.Args) > 1 {
					if p, _ := wordPath(n.Args[1]); p != "" {
						add(p)
					}
				}
				return true
			}
			module := strings.HasPrefix(path.Base(prog), "python")
			code := shellCode(prog, n.Args[1:])
			if code != "" {
				// sh -c 'exec sh ~/.cache/x/run.sh': the code's own paths
				sub, _ := commandPaths(code)
				for _, p := range sub {
					add(p)
				}
			}
			if script := scriptOperand(prog, n.Args[1:]); script != "" {
				add(script) // sh fsmon.sh: a file of the top, named without a slash (red-team-27)
			}
			for i, w := range n.Args {
				p, _ := wordPath(w)
				if code != "" && p == code {
					continue // read above as code
				}
				if module && p == "-m" && i+1 < len(n.Args) {
					if m, lit := wordPath(n.Args[i+1]); lit && m != "" && !strings.ContainsAny(m, "/ ") {
						mp := strings.ReplaceAll(m, ".", "/")
						add(mp + ".py")
						add(mp + "/__init__.py")
					}
					continue
				}
				if strings.HasPrefix(p, "-") {
					if _, val, ok := strings.Cut(p, "="); ok && strings.Contains(val, "/") {
						add(val)
					}
					continue
				}
				if j := strings.IndexByte(p, '='); j >= 0 && !strings.Contains(p[:j], "/") {
					p = p[j+1:] // VAR=path
				}
				if strings.Contains(p, "/") {
					add(p)
				}
			}
		}
		return true
	})
	return paths, true
}

// scriptOperand is the script file an interpreter prog is given (its
// first operand: sh fsmon.sh, python3 -u fsmon.py), or "" when it runs
// code given inline (-c, -e), a module (-m), or is no interpreter.
func scriptOperand(prog string, args []*syntax.Word) string {
	base := path.Base(prog)
	if !runsScript[base] && !strings.HasPrefix(base, "python") {
		return ""
	}
	for _, a := range args {
		p, lit := wordPath(a)
		switch {
		case !lit || p == "":
			return ""
		case p == "--":
			continue
		case strings.HasPrefix(p, "--"):
			if p == "--eval" || p == "--print" || strings.HasPrefix(p, "--eval=") || strings.HasPrefix(p, "--print=") {
				return "" // node --eval CODE
			}
		case strings.HasPrefix(p, "-"):
			if strings.ContainsAny(p[1:], inlineCodeFlags(base)) {
				return "" // code or a module follows
			}
		default:
			return p
		}
	}
	return ""
}

// shellCode is the code a shell prog is given with -c, when it is
// literal; "" otherwise.
func shellCode(prog string, args []*syntax.Word) string {
	if base := path.Base(prog); !runsScript[base] || base == "node" || base == "perl" || base == "ruby" {
		return ""
	}
	for i, a := range args {
		p, lit := wordPath(a)
		if !lit || !strings.HasPrefix(p, "-") || strings.HasPrefix(p, "--") {
			return ""
		}
		if strings.Contains(p[1:], "c") && i+1 < len(args) {
			code, lit := wordPath(args[i+1])
			if !lit {
				return ""
			}
			return code
		}
	}
	return ""
}

// inlineCodeFlags are the one-letter options after which an interpreter
// runs code given inline, or a module, instead of a script file.
func inlineCodeFlags(interp string) string {
	switch {
	case strings.HasPrefix(interp, "python"):
		return "cm"
	case interp == "node":
		return "ep"
	case interp == "perl":
		return "eE"
	case interp == "ruby":
		return "e"
	}
	return "c" // the shells
}

// searchPathVars are the variables naming directories an interpreter
// looks its modules up in before its own.
var searchPathVars = map[string]bool{"PYTHONPATH": true, "NODE_PATH": true, "PERL5LIB": true, "PERLLIB": true, "RUBYLIB": true}

// wordPath is the text of a shell word as a path: its literal parts,
// quoted or not; a word that starts with an expansion is the literal text
// after it with its leading slash taken off (a path from the top of the
// work tree, as "$(git rev-parse --show-toplevel)/x" is), and lit is false
// for it; a word with an expansion elsewhere is "".
func wordPath(w *syntax.Word) (p string, lit bool) {
	var b strings.Builder
	lit = true
	var parts []syntax.WordPart
	for _, part := range w.Parts {
		if dq, ok := part.(*syntax.DblQuoted); ok {
			parts = append(parts, dq.Parts...)
			continue
		}
		parts = append(parts, part)
	}
	for i, part := range parts {
		switch part := part.(type) {
		case *syntax.Lit:
			b.WriteString(part.Value)
		case *syntax.SglQuoted:
			b.WriteString(part.Value)
		default:
			if v, ok := envExpansion(part); ok && i != 0 {
				b.WriteString(v) // ~/.cache/tools-"$USER"/x: the user's name (red-team-28)
				continue
			}
			if i != 0 || !lit {
				return "", false
			}
			if home, ok := homeExpansion(part); ok {
				b.WriteString(home) // $HOME/.cache/x: ~/.cache/x (red-team-28)
				continue
			}
			lit = false
		}
	}
	p = b.String()
	if !lit {
		p = strings.TrimPrefix(p, "/")
	}
	return p, lit
}

// envExpansion is the value of a plain $NAME of the user's identity
// (USER, LOGNAME) in warden's environment, which git's programs run with.
func envExpansion(part syntax.WordPart) (string, bool) {
	pe, ok := part.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Excl || pe.Length || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Exp != nil || len(pe.Modifiers) > 0 {
		return "", false
	}
	if n := pe.Param.Value; n == "USER" || n == "LOGNAME" {
		if v := os.Getenv(n); v != "" && !strings.ContainsAny(v, "/*?[") {
			return v, true
		}
	}
	return "", false
}

// homeExpansion is what an expansion at the start of a path gives as a
// path of the home: $HOME and ${HOME} give ~, and an XDG base directory
// (${XDG_CACHE_HOME:-$HOME/.cache}) its value in warden's environment, or
// else its default.
func homeExpansion(part syntax.WordPart) (string, bool) {
	pe, ok := part.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Excl || pe.Length || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || len(pe.Modifiers) > 0 {
		return "", false
	}
	name := pe.Param.Value
	if name == "HOME" && pe.Exp == nil {
		return "~", true
	}
	if !strings.HasPrefix(name, "XDG_") {
		return "", false
	}
	if v := os.Getenv(name); v != "" && filepath.IsAbs(v) {
		return v, true
	}
	if pe.Exp != nil && (pe.Exp.Op == syntax.DefaultUnsetOrNull || pe.Exp.Op == syntax.DefaultUnset) && pe.Exp.Word != nil {
		if d, lit := wordPath(pe.Exp.Word); lit && (d == "~" || strings.HasPrefix(d, "~/") || filepath.IsAbs(d)) {
			return d, true
		}
	}
	return "", false
}

// maxSourcedScript bounds a script read for the files it sources, and
// maxSourcedDepth how far warden follows them.
const (
	maxSourcedScript = 64 << 10
	maxSourcedDepth  = 10
)

// loadedBy are the files the program file at file (absolute) loads, and
// those they load in turn (to maxSourcedDepth), as absolute paths: a
// helper a named program loads runs as much as the program (red-team-20:
// fsmon.sh sourced fsmon.env). A shell script's sourced files (. FILE,
// source FILE) and the scripts it runs (sh FILE, ./FILE) are taken from
// top, the directory git runs the program in; a Python module's imports
// (import lib, from pkg.mod import x, from . import y) from its own
// directory, as Python's path starts there, and for the module python -m
// runs (module) from top too; a JavaScript file's relative requires and
// imports (./lib, ../x.mjs) from its own directory. packages are the
// directories of node_modules its JavaScript requires by name
// (nodePackages). named are the files of the work tree its text names
// besides (namedFiles), followed too: what it may read or exec as code.
// A file that is not a regular one of at most
// maxSourcedScript bytes loads nothing here; neither does a module found
// elsewhere (the standard library, site-packages).
func loadedBy(file, top, home string, module bool) (files, named, packages []string) {
	seen := map[string]bool{file: true}
	var follow func(file string, depth int)
	follow = func(file string, depth int) {
		if depth >= maxSourcedDepth {
			return
		}
		data, err := regfile.ReadFile(file, maxSourcedScript)
		if err != nil {
			return
		}
		var next []string
		switch scriptKind(file, data) {
		case "python":
			next = pythonImports(string(data), filepath.Dir(file))
			if module && depth == 0 {
				next = append(next, pythonImports(string(data), top)...)
			}
		case "node":
			next = nodeRequires(string(data), filepath.Dir(file))
			for _, pkg := range nodePackages(string(data), filepath.Dir(file), top) {
				if !slices.Contains(packages, pkg) {
					packages = append(packages, pkg)
				}
			}
		default:
			next = shellSourced(string(data), top, home)
		}
		for _, p := range next {
			if p = filepath.Clean(p); !seen[p] {
				seen[p] = true
				files = append(files, p)
				follow(p, depth+1)
			}
		}
		for _, p := range namedFiles(string(data), filepath.Dir(file), top) {
			if !seen[p] {
				seen[p] = true
				named = append(named, p)
				follow(p, depth+1)
			}
		}
	}
	follow(file, 0)
	return files, named, packages
}

// maxNamedTokens bounds the words of a program file namedFiles looks up.
const maxNamedTokens = 2000

// namedFiles are the files of the work tree at top a program file's text
// names: each word of it (a run of letters, digits and _ . / @ + -) that,
// taken from the file's directory, the two above it, or from top (a
// leading / dropped too:
// "$(dirname "$0")/x.env"), is a regular file there, or a Python module
// (NAME.py, NAME/__init__.py). They are what it may read, source, exec or
// import under a name the readings of its language miss (red-team-27:
// exec(open("fsmon.conf").read()), importlib.import_module("fsmon_git"),
// . "$(dirname "$0")/fsmon.env", eval "$(cat .git/fsmon.local)"). Files
// only: a directory it names (the tree it watches) stays writable; and in
// the git directory, none of git's own files (its index, HEAD, refs).
func namedFiles(src, dir, top string) []string {
	tokens := strings.FieldsFunc(src, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./@+-", r))
	})
	// Where it may look: the work tree, or for a program outside it (a
	// tool cache's) its directory and the two above (a hook repository
	// whose script puts its top on sys.path: red-team-28); from its
	// directory, those above it there, and the top.
	area := top
	if !inside(dir, top) {
		area = filepath.Dir(filepath.Dir(dir))
	}
	bases := []string{dir}
	for d := dir; d != area && inside(d, area) && len(bases) < 3; {
		d = filepath.Dir(d)
		bases = append(bases, d)
	}
	bases = append(bases, top)
	seen := map[string]bool{}
	var out []string
	look := func(p string) {
		if seen[p] || p == top || p == area || !inside(p, area) || gitOwnFile(p, top) {
			return
		}
		seen[p] = true
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	n := 0
	for _, t := range tokens {
		if seen["\x00"+t] || !strings.ContainsFunc(t, func(r rune) bool { return r != '.' && r != '/' && r != '-' }) {
			continue
		}
		seen["\x00"+t] = true
		if n++; n > maxNamedTokens {
			break
		}
		rel := strings.TrimLeft(t, "/")
		for _, base := range bases {
			look(filepath.Join(base, rel))
			if pythonModuleName(t) {
				mod := filepath.Join(base, strings.ReplaceAll(t, ".", "/"))
				look(mod + ".py")
				look(filepath.Join(mod, "__init__.py"))
			}
		}
	}
	return out
}

// pythonModuleName reports whether t reads as a dotted Python module name.
func pythonModuleName(t string) bool {
	for _, part := range strings.Split(t, ".") {
		if part == "" || !pyimport.Identifier(part) {
			return false
		}
	}
	return true
}

// gitOwnFile reports whether p is a file git keeps in the work tree's git
// directory at top (its index, HEAD, refs, objects, logs…), which a
// program may name but must stay git's to write; a file of the user's
// own beside them (.git/fsmon.local) is not.
func gitOwnFile(p, top string) bool {
	rel, ok := strings.CutPrefix(p, filepath.Join(top, ".git")+"/")
	if !ok {
		return false
	}
	if strings.Contains(rel, "/") {
		return true // objects/, refs/, logs/, worktrees/, modules/, hooks/…
	}
	return strings.HasSuffix(rel, "HEAD") || strings.HasSuffix(rel, ".lock") || strings.HasPrefix(rel, "sharedindex.") || strings.HasPrefix(rel, "BISECT_") ||
		slices.Contains([]string{"index", "packed-refs", "COMMIT_EDITMSG", "description", "shallow", "config", "config.worktree", "commondir", "gitdir", "MERGE_MSG", "MERGE_MODE", "SQUASH_MSG", "TAG_EDITMSG", "NOTES_EDITMSG", "gc.pid", "gc.log", "FETCH_HEAD"}, rel)
}

// scriptKind names the language of a program file by its name, else its
// #! line: "python", "node", or "" (read as shell).
func scriptKind(file string, data []byte) string {
	switch filepath.Ext(file) {
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs":
		return "node"
	}
	line, _, _ := strings.Cut(string(data[:min(len(data), 256)]), "\n")
	switch {
	case !strings.HasPrefix(line, "#!"):
		return ""
	case strings.Contains(line, "python"):
		return "python"
	case strings.Contains(line, "node"):
		return "node"
	}
	return ""
}

// runsScript are the interpreters a script runs another script with.
var runsScript = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "node": true, "perl": true, "ruby": true}

// shellSourced are the files a shell script sources or runs, from top.
func shellSourced(src, top, home string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return nil
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		prog, lit := wordPath(call.Args[0])
		if !lit {
			return true
		}
		var p string
		switch base := filepath.Base(prog); {
		case strings.Contains(prog, "/"):
			p = prog // ./tools/scan.sh: a script it runs
		case len(call.Args) < 2:
			return true
		case prog == "." || prog == "source" || runsScript[base] || strings.HasPrefix(base, "python"):
			p, _ = wordPath(call.Args[1]) // sourced, or run: sh tools/scan.sh
			if strings.HasPrefix(p, "-") {
				return true
			}
		default:
			return true
		}
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home == "" {
				return true
			}
			p = home + p[1:] // . "$HOME/.cache/x/common.sh" (red-team-28)
		}
		if p == "" || strings.HasPrefix(p, "~") {
			return true
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(top, p)
		}
		out = append(out, p)
		return true
	})
	return out
}

// pythonImports are the files of dir a Python module's imports may load:
// for each module named (a.b, and in from a import b also a.b, which may
// be a submodule), a.py, a/__init__.py, a/b.py and a/b/__init__.py; a
// relative import (from .m import x) from dir too. Read line by line,
// not parsed: a name that is not a module costs a missing path.
func pythonImports(src, dir string) []string {
	var mods []string
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); !strings.HasPrefix(t, "import ") && !strings.HasPrefix(t, "from ") {
			if _, after, ok := strings.Cut(t, ":"); ok {
				line = after // try: import x, else: from y import z
			}
		}
		f := strings.Fields(strings.ReplaceAll(line, ",", " "))
		switch {
		case len(f) >= 2 && f[0] == "import":
			for _, m := range f[1:] {
				if m == "as" || m == "(" {
					break
				}
				mods = append(mods, m)
			}
		case len(f) >= 4 && f[0] == "from" && f[2] == "import":
			m := strings.TrimLeft(f[1], ".")
			for _, n := range f[3:] {
				if n == "as" || n == "(" || n == "*" {
					break
				}
				if m == "" {
					mods = append(mods, n)
				} else {
					mods = append(mods, m+"."+strings.Trim(n, "()"))
				}
			}
			if m != "" {
				mods = append(mods, m)
			}
		}
	}
	var out []string
	for _, m := range mods {
		parts := strings.Split(strings.Trim(m, "();"), ".")
		for i := range parts {
			if parts[i] == "" || !pyimport.Identifier(parts[i]) {
				parts = parts[:i]
				break
			}
		}
		for i := 1; i <= len(parts); i++ {
			base := filepath.Join(append([]string{dir}, parts[:i]...)...)
			out = append(out, base+".py", filepath.Join(base, "__init__.py"))
		}
	}
	return out
}

// nodeRequires are the files of a JavaScript file's relative requires and
// imports (require('./lib'), import x from '../y.mjs', import('./z')),
// from dir, with the names Node tries for one without an extension.
func nodeRequires(src, dir string) []string {
	var out []string
	for _, spec := range quoted(src, ".") {
		if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") || strings.ContainsAny(spec, "\n$") {
			continue
		}
		// Node tries the name as written first (a file of any extension,
		// or none, loads as JavaScript: red-team-27), then with its
		// extensions.
		p := filepath.Join(dir, spec)
		out = append(out, p)
		for _, ext := range []string{".js", ".mjs", ".cjs", ".json", "/index.js", "/index.mjs"} {
			out = append(out, p+ext)
		}
	}
	return out
}

// quoted are the strings of src in single, double or back quotes that
// start with prefix: each from a quote followed by prefix to the next
// quote of its kind.
func quoted(src, prefix string) []string {
	var out []string
	for _, q := range []string{"'", "\"", "`"} {
		for rest := src; ; {
			i := strings.Index(rest, q+prefix)
			if i < 0 {
				break
			}
			rest = rest[i+1:]
			j := strings.Index(rest, q)
			if j < 0 {
				break
			}
			out = append(out, rest[:j])
			rest = rest[j+1:]
		}
	}
	return out
}

// nodePackages are the package directories of node_modules a JavaScript
// file's requires and imports by name (require('lodash'), import x from
// '@scope/pkg/sub') resolve to, as Node looks them up: node_modules/NAME
// in the file's directory and each above it, up to top; only those there.
// Node's own modules (fs, node:path) resolve to none.
func nodePackages(src, dir, top string) []string {
	var out []string
	for _, spec := range quoted(src, "") {
		name := packageName(spec)
		if name == "" {
			continue
		}
		// Up to the top for a program of the work tree; for one outside it
		// (a tool cache's), to the root, as Node looks (red-team-28).
		if !nodeBuiltin(name) {
			nodeRequire(name, dir, top, &out, 0)
		}
	}
	return out
}

// nodeBuiltin reports whether name is one of Node's own modules, which a
// require loads whatever node_modules holds.
func nodeBuiltin(name string) bool {
	switch name {
	case "assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants", "crypto", "dgram",
		"diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2", "https", "inspector", "module", "net",
		"os", "path", "perf_hooks", "process", "punycode", "querystring", "readline", "repl", "stream", "string_decoder",
		"sys", "timers", "tls", "trace_events", "tty", "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib":
		return true
	}
	return false
}

// nodeRequire adds to out the directory of package name that Node loads
// for a require in dir, with the places nearer dir where it looks first
// and finds nothing now (a package made there would be loaded instead),
// and what the package depends on (nodeDependencies).
func nodeRequire(name, dir, top string, out *[]string, depth int) {
	pkg, nearer := nodeResolve(name, dir, top)
	if pkg != "" && slices.Contains(*out, pkg) || len(*out) >= maxNodePackages {
		return
	}
	if pkg != "" {
		nearer = append(nearer, pkg)
	}
	for _, p := range nearer {
		if !slices.Contains(*out, p) {
			*out = append(*out, p)
		}
	}
	if pkg != "" {
		nodeDependencies(pkg, top, out, depth)
	}
}

// nodeResolve is the directory of package name that Node loads for a
// require in dir: the first node_modules/NAME up from dir (passing over a
// node_modules directory itself, but not a scope's: @scope/node_modules),
// to the top for a program of the work tree, to the root for one outside
// it (a tool cache's: red-team-28); "" when there is none. nearer are the
// places before it (every place, when there is none), where nothing is
// now: a package made there would be loaded.
func nodeResolve(name, dir, top string) (pkg string, nearer []string) {
	outside := !inside(dir, top)
	for d := dir; outside || inside(d, top); d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			p := filepath.Join(d, "node_modules", name)
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p, nearer
			}
			nearer = append(nearer, p)
		}
		if d == top || d == filepath.Dir(d) {
			break
		}
	}
	return "", nearer
}

// maxNodePackages bounds the packages nodeDependencies follows.
const maxNodePackages = 256

// nodeDependencies adds to out the packages the package at pkg depends on
// (its package.json's dependencies, optional and peer ones), as Node
// resolves them from it, and theirs in turn (to maxSourcedDepth): what a
// package the program requires loads runs as much as the program
// (a rewritten dependency of a required package in the top's
// node_modules ran at the user's git status).
func nodeDependencies(pkg, top string, out *[]string, depth int) {
	if depth >= maxSourcedDepth {
		return
	}
	data, err := regfile.ReadFile(filepath.Join(pkg, "package.json"), maxSourcedScript)
	if err != nil {
		return
	}
	var manifest struct {
		Dependencies         map[string]any `json:"dependencies"`
		OptionalDependencies map[string]any `json:"optionalDependencies"`
		PeerDependencies     map[string]any `json:"peerDependencies"`
	}
	if json.Unmarshal(data, &manifest) != nil {
		return
	}
	var names []string
	for _, deps := range []map[string]any{manifest.Dependencies, manifest.OptionalDependencies, manifest.PeerDependencies} {
		for name := range deps {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if packageName(name) != name {
			continue
		}
		nodeRequire(name, pkg, top, out, depth+1)
	}
}

// packageName is the package a bare module specifier names (lodash,
// @scope/pkg from @scope/pkg/sub), or "" for anything else.
func packageName(spec string) string {
	if spec == "" || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "node:") || strings.ContainsAny(spec, " \t\n$:{}()") {
		return ""
	}
	parts := strings.Split(spec, "/")
	name := parts[0]
	if strings.HasPrefix(name, "@") {
		if len(parts) < 2 || parts[1] == "" {
			return ""
		}
		name += "/" + parts[1]
	}
	if name == ".." || strings.Trim(name, ".") == "" {
		return ""
	}
	return name
}
