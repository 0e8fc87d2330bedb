package fstools

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// searchTree builds a tree for Search below a new root and returns the root.
// Outside the root, secret.txt holds outsideSecret, which also matches the
// patterns used.
func searchTree(t *testing.T) (root, outside string) {
	t.Helper()
	root, outside = newDirs(t)
	writeFile(t, filepath.Join(root, "b.txt"), "no\nneedle one\nnothing\r\nneedle two\r\n")
	writeFile(t, filepath.Join(root, "a", "z.go"), "package z // needle\n")
	writeFile(t, filepath.Join(root, "a", "deep", "c.txt"), "needle deep")
	writeFile(t, filepath.Join(root, "bin.dat"), "needle\x00binary\n")
	writeFile(t, filepath.Join(root, "late-nul.txt"), strings.Repeat("x", binarySniffLen)+"\x00needle late\n")
	symlink(t, outside, filepath.Join(root, "out-abs"))
	relOut, err := filepath.Rel(root, outside)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, relOut, filepath.Join(root, "out-rel"))
	symlink(t, filepath.Join(relOut, "secret.txt"), filepath.Join(root, "out-file"))
	symlink(t, "a", filepath.Join(root, "in-dir")) // inside, but Search does not descend into symlinks
	symlink(t, "b.txt", filepath.Join(root, "in-file"))
	return root, outside
}

func formatMatches(ms []Match) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text)
	}
	return strings.Join(s, "\n")
}

func TestSearch(t *testing.T) {
	root, _ := searchTree(t)
	pattern := regexp.MustCompile(`needle|` + outsideSecret)
	cases := []struct {
		name       string
		dir        string
		lim        Limits
		want       string
		truncated  bool
		wantErrMsg string
	}{
		{
			name: "whole tree", dir: ".",
			// bin.dat is binary; late-nul.txt has its NUL after the first
			// 8 KiB and is searched; no symlink is followed.
			want: "a/deep/c.txt:1:needle deep\na/z.go:1:package z // needle\nb.txt:2:needle one\nb.txt:4:needle two\nlate-nul.txt:1:" +
				strings.Repeat("x", MaxMatchText),
		},
		{name: "subdirectory", dir: "a", want: "a/deep/c.txt:1:needle deep\na/z.go:1:package z // needle"},
		{name: "one file", dir: "b.txt", want: "b.txt:2:needle one\nb.txt:4:needle two"},
		{name: "start at a symlink to an inside dir", dir: "in-dir", want: "in-dir/deep/c.txt:1:needle deep\nin-dir/z.go:1:package z // needle"},
		{name: "binary file", dir: "bin.dat", want: ""},
		{name: "truncated", dir: ".", lim: Limits{MaxResults: 3}, truncated: true,
			want: "a/deep/c.txt:1:needle deep\na/z.go:1:package z // needle\nb.txt:2:needle one"},
		{name: "exactly at the cap", dir: "a", lim: Limits{MaxResults: 2},
			want: "a/deep/c.txt:1:needle deep\na/z.go:1:package z // needle"},
		{name: "large file skipped", dir: ".", lim: Limits{MaxSearchFileBytes: 1000},
			want: "a/deep/c.txt:1:needle deep\na/z.go:1:package z // needle\nb.txt:2:needle one\nb.txt:4:needle two"},
		{name: "start at an absolute symlink out", dir: "out-abs", wantErrMsg: `"out-abs" leads outside the root`},
		{name: "start at a relative symlink out", dir: "out-rel", wantErrMsg: `"out-rel" leads outside the root`},
		{name: "start at a symlink to an outside file", dir: "out-file", wantErrMsg: `"out-file" leads outside the root`},
		{name: "start outside", dir: "..", wantErrMsg: `".." leaves the root`},
		{name: "missing", dir: "nope", wantErrMsg: `"nope" does not exist`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := openRoot(t, root, c.lim)
			ms, truncated, err := r.Search(c.dir, pattern, nil)
			if c.wantErrMsg != "" {
				if !errorMatches(err, c.wantErrMsg) {
					t.Errorf("Search(%q) error = %v, want %q", c.dir, err, c.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Search(%q) error = %v", c.dir, err)
			}
			if got := formatMatches(ms); got != c.want || truncated != c.truncated {
				t.Errorf("Search(%q) =\n%s\ntruncated %v; want\n%s\ntruncated %v", c.dir, got, truncated, c.want, c.truncated)
			}
			for _, m := range ms {
				if strings.Contains(m.Text, outsideSecret) {
					t.Errorf("Search(%q) returned the outside secret in %s", c.dir, m.Path)
				}
			}
		})
	}
	r := openRoot(t, root, Limits{})
	if _, _, err := r.Search(".", nil, nil); !errorMatches(err, "no pattern") {
		t.Errorf("Search with a nil pattern: %v", err)
	}
}

func TestCutLine(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want int // length of the result
	}{
		{"short", "abc", 3},
		{"at the cap", strings.Repeat("a", MaxMatchText), MaxMatchText},
		{"over the cap", strings.Repeat("a", MaxMatchText+10), MaxMatchText},
		{"two-byte rune across the cap", strings.Repeat("a", MaxMatchText-1) + "é", MaxMatchText - 1},
		{"four-byte rune across the cap", strings.Repeat("a", MaxMatchText-2) + "😀", MaxMatchText - 2},
		{"rune ends at the cap", strings.Repeat("a", MaxMatchText-2) + "é" + "b", MaxMatchText},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := cutLine([]byte(c.in))
			if len(got) != c.want || !strings.HasPrefix(c.in, got) {
				t.Errorf("cutLine(%d bytes) = %d bytes, want %d", len(c.in), len(got), c.want)
			}
		})
	}
}

// TestSearchSkip checks that the caller's skip function leaves out whole
// directories and single files, and is asked before anything is read.
func TestSearchSkip(t *testing.T) {
	root, _ := searchTree(t)
	r := openRoot(t, root, Limits{})
	var asked []string
	skip := func(rel string, isDir bool) bool {
		asked = append(asked, rel)
		return rel == "a/deep" || rel == "b.txt"
	}
	ms, _, err := r.Search(".", regexp.MustCompile("needle"), skip)
	if err != nil {
		t.Fatal(err)
	}
	got := formatMatches(ms)
	if !strings.Contains(got, "a/z.go:1:") || strings.Contains(got, "a/deep/") || strings.Contains(got, "b.txt") {
		t.Fatalf("matches with a/deep and b.txt skipped:\n%s", got)
	}
	for _, a := range asked {
		if strings.HasPrefix(a, "a/deep/") {
			t.Fatalf("skip was asked about %s inside a skipped directory", a)
		}
	}
}
