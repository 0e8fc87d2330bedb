package fsguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDeniedToReadKeepsNarrowerDenials: a public system file gives way
// only to a denied path that holds a whole system directory (/etc/**); one
// the user denied by name or by a pattern of its own (/etc/passwd,
// /etc/pass*, **/passwd) stays denied to read, as the sandbox masks it.
func TestDeniedToReadKeepsNarrowerDenials(t *testing.T) {
	const public = "/etc/passwd"
	fi, err := os.Stat(public)
	if err != nil {
		t.Skipf("%s is not here (%v): this system does not keep its users in /etc", public, err)
	}
	if fi.Mode().Perm()&0o004 == 0 {
		t.Skipf("%s is not readable by others here", public)
	}
	w := newWorld(t)
	for _, extra := range []string{"", "/etc/passwd", "/etc/pass*", "/etc/**/passwd", "**/passwd", "/**"} {
		denied := append([]string(nil), DefaultDenied...)
		if extra != "" {
			denied = append(denied, extra)
		}
		g, err := New(Policy{Workspace: w.workspace, Denied: denied, WardenHome: w.wardenHome, UserHome: w.home})
		if err != nil {
			t.Fatal(err)
		}
		_, got := g.DeniedToRead(public, "")
		if want := extra != "" && extra != "/**"; got != want {
			t.Errorf("with %q also denied, DeniedToRead(%s) denied = %v, want %v", extra, public, got, want)
		}
	}
}

// TestDeniedToReadDirectory: a directory is read whole (grep -r, tar, cp
// -r) or through a glob (cat /etc/ssh/*), so it is public only when
// everything in it is: /etc, which holds /etc/shadow, and /etc/ssl, which
// holds the private keys' directory, stay denied; a small directory of
// public files does not.
func TestDeniedToReadDirectory(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ dir, secret string }{
		{"/etc", "/etc/shadow"},
		{"/etc/ssl", "/etc/ssl/private"},
	} {
		fi, err := os.Stat(c.secret)
		if err != nil || fi.Mode().Perm()&0o004 != 0 {
			t.Logf("%s is not here or every user may read it: %s not checked", c.secret, c.dir)
			continue
		}
		if _, denied := w.g.DeniedToRead(c.dir, ""); !denied {
			t.Errorf("DeniedToRead(%s) = not denied; it holds %s, which not every user may read", c.dir, c.secret)
		}
		if _, denied := w.g.DeniedToRead(c.dir+"/", ""); !denied {
			t.Errorf("DeniedToRead(%s/) = not denied", c.dir)
		}
	}
	for _, dir := range []string{"/usr/share/common-licenses", "/etc/skel"} {
		if !allPublic(t, dir) {
			continue
		}
		if d, denied := w.g.DeniedToRead(dir, ""); denied {
			t.Errorf("DeniedToRead(%s) = %s; every file in it is public", dir, d.Reason)
		}
	}
}

// allPublic reports whether dir exists and holds only files and
// directories every user may read, and symlinks to such files in /usr or
// /etc, a few of them.
func allPublic(t *testing.T, dir string) bool {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > 200 {
			return fs.SkipAll
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !strings.HasPrefix(real, "/usr/") && !strings.HasPrefix(real, "/etc/") || fi.Mode().Perm()&0o004 == 0 || !fi.IsDir() && !fi.Mode().IsRegular() || d.Type()&fs.ModeSymlink != 0 && fi.IsDir() {
			return fs.ErrPermission
		}
		return nil
	})
	if err != nil || n > 200 {
		t.Logf("%s is not here, large, or holds a file not every user may read: not checked", dir)
		return false
	}
	return true
}

// BenchmarkDeniedToReadDirectory: what judging a read of a whole system
// directory costs, walking it: a small public one; /etc, whose walk stops
// at the first file not every user may read; and Go's sources, larger than
// publicTreeMax where they are whole (the walk's worst case).
func BenchmarkDeniedToReadDirectory(b *testing.B) {
	w := newWorld(b)
	for _, dir := range []string{"/usr/share/common-licenses", "/etc", filepath.Join(runtime.GOROOT(), "src")} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		b.Run(dir, func(b *testing.B) {
			for range b.N {
				w.g.DeniedToRead(dir, "")
			}
		})
	}
}

// TestBoundedListingsOfSystemTrees: a listing of names to a fixed depth
// (Glob's "python3*/json/*.py", LS's "*") in a system directory reads only
// the directories its pattern leads into, and is allowed where each of
// them is listable by everyone: a Glob whose literal directory is /usr/lib
// (over the 2,048-entry walk of a whole tree) was refused. A directory
// only root may list (/etc/ssl/private) stays refused, and a search of
// the whole tree (Grep, "**") is judged as before.
func TestBoundedListingsOfSystemTrees(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("who may list a directory is read from its mode bits on Unix")
	}
	w := newWorld(t)
	g, err := New(Policy{Workspace: w.workspace, Denied: DefaultDenied, WardenHome: w.wardenHome, UserHome: w.home})
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := os.ReadDir("/usr/lib")
	if len(libs) < 10 {
		t.Skipf("/usr/lib holds %d entries here; the test needs a real system tree", len(libs))
	}
	for _, c := range []struct {
		pattern string
		want    string
	}{
		{"/usr/lib/*/*.so", "fs.public_system"},
		{"/usr/share/*/copyright", "fs.public_system"},
		{"/usr/lib/*", "fs.public_system"},
		{"/usr/lib/**/*.so", "fs.denied"},
		// The system trees' own top (agent-shapes-12: a Glob of
		// *-release in /etc, LS of /etc and of /usr were refused as
		// holding the denied /etc/** they list).
		{"/etc/*-release", "fs.public_system"},
		{"/etc/*", "fs.public_system"},
		{"/usr/*", "fs.public_system"},
		{"/etc/**", "fs.denied"},
	} {
		if d := g.Decide(List, c.pattern, w.project); d.Rule != c.want {
			t.Errorf("Decide(list, %s) = %s %s (%s); want %s", c.pattern, d.Verdict, d.Rule, d.Reason, c.want)
		}
	}
	if fi, err := os.Stat("/etc/ssl/private"); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
		for _, p := range []string{"/etc/ssl/private/*", "/etc/ssl/*/*"} {
			if d := g.Decide(List, p, w.project); d.Rule != "fs.denied" {
				t.Errorf("Decide(list, %s) = %s %s; want fs.denied (/etc/ssl/private is not listable by others)", p, d.Verdict, d.Rule)
			}
		}
	}
}
