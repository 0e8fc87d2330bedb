package nestedgit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxWorktrees bounds the linked worktrees Beside reads.
const maxWorktrees = 64

// Beside lists the linked worktrees of the repository whose main work
// tree is project that lie beside it (in the same directory, as `git
// worktree add ../feature` puts them); nothing from a linked worktree. Each is
// one git itself links both ways, checked without trusting either side:
// the worktree's git directory (COMMON/worktrees/NAME, COMMON the main work
// tree's .git directory) names WT/.git in its gitdir file, and WT/.git is
// a regular file, reached through no symbolic link, that names that same
// git directory back. A directory whose name starts with a dot is never
// one.
//
// A command that can write the project's git directory can register any
// path there, but not write the .git file at that path that names it back:
// the list holds only work trees git made (or the user did) where the
// command could not have.
func Beside(project string) []string {
	parent, err := os.Stat(filepath.Dir(filepath.Clean(project)))
	if err != nil {
		return nil
	}
	return linkedWorktrees(project, func(wt string) bool {
		if strings.HasPrefix(filepath.Base(wt), ".") {
			return false
		}
		st, err := os.Stat(filepath.Dir(wt))
		return err == nil && os.SameFile(st, parent)
	})
}

// Within lists the linked worktrees of the repository whose main work tree
// is project that lie inside it (git worktree add .worktrees/feature),
// each linked both ways as Beside's are.
func Within(project string) []string {
	project = filepath.Clean(project)
	gitDir := filepath.Join(project, ".git")
	return linkedWorktrees(project, func(wt string) bool {
		return strings.HasPrefix(wt, project+"/") && wt != gitDir && !strings.HasPrefix(wt, gitDir+"/")
	})
}

// linkedWorktrees are the work trees of the linked worktrees of the
// repository whose main work tree is project that git links both ways
// (linkedBack) and keep takes.
func linkedWorktrees(project string, keep func(wt string) bool) []string {
	project = filepath.Clean(project)
	if st, err := os.Lstat(filepath.Join(project, ".git")); err != nil || !st.IsDir() {
		// Only from the main work tree: a linked worktree's main work tree
		// (and so the directory beside it) is whatever its .git file names,
		// a repository the command may have made anywhere it can write.
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(project, ".git", "worktrees"))
	if err != nil {
		return nil
	}
	var out []string
	for i, e := range entries {
		if i == maxWorktrees {
			break
		}
		wt, ok := linkedBack(filepath.Join(project, ".git", "worktrees", e.Name()))
		if !ok || wt == project || slices.Contains(out, wt) {
			continue
		}
		if keep(wt) {
			out = append(out, wt)
		}
	}
	return out
}

// linkedBack is the work tree of the linked worktree whose git directory
// is gitDir (COMMON/worktrees/NAME), when that work tree's .git file is a
// regular file on a path of no symbolic link that names gitDir back.
func linkedBack(gitDir string) (string, bool) {
	if filepath.Base(filepath.Dir(gitDir)) != "worktrees" {
		return "", false
	}
	wt := linkedWorkTree(gitDir)
	if wt == "" || !filepath.IsAbs(wt) {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(wt); err != nil || real != wt {
		return "", false
	}
	dotGit := filepath.Join(wt, ".git")
	if st, err := os.Lstat(dotGit); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	named, err := readGitfile(dotGit)
	if err != nil || !sameDir(named, gitDir) {
		return "", false
	}
	return wt, true
}

// sameDir reports whether a and b are the same existing directory.
func sameDir(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil || !sa.IsDir() {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// CommonOf is the common git directory of the repository whose linked
// worktree is project, when git links the two both ways, checked as Beside
// checks: the project's .git is a regular file, reached through no
// symbolic link, that names a git directory COMMON/worktrees/NAME; that
// directory's gitdir names the project's .git back and its commondir names
// COMMON; and COMMON is a directory reached through no symbolic link: the
// main work tree's .git, or a bare repository. Anything else gives "".
//
// Both links cannot be forged by a command that cannot write COMMON: the
// linked worktree's own files are the project's, but the gitdir file that
// names it back lies in COMMON.
func CommonOf(project string) string {
	project = filepath.Clean(project)
	// The .git first: a main work tree (the common case, every command's
	// path) ends here, before the project's path is resolved.
	if st, err := os.Lstat(filepath.Join(project, ".git")); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	if real, err := filepath.EvalSymlinks(project); err != nil || real != project {
		return ""
	}
	gitDir, common := GitDirs(project)
	if gitDir == "" || filepath.Base(filepath.Dir(gitDir)) != "worktrees" || !sameDir(common, filepath.Dir(filepath.Dir(gitDir))) {
		return ""
	}
	if wt, ok := linkedBack(gitDir); !ok || wt != project {
		return ""
	}
	common = filepath.Dir(filepath.Dir(gitDir))
	if st, err := os.Lstat(common); err != nil || !st.IsDir() {
		return ""
	}
	return common
}
