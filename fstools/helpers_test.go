package fstools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// outsideSecret is the content of the file outside the root that no tool may
// ever return.
const outsideSecret = "OUTSIDE-SECRET"

// openRoot opens dir as a root with lim and closes it when the test ends.
func openRoot(t testing.TB, dir string, lim Limits) *Root {
	t.Helper()
	r, err := Open(dir, lim)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// newDirs returns a root directory and a directory outside it, the latter
// holding secret.txt with outsideSecret.
func newDirs(t testing.TB) (root, outside string) {
	t.Helper()
	root, outside = t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), outsideSecret+"\n")
	return root, outside
}

// writeFile creates the file p with content, and its directory.
func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// symlink creates the symlink link pointing to target.
func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// readFile returns the content of p.
func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot describes every file below dir: content, link target or "dir".
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			files[p] = "link:" + target
			return err
		case d.IsDir():
			files[p] = "dir"
		default:
			b, err := os.ReadFile(p)
			files[p] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// errorMatches reports whether err is a *warden.Error whose message (not its
// cause's text) contains want.
func errorMatches(err error, want string) bool {
	var we *warden.Error
	return errors.As(err, &we) && strings.Contains(we.Message, want)
}

// names returns the names of entries, comma-separated.
func names(entries []Entry) string {
	s := make([]string, len(entries))
	for i, e := range entries {
		s[i] = e.Name
	}
	return strings.Join(s, ",")
}
