package fstools

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

func TestRel(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root, Limits{})
	cases := []struct {
		name, in string
		want     string // the relative path, or "!" and the exact error message
	}{
		{"plain", "a.txt", "a.txt"},
		{"nested", "a/b/c.txt", "a/b/c.txt"},
		{"dot", ".", "."},
		{"dot slash", "./a", "a"},
		{"trailing slash", "a/b/", "a/b"},
		{"trailing dot", "a/b/.", "a/b"},
		{"double slash", "a//b", "a/b"},
		{"dot-dot inside", "a/../b", "b"},
		{"dot-dot to root", "a/..", "."},
		{"absolute root", root, "."},
		{"absolute root slash", root + "/", "."},
		{"absolute inside", root + "/a/b", "a/b"},
		{"absolute dot-dot inside", root + "/a/../b", "b"},
		{"tilde is a name", "~/x", "~/x"},
		{"spaces", " a b ", " a b "},
		{"parent", "../x", `!"../x" leaves the root ` + root + `; file tools only reach files below it`},
		{"parent after name", "a/../../x", `!"a/../../x" leaves the root ` + root + `; file tools only reach files below it`},
		{"bare dot-dot", "..", `!".." leaves the root ` + root + `; file tools only reach files below it`},
		{"absolute outside", "/etc/passwd", `!"/etc/passwd" is outside the root ` + root + `; file tools only reach files below it`},
		{"absolute sibling prefix", root + "x/a", `!"` + root + `x/a" is outside the root ` + root + `; file tools only reach files below it`},
		{"absolute dot-dot out", root + "/../x", `!"` + root + `/../x" is outside the root ` + root + `; file tools only reach files below it`},
		{"empty", "", "!empty file name"},
		{"NUL", "a\x00b", `!file name "a\x00b" contains a NUL byte`},
		{"invalid UTF-8", "a\xffb", `!file name "a\xffb" is not valid UTF-8`},
		{"too long", strings.Repeat("x", MaxNameLen+1), `!file name "` + strings.Repeat("x", 40) + `"... is 4097 bytes long; the limit is 4096`},
		{"longest", strings.Repeat("x", MaxNameLen), strings.Repeat("x", MaxNameLen)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := r.Rel(c.in)
			if msg, ok := strings.CutPrefix(c.want, "!"); ok {
				var we *warden.Error
				switch {
				case err == nil:
					t.Errorf("Rel(%q) = %q, want error %q", c.in, got, msg)
				case !errors.As(err, &we) || we.Message != msg:
					t.Errorf("Rel(%q) error = %v, want %q", c.in, err, msg)
				case we.Code != warden.EInvalid || we.Hint == "":
					t.Errorf("Rel(%q) error code %s, hint %q; want %s and a hint", c.in, we.Code, we.Hint, warden.EInvalid)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("Rel(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

// TestRelResolvedRoot checks that an absolute name may also use the path the
// root resolves to when it is reached through a symlink.
func TestRelResolvedRoot(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, real, link)
	r := openRoot(t, link, Limits{})
	if r.Dir() != link {
		t.Errorf("Dir() = %q, want %q", r.Dir(), link)
	}
	for _, in := range []string{link + "/a", real + "/a"} {
		if got, err := r.Rel(in); err != nil || got != "a" {
			t.Errorf("Rel(%q) = %q, %v; want %q", in, got, err, "a")
		}
	}
}

func FuzzRel(f *testing.F) {
	root := f.TempDir()
	r := openRoot(f, root, Limits{})
	for _, s := range []string{
		"a", ".", "..", "../a", "a/../..", "a/./b/", "/", root, root + "/a", root + "/../a",
		"/proc/self/root" + root, "a\x00b", "\xff", "//a//b//", "a/b/../../..", "~", "...", "a/...",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, err := r.Rel(name)
		if err != nil {
			return
		}
		if rel == "" || path.Clean(rel) != rel || path.IsAbs(rel) || !utf8.ValidString(rel) || strings.IndexByte(rel, 0) >= 0 {
			t.Fatalf("Rel(%q) = %q: not a clean relative path", name, rel)
		}
		for _, elem := range strings.Split(rel, "/") {
			if elem == ".." {
				t.Fatalf("Rel(%q) = %q has a .. element", name, rel)
			}
		}
		joined := filepath.Join(root, filepath.FromSlash(rel))
		if joined != root && !strings.HasPrefix(joined, root+string(filepath.Separator)) {
			t.Fatalf("Rel(%q) = %q, which joined to the root is %q, outside %q", name, rel, joined, root)
		}
	})
}
