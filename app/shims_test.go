package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestShimsResolveToTheInterpreter: a program found on PATH in pyenv's or
// rbenv's shims is the interpreter the manager would choose (its variable,
// a version file in the directory or above it, the global version, a
// prefix naming the latest install); anything else is left as it is.
func TestShimsResolveToTheInterpreter(t *testing.T) {
	home := t.TempDir()
	exe := func(p string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pyenv := filepath.Join(home, ".pyenv")
	exe(filepath.Join(pyenv, "shims", "python3"))
	exe(filepath.Join(home, ".rbenv", "shims", "ruby"))
	py311 := exe(filepath.Join(pyenv, "versions", "3.11.7", "bin", "python3"))
	py39 := exe(filepath.Join(pyenv, "versions", "3.9.18", "bin", "python3"))
	py310 := exe(filepath.Join(pyenv, "versions", "3.10.13", "bin", "python3"))
	rb := exe(filepath.Join(home, ".rbenv", "versions", "3.3.0", "bin", "ruby"))
	write(filepath.Join(pyenv, "version"), "3.11.7\n")
	write(filepath.Join(home, ".rbenv", "version"), "3.3.0\n")
	project := filepath.Join(home, "src", "p")
	write(filepath.Join(project, "sub", ".keep"), "")
	path := "PATH=" + filepath.Join(pyenv, "shims") + ":" + filepath.Join(home, ".rbenv", "shims") + ":/usr/bin"
	env := []string{"HOME=" + home, path}
	for _, c := range []struct {
		name string
		args []string
		dir  string
		env  []string
		file string // a .python-version in the project
		want string
	}{
		{"the global version", []string{"python3", "-c", "x"}, project, env, "", py311},
		{"a version file above", []string{"python3"}, filepath.Join(project, "sub"), env, "3.9.18 # pinned\n", py39},
		{"a prefix is the latest install", []string{"python3"}, project, env, "3.10\n", py310},
		{"the variable first", []string{"python3"}, project, append(env, "PYENV_VERSION=system:3.9.18"), "3.10\n", py39},
		{"system only", []string{"python3"}, project, append(env, "PYENV_VERSION=system"), "", "python3"},
		{"not installed", []string{"python3"}, project, env, "2.7\n", "python3"},
		{"a climbing version", []string{"python3"}, project, env, "../../../usr\n", "python3"},
		{"rbenv", []string{"ruby", "-e", "1"}, project, env, "", rb},
		{"a path is left alone", []string{"./python3"}, project, env, "", "./python3"},
		{"not a shim", []string{"sh"}, project, env, "", "sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(project, ".python-version"))
			if c.file != "" {
				write(filepath.Join(project, ".python-version"), c.file)
			}
			got := resolveShim(c.args, c.dir, c.env)
			if got[0] != c.want || !slices.Equal(got[1:], c.args[1:]) {
				t.Errorf("resolveShim(%q) = %q; want %s with the same arguments", c.args, got, c.want)
			}
		})
	}
}
