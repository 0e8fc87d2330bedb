package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestProtectedPathsHoldInEverySubmoduleAndWorktree: the .git/ entries of
// sandbox.protected_paths hold in each git directory kept inside the
// repository's own, where git on the host reads a config and runs hooks
// too: submodules (nested, and with a slash in their name) and linked
// worktrees. Other entries are not repeated.
func TestProtectedPathsHoldInEverySubmoduleAndWorktree(t *testing.T) {
	project := t.TempDir()
	for _, gitDir := range []string{".git", ".git/modules/lib", ".git/modules/lib/modules/deep", ".git/modules/vendor/tool", ".git/worktrees/topic"} {
		if err := os.MkdirAll(filepath.Join(project, gitDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := protectedInGitDirs(project, []string{".git/config", ".git/hooks/", ".claude/"})
	for _, want := range []string{
		".git/config", ".git/hooks/", ".claude/",
		".git/modules/lib/config", ".git/modules/lib/hooks/",
		".git/modules/lib/modules/deep/config", ".git/modules/lib/modules/deep/hooks/",
		".git/modules/vendor/tool/config", ".git/modules/vendor/tool/hooks/",
		".git/worktrees/topic/config", ".git/worktrees/topic/hooks/",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not protected; got %v", want, got)
		}
	}
	for _, p := range got {
		if filepath.Base(filepath.Clean(p)) == ".claude" && p != ".claude/" {
			t.Errorf("%s: only .git/ entries are repeated in the other git directories", p)
		}
	}
	if n := len(got); n != 3+4*2 {
		t.Errorf("got %d protected paths, want %d: %v", n, 3+4*2, got)
	}
}
