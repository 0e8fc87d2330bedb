package nestedgit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// A work tree whose .git no longer is a git directory (its HEAD renamed,
// its objects moved aside: files the command may write) is not where git's
// search ends: git then asks whether the directory itself is one, a bare
// repository, and obeys its config. A command can so make the project
// root a repository of its own with a HEAD, objects/, refs/ and a config
// that runs a program (core.fsmonitor), which the user's next git status
// runs on the host (red-team-16). No project keeps a HEAD beside objects/
// and refs/ at its root, next to its .git: such a HEAD is moved to the
// quarantine.

// gitDirShape reports whether git would take dir for a git directory: a
// HEAD, and objects/ and refs/ directories or a commondir naming where
// they are.
func gitDirShape(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	if st, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil && st.Mode().IsRegular() {
		return true
	}
	objects, err1 := os.Stat(filepath.Join(dir, "objects"))
	refs, err2 := os.Stat(filepath.Join(dir, "refs"))
	return err1 == nil && err2 == nil && objects.IsDir() && refs.IsDir()
}

// rootAsGitDir moves the project root's HEAD to the quarantine when the
// root has the shape of a git directory beside its own .git, and the
// command could write it.
func (g *Guard) rootAsGitDir(now time.Time) Finding {
	if st, err := os.Lstat(filepath.Join(g.project, ".git")); err != nil || !st.IsDir() || !gitDirShape(g.project) {
		return Finding{}
	}
	real, err := filepath.EvalSymlinks(g.project)
	if err != nil || !g.mayWrite(real) {
		return Finding{}
	}
	head := filepath.Join(real, "HEAD")
	f := Finding{Repo: Repo{GitDir: real, Via: "the project's root, which git takes for a bare repository where its .git is not a git directory", Pointer: head}, Cut: true}
	dst := quarantineDir(g.quarantine, real, now)
	if err := os.MkdirAll(dst, 0o700); err != nil {
		f.Err = err
		return f
	}
	f.Moved = dst
	to := filepath.Join(dst, "HEAD")
	err = os.Rename(head, to)
	if errors.Is(err, syscall.EXDEV) {
		err = moveAcross(head, to)
	}
	if err != nil {
		f.Err = fmt.Errorf("move %s: %w", head, err)
		return f
	}
	note := fmt.Sprintf("warden moved\n\n    %s\n\nhere: beside objects/ and refs/ (or a commondir) at the root of the project, it\nmade git on your machine take the project's directory for a bare repository\nwhenever its .git is not a git directory, and obey the config there, which\na command can write. Check the project's .git (git fsck) and the files HEAD,\nobjects, refs and config at its root. Only if you know why the root holds\nthem, put it back with:\n\n    cp -a %s %s\n",
		head, shellQuote(to), shellQuote(head))
	if err := os.WriteFile(filepath.Join(dst, "RESTORE.txt"), []byte(note), 0o600); err != nil {
		f.Err = err
	}
	return f
}
