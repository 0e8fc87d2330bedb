package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestKeepUnderTmpCarriesWritablesWithTheirParent: a writable path inside
// a writable directory carried into the private /tmp is carried with it,
// not mounted again (a mount point cannot be removed: git worktree remove
// of a worktree in a directory the command may remove empty directories
// in); one under a read-only path between them keeps its own mount.
func TestKeepUnderTmpCarriesWritablesWithTheirParent(t *testing.T) {
	root, err := os.MkdirTemp("/tmp", "warden-keep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	for _, d := range []string{"src/wt", "src/proj", "src/ro/inner", "home/p"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	j := func(p string) string { return filepath.Join(root, p) }
	got := keepUnderTmp([]string{j("src/ro"), j("home")}, []string{j("src"), j("src/wt"), j("src/proj"), j("src/ro/inner"), j("home/p")}, j("src/proj"))
	var paths []string
	for _, k := range got {
		paths = append(paths, k.Path)
	}
	want := []string{j("home"), j("home/p"), j("src"), j("src/ro"), j("src/ro/inner")}
	if !slices.Equal(paths, want) {
		t.Errorf("carried %q, want %q", paths, want)
	}
}
