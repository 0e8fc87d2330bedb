package nestedgit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxWorktrees bounds the linked worktrees Beside reads.
const maxWorktrees = 64

// Beside lists the other work trees of the repository whose work tree is
// project that lie beside its main work tree (in the same directory, as
// `git worktree add ../feature` puts them): the main work tree itself when
// project is a linked one beside it or in it, and each linked worktree but
// project. Each is
// one git itself links both ways, checked without trusting either side:
// the worktree's git directory (COMMON/worktrees/NAME, COMMON the main work
// tree's .git directory) names WT/.git in its gitdir file, and WT/.git is
// a regular file, reached through no symbolic link, that names that same
// git directory back. A directory whose name starts with a dot is never
// one. Nothing is returned for a project that is no work tree, whose
// repository is bare, or whose own link does not check out.
//
// A command that can write the project's git directory can register any
// path there, but not write the .git file at that path that names it back:
// the list holds only work trees git made (or the user did) where the
// command could not have.
func Beside(project string) []string {
	project = filepath.Clean(project)
	main, common, ok := mainWorkTree(project)
	if !ok {
		return nil
	}
	parent, err := os.Stat(filepath.Dir(main))
	if err != nil {
		return nil
	}
	beside := func(wt string) bool {
		if strings.HasPrefix(filepath.Base(wt), ".") {
			return false
		}
		st, err := os.Stat(filepath.Dir(wt))
		return err == nil && os.SameFile(st, parent)
	}
	var out []string
	if main != project && (beside(project) || within(project, main)) {
		out = append(out, main)
	}
	entries, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return out
	}
	for i, e := range entries {
		if i == maxWorktrees {
			break
		}
		gitDir := filepath.Join(common, "worktrees", e.Name())
		wt, ok := linkedBack(gitDir)
		if ok && wt != project && wt != main && beside(wt) && !slices.Contains(out, wt) {
			out = append(out, wt)
		}
	}
	return out
}

// mainWorkTree is the main work tree of the repository project is a work
// tree of, and its git directory (the repository's common directory).
func mainWorkTree(project string) (main, common string, ok bool) {
	st, err := os.Lstat(filepath.Join(project, ".git"))
	switch {
	case err != nil:
		return "", "", false
	case st.IsDir():
		return project, filepath.Join(project, ".git"), true
	case !st.Mode().IsRegular():
		return "", "", false
	}
	gitDir, err := readGitfile(filepath.Join(project, ".git"))
	if err != nil {
		return "", "", false
	}
	if wt, ok := linkedBack(gitDir); !ok || !sameDir(wt, project) {
		return "", "", false
	}
	common = filepath.Dir(filepath.Dir(gitDir)) // COMMON/worktrees/NAME
	if filepath.Base(common) != ".git" {
		return "", "", false
	}
	main = filepath.Dir(common)
	if st, err := os.Lstat(common); err != nil || !st.IsDir() {
		return "", "", false
	}
	return main, common, true
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

// MainWorkTree is the main work tree of the repository whose work tree is
// project (project itself, or the one a linked worktree's checked .git
// file leads to); false when there is none.
func MainWorkTree(project string) (string, bool) {
	main, _, ok := mainWorkTree(filepath.Clean(project))
	return main, ok
}
