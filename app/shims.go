package app

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A version manager's shim (pyenv's python3, rbenv's ruby) is a shell
// script that forks to find which interpreter to run: under a profile that
// runs no new process (guard's no_spawn) it cannot start, so code the
// guard finds suspicious could never run there on a machine whose python3
// is pyenv's. For such a run warden names the interpreter the shim would
// have chosen, found the way the manager finds it (its version variable,
// the version file in the directory or one above it, the global version),
// by reading files only: nothing of the manager runs. Which interpreter is
// chosen changes nothing the sandbox holds.

// shimManager is a version manager whose shims resolve this way.
type shimManager struct {
	rootVar, defaultRoot string // PYENV_ROOT, ~/.pyenv
	versionVar, file     string // PYENV_VERSION, .python-version
}

var shimManagers = []shimManager{
	{"PYENV_ROOT", ".pyenv", "PYENV_VERSION", ".python-version"},
	{"RBENV_ROOT", ".rbenv", "RBENV_VERSION", ".ruby-version"},
}

// resolveShim returns args with its program replaced by the interpreter a
// version manager's shim would run, when the program found on env's PATH
// is such a shim and the interpreter is there; args as they are otherwise.
func resolveShim(args []string, dir string, env []string) []string {
	if len(args) == 0 || strings.Contains(args[0], "/") {
		return args
	}
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	prog := ""
	var shims string
	for _, d := range filepath.SplitList(get("PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		if st, err := os.Stat(filepath.Join(d, args[0])); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			prog, shims = filepath.Join(d, args[0]), filepath.Clean(d)
			break
		}
	}
	if prog == "" {
		return args
	}
	for _, m := range shimManagers {
		root := get(m.rootVar)
		if root == "" && home != "" {
			root = filepath.Join(home, m.defaultRoot)
		}
		if root == "" || shims != filepath.Join(filepath.Clean(root), "shims") {
			continue
		}
		for _, v := range m.versions(get(m.versionVar), dir, root) {
			if v == "system" {
				continue
			}
			if p := installed(root, v, args[0]); p != "" {
				return append([]string{p}, args[1:]...)
			}
		}
		return args
	}
	return args
}

// versions are the versions the manager would try, in order: its
// variable's (colon-separated), else the first version file found from dir
// upwards, else the root's global version file.
func (m shimManager) versions(fromVar, dir, root string) []string {
	if fromVar != "" {
		return strings.Split(fromVar, ":")
	}
	if filepath.IsAbs(dir) {
		for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
			if vs := versionFile(filepath.Join(d, m.file)); len(vs) > 0 {
				return vs
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return versionFile(filepath.Join(root, "version"))
}

// versionFile reads a version file: its words, comments left out.
func versionFile(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 4096 {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		out = append(out, strings.Fields(line)...)
	}
	return out
}

// installed is the program of version v under the manager's root, v
// itself or, as pyenv resolves a prefix ("3.11"), the latest installed
// version it is a prefix of; "" when there is none.
func installed(root, v, prog string) string {
	if v == "" || strings.Contains(v, "/") || v == "." || v == ".." {
		return ""
	}
	versions := filepath.Join(root, "versions")
	exe := func(name string) string {
		p := filepath.Join(versions, name, "bin", prog)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
		return ""
	}
	if p := exe(v); p != "" {
		return p
	}
	entries, err := os.ReadDir(versions)
	if err != nil {
		return ""
	}
	var matches []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), v+".") {
			matches = append(matches, e.Name())
		}
	}
	slices.SortFunc(matches, compareVersions)
	for i := len(matches) - 1; i >= 0; i-- {
		if p := exe(matches[i]); p != "" {
			return p
		}
	}
	return ""
}

// compareVersions orders dotted versions by their numeric parts (3.9 <
// 3.10), then as text.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, xok := number(as[i])
		y, yok := number(bs[i])
		switch {
		case xok && yok && x != y:
			if x < y {
				return -1
			}
			return 1
		case !(xok && yok) && as[i] != bs[i]:
			return strings.Compare(as[i], bs[i])
		}
	}
	return len(as) - len(bs)
}

func number(s string) (int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false // no sign, no space: only digits
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
