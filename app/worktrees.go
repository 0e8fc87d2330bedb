package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/sandbox"
)

// makeWorktrees makes each directory the line's git worktree add commands
// fill (Decision.Worktrees) that lies beside the project's main work tree,
// does not exist yet and may be written (besideMayBeWritten), and makes it
// writable in s: git in the sandbox cannot make a directory outside what
// it may write. It returns the directories it made, for finishWorktrees.
func (a *App) makeWorktrees(s *sandbox.Spec, dirs []string) []string {
	if !s.ProjectWritable || s.Quarantine == "" || len(dirs) == 0 || !topProject(*s) {
		return nil
	}
	// Judged and made where the project's parent really is: a path the
	// guard read through a symlink (the project's own X -> .., which the
	// command can repoint) is not beside it.
	parent := filepath.Dir(s.Project)
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	programs := programDirs(home, os.Getenv("PATH"))
	var made []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || filepath.Dir(d) != parent && filepath.Dir(d) != real {
			continue
		}
		d = filepath.Join(real, filepath.Base(d))
		if slices.Contains(s.ReadWrite, d) || !besideMayBeWritten(d, home, a.Home.Abs(), programs) {
			continue
		}
		if err := os.Mkdir(d, 0o777); err != nil {
			continue // there already (git refuses all but an empty one), or not to be made
		}
		s.ReadWrite = append(s.ReadWrite, d)
		made = append(made, d)
	}
	return made
}

// topProject reports whether worktrees may be beside s's project: it is a
// repository's main work tree (its .git a directory), and no directory the
// command may write or work tree holds it (a repository the command made
// in a tool cache, or a cache itself, or in the project, is not: the directory beside it would
// be the cache's or the project's parent, which it may not write).
func topProject(s sandbox.Spec) bool {
	if st, err := os.Lstat(filepath.Join(s.Project, ".git")); err != nil || !st.IsDir() {
		return false
	}
	for _, w := range append([]string{s.Workspace, s.Tmp}, s.ReadWrite...) {
		if w != "" && slices.ContainsFunc(physicalNames(s.Project), func(p string) bool { return inside(p, w) }) {
			return false
		}
	}
	home, _ := os.UserHomeDir()
	for d := filepath.Dir(s.Project); d != "/" && d != home && d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return false
		}
	}
	return true
}

// finishWorktrees looks at each directory makeWorktrees made, after the
// run. One left empty (git made no worktree there) is left to Exec, which
// removes it. In one that
// is not a linked worktree of the project, named back both ways
// (nestedgit.Beside), git on the host would take its .git for a repository
// the command chose, and run its configuration: whatever is named .git
// there goes to warden's quarantine (it is removed where it cannot be
// moved). It returns the run's warnings.
func (a *App) finishWorktrees(s sandbox.Spec, made []string) []string {
	if len(made) == 0 {
		return nil
	}
	beside := nestedgit.Beside(s.Project)
	var warn []string
	for _, d := range made {
		if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
			continue
		}
		if slices.Contains(beside, d) {
			continue
		}
		dotGit := filepath.Join(d, ".git")
		if _, err := os.Lstat(dotGit); err != nil {
			continue
		}
		dst := filepath.Join(s.Quarantine, a.Now().UTC().Format("20060102T150405.000000000Z")+"-"+strings.ReplaceAll(strings.TrimPrefix(dotGit, "/"), "/", "_"))
		if err := os.MkdirAll(s.Quarantine, 0o700); err == nil && os.Rename(dotGit, dst) == nil {
			warn = append(warn, fmt.Sprintf("the command left %s that is not the .git of a worktree git made there; git on the host would use it there, so it was moved to %s", dotGit, dst))
			continue
		}
		if err := os.Remove(dotGit); err != nil {
			warn = append(warn, fmt.Sprintf("the command left %s that is not the .git of a worktree git made there, and it could not be removed: %v", dotGit, err))
			continue
		}
		warn = append(warn, fmt.Sprintf("the command left %s that is not the .git of a worktree git made there; git on the host would use it there, so it was removed", dotGit))
	}
	return warn
}

// removedWorktrees removes the directory of each worktree beside project
// (of before) that git worktree remove emptied but could not remove
// itself (a mount point under it, or no right to remove it where the line
// could not run in a sandbox of its own), and git stops there, after
// deleting its worktree's registration. Left behind, the empty directory
// would keep a later git worktree add from having it made again. Only an
// empty directory whose worktree git no longer lists is removed.
func removedWorktrees(project string, before []string) {
	if len(before) == 0 {
		return
	}
	now := nestedgit.Beside(project)
	for _, wt := range before {
		if slices.Contains(now, wt) {
			continue
		}
		if entries, err := os.ReadDir(wt); err == nil && len(entries) == 0 {
			_ = os.Remove(wt)
		}
	}
}
