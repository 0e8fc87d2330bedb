package fsguard

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// countingLinks counts the questions the system is asked.
type countingLinks struct {
	inner links
	n     int
}

func (c *countingLinks) lstat(name string) (os.FileMode, error) {
	c.n++
	return c.inner.lstat(name)
}

func (c *countingLinks) readlink(name string) (string, error) {
	c.n++
	return c.inner.readlink(name)
}

// TestMemoLinksResolvesAsTheSystem resolves paths through a tree of
// directories, files and symlinks (absolute, relative, climbing, looping,
// dangling) both ways: memoLinks must give exactly what asking the system
// gives, for every path.
func TestMemoLinksResolvesAsTheSystem(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("real/deep/er")
	mk("many")
	for i := range 12 {
		switch i % 4 {
		case 0:
			mk(fmt.Sprintf("many/d%d/sub", i))
		case 1:
			ln(filepath.Join(root, "real"), fmt.Sprintf("many/abs%d", i))
		case 2:
			ln("../real/deep", fmt.Sprintf("many/rel%d", i))
		case 3:
			if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("many/f%d", i)), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	ln("loop2", "many/loop1")
	ln("loop1", "many/loop2")
	ln("nowhere/at/all", "many/dangling")
	ln("..", "many/up")
	var paths []string
	for i := range 12 {
		for _, name := range []string{"d%d", "d%d/sub", "d%d/sub/x", "abs%d", "abs%d/deep", "abs%d/deep/er/x", "rel%d", "rel%d/er",
			"f%d", "f%d/below", "missing%d", "missing%d/below/more"} {
			paths = append(paths, filepath.Join(root, "many", fmt.Sprintf(name, i)))
		}
	}
	for _, p := range []string{"many/loop1/x", "many/dangling/y", "many/up/real/deep", "many/up/many/abs1/deep", "gone/a/b", "real/deep/er"} {
		paths = append(paths, filepath.Join(root, p))
	}
	sys := &countingLinks{inner: osLinks{}}
	memo := newMemoLinks(paths)
	memoSys := &countingLinks{inner: osLinks{}}
	memo.sys = memoSys
	for _, p := range paths {
		want, wantErr := resolveWith(p, sys)
		got, gotErr := resolveWith(p, memo)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("memoLinks resolves %s to %+v, %v; the system to %+v, %v", p, got, gotErr, want, wantErr)
		}
		got, gotErr = memo.resolve(p)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("memoLinks.resolve(%s) from its directory = %+v, %v; the system resolves %+v, %v", p, got, gotErr, want, wantErr)
		}
	}
	if calls := memoSys.n + memo.listings; calls*4 > sys.n {
		t.Errorf("memoLinks made %d calls, asking each path alone %d: want under a quarter", calls, sys.n)
	}
}

// TestCompileCallsPerDirectory compiles 1,000 rules under one directory that
// exists and 1,000 under one that does not: the system is asked a few
// questions, not one or more per rule.
func TestCompileCallsPerDirectory(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 1000 {
		if err := os.MkdirAll(filepath.Join(root, "projects", fmt.Sprintf("p%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(root, "projects", fmt.Sprintf("p%d", i)), filepath.Join(root, "absent", fmt.Sprintf("p%d", i)))
	}
	m := newMemoLinks(paths)
	sys := &countingLinks{inner: osLinks{}}
	m.sys = sys
	for _, p := range paths {
		r, err := m.resolve(p)
		if err != nil || r.path != p {
			t.Fatalf("resolve %s = %+v, %v", p, r, err)
		}
	}
	// One lstat per component above the rules' directories, one listing of
	// projects, one lstat of the absent directory.
	if calls := sys.n + m.listings; calls > 20 {
		t.Errorf("resolving 2,000 rule directories made %d filesystem calls (%d lstat/readlink, %d listings); want a few per directory holding them",
			calls, sys.n, m.listings)
	}
}

func TestSplitPatternAsDoublestar(t *testing.T) {
	for _, p := range []string{"", "/", "/a", "/a/b", "/a/b/**", "/a/*/b", "a", "a/b", "**", "**/x", "/a/b?/c", "/a/[bc]/d",
		"/a/{b,c}/d", "/a\\*b/c/*", "/a/b\\/c/**", "/a/b/c.txt", "~/x/**", "/a//b/*"} {
		wantBase, wantRest := doublestar.SplitPattern(p)
		if base, rest := splitPattern(p); base != wantBase || rest != wantRest {
			t.Errorf("splitPattern(%q) = %q, %q; doublestar says %q, %q", p, base, rest, wantBase, wantRest)
		}
	}
}
