package nestedgit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// seedIndexes are indexes real git wrote (versions 2, 3 and 4, with a
// gitlink, an intent-to-add entry and long shared prefixes), when git is
// installed.
func seedIndexes(f *testing.F) [][]byte {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	var out [][]byte
	for _, v := range []string{"2", "3", "4"} {
		dir := f.TempDir()
		script := `git init -q . && mkdir -p a/b/c && echo x > a/b/c/f && echo y > a/b/c/g && git add a && echo z > n && git add -N n && git init -q a/b/s && git -C a/b/s commit -q --allow-empty -m x && git add a/b/s 2>/dev/null && git update-index --index-version ` + v
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e"}
		if err := cmd.Run(); err != nil {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(dir, ".git", "index")); err == nil {
			out = append(out, data)
		}
	}
	return out
}

// FuzzGitlinks: the index reader never panics, and every path it returns
// is a non-empty name without NUL; a real index seeds it.
func FuzzGitlinks(f *testing.F) {
	for _, d := range seedIndexes(f) {
		f.Add(d, true)
	}
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01"), false)
	f.Fuzz(func(t *testing.T, data []byte, sha1 bool) {
		size := sha256Size
		if sha1 {
			size = sha1Size
		}
		links, err := gitlinks(data, size)
		if err != nil {
			return
		}
		for _, l := range links {
			if l == "" || strings.ContainsRune(l, 0) {
				t.Fatalf("gitlinks returned the path %q", l)
			}
		}
	})
}

// FuzzParseGitfile: never panics; a path it returns is absolute, holds no
// NUL, and is what git reads: the file's start and its end's newlines
// dropped, up to a NUL.
func FuzzParseGitfile(f *testing.F) {
	for _, s := range []string{"gitdir: ../.git/modules/x\n", "gitdir: /abs/path\r\n", "gitdir: \n", "gitdir:x", "gitdir: a\nb", "gitdir: gd \n", "gitdir: a\x00b\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseGitfile(data, "/p/sub")
		if err != nil {
			return
		}
		if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
			t.Fatalf("parseGitfile(%q) = %q: not absolute, or holds a NUL", data, p)
		}
		rel := strings.TrimPrefix(p, "/p/sub/")
		if !bytes.HasPrefix(data, []byte("gitdir: "+rel)) {
			t.Fatalf("parseGitfile(%q) = %q: not what follows \"gitdir: \"", data, p)
		}
	})
}

// TestGitfileReadAsGitReadsIt: the paths git itself takes from .git files
// that are not what it writes (white space kept, a second line, a NUL, a ..
// after a symlink), shown against git: the sweep must find the same git
// directory git enters.
func TestGitfileReadAsGitReadsIt(t *testing.T) {
	needGit(t)
	for _, c := range []struct{ name, gitdir string }{
		{"trailing space", "build/gd "},
		{"trailing tab", "build/gd\t"},
		{"second line", "build/gd\nx"},
		{"dot-dot after a symlink", "lnk/../gd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, project := newProject(t)
			gd := filepath.Join(project, "build", strings.TrimPrefix(strings.Replace(c.gitdir, "lnk/..", "", 1), "build/"))
			if c.gitdir == "lnk/../gd" {
				gd = filepath.Join(project, "build", "gd")
			}
			sh(t, home, project, "mkdir -p build/x && git init -q --bare '"+gd+"' && git --git-dir='"+gd+"' config core.bare false && mkdir sub && ln -s ../build/x sub/lnk")
			dotGit := filepath.Join(project, "sub", ".git")
			target := c.gitdir
			if !strings.HasPrefix(target, "lnk") {
				target = "../" + target
			}
			if err := os.WriteFile(dotGit, []byte("gitdir: "+target+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(gitIn(t, home, filepath.Join(project, "sub"), "rev-parse", "--absolute-git-dir"), "\n")
			got, err := readGitfile(dotGit)
			if err != nil {
				t.Fatalf("readGitfile: %v; git enters %q", err, want)
			}
			if real, _ := filepath.EvalSymlinks(want); got != real && got != want {
				t.Errorf("readGitfile = %q; git enters %q", got, want)
			}
		})
	}
}

// FuzzParseList: never panics; every entry has a key with a dot.
func FuzzParseList(f *testing.F) {
	f.Add([]byte("core.bare\nfalse\x00core.x\x00"))
	f.Add([]byte("a\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := parseList(data)
		if err != nil {
			return
		}
		for _, e := range es {
			if !strings.Contains(e.Key, ".") || e.NoValue && e.Value != "" {
				t.Fatalf("parseList(%q) gave %+v", data, e)
			}
		}
	})
}

// FuzzFormatConfig: what formatConfig writes, git reads back as the same
// entries (the rewritten config of a quarantined repository keeps exactly
// its inert keys). Needs git.
func FuzzFormatConfig(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git is not installed: the property is git's reading of what formatConfig writes")
	}
	f.Add("user.name", `A "B" \ c`, false)
	f.Add("branch.Feature/x.merge", "refs/heads/x\n\t; # y", false)
	f.Add("core.bare", "", true)
	f.Add("remote.a b.url", " lead and trail ", false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, key, value string, noValue bool) {
		if noValue {
			value = ""
		}
		in := []entry{{Key: key, Value: value, NoValue: noValue}}
		data, err := formatConfig(in)
		if err != nil {
			return
		}
		p := filepath.Join(dir, "config")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := readConfig(p)
		if err != nil {
			// Only what git itself refuses to hold (a key git would not
			// list this way) may fail; never a silent change.
			return
		}
		// git lists section and name in lower case.
		want := in[0]
		s, rest, _ := strings.Cut(want.Key, ".")
		if i := strings.LastIndexByte(rest, '.'); i >= 0 {
			want.Key = strings.ToLower(s) + "." + rest[:i] + "." + strings.ToLower(rest[i+1:])
		} else {
			want.Key = strings.ToLower(want.Key)
		}
		if len(back) != 1 || back[0] != want {
			t.Fatalf("formatConfig(%+v) wrote\n%s\nwhich git reads as %+v", in, data, back)
		}
	})
}
