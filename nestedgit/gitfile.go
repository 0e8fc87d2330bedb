package nestedgit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxGitfile bounds a .git file read: git's own is one line.
const maxGitfile = 4096

// ErrGitfile is wrapped by every error parseGitfile returns.
var ErrGitfile = errors.New("not a .git file")

// parseGitfile reads the target of a .git file ("gitdir: PATH", as git
// writes for a submodule or a linked worktree) that lies in dir, exactly
// as git does (read_gitfile_gently): the file must start with "gitdir: ";
// the newlines and carriage returns at its very end are dropped; PATH is
// what follows up to a NUL, spaces, tabs and inner newlines included; a
// relative PATH is appended to dir as it stands, with no cleaning, since
// the kernel resolves its .. after any symlink before it (lnk/../gd): the
// caller resolves the result where it really leads (resolveGitPath).
func parseGitfile(data []byte, dir string) (string, error) {
	if len(data) > maxGitfile {
		return "", fmt.Errorf("%w: %d bytes", ErrGitfile, len(data))
	}
	if !bytes.HasPrefix(data, []byte("gitdir: ")) {
		return "", fmt.Errorf("%w: it does not start with \"gitdir: \"", ErrGitfile)
	}
	n := len(data)
	for n > 0 && (data[n-1] == '\n' || data[n-1] == '\r') {
		n--
	}
	p := data[len("gitdir: "):max(n, len("gitdir: "))]
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if len(p) == 0 {
		return "", fmt.Errorf("%w: no path", ErrGitfile)
	}
	if filepath.IsAbs(string(p)) {
		return string(p), nil
	}
	return dir + "/" + string(p), nil
}

// resolveGitPath is where a path git reads from a .git file or a
// commondir file really leads, as git resolves it (real_path): every
// symlink followed, each .. applied after the symlink before it.
func resolveGitPath(p string) (string, error) {
	return filepath.EvalSymlinks(p)
}

// GitDirs are the git directory git uses in workTree and its common
// directory, found as git finds them: workTree/.git when that is a
// directory (as named), else the directory its .git file names (every
// symlink followed); the common directory is what that one's commondir
// file names (commonDir), else the git directory itself. Nothing is
// checked for trust (CommonOf does that): "" when workTree has no git
// directory.
func GitDirs(workTree string) (gitDir, common string) {
	dotGit := filepath.Join(workTree, ".git")
	st, err := os.Stat(dotGit)
	switch {
	case err != nil:
		return "", ""
	case st.IsDir():
		gitDir = dotGit // by the work tree's name for it
	default:
		if gitDir, err = readGitfile(dotGit); err != nil {
			return "", ""
		}
	}
	if common, ok := commonDir(gitDir); ok {
		return gitDir, common
	}
	return gitDir, gitDir
}

// commonDir is where gitDir's commondir file leads, as git reads it: the
// newlines at its end dropped, relative to the git directory, resolved by
// the kernel; false when there is none (or it is not a regular file, or
// leads nowhere).
func commonDir(gitDir string) (string, bool) {
	data, err := readFile(filepath.Join(gitDir, "commondir"))
	if err != nil || len(data) > maxGitfile {
		return "", false
	}
	c := strings.TrimRight(string(data), "\r\n")
	if !filepath.IsAbs(c) {
		c = gitDir + "/" + c
	}
	c, err = resolveGitPath(c)
	return c, err == nil
}

// WorkTreeOf is the work tree the directory dir (absolute) lies in, as far
// as a project goes: the nearest of dir and the directories above it that
// holds a repository git takes for one (IsRepository), never the root nor
// userHome and never above userHome
// when dir lies below it (a home kept in git, for dotfiles, is no one's
// project); "" when there is none.
func WorkTreeOf(dir, userHome string) string {
	if !filepath.IsAbs(dir) {
		return ""
	}
	home := ""
	if userHome != "" {
		home = filepath.Clean(userHome)
	}
	for d := filepath.Clean(dir); d != "/" && d != home && d != filepath.Dir(d); d = filepath.Dir(d) {
		if IsRepository(d) {
			return d
		}
	}
	return ""
}

// IsRepository reports whether workTree holds a .git that git takes for a
// repository, as git looks for one: a git directory there, or one its
// .git file names, with a HEAD, and objects and refs in its common
// directory. An empty .git, or a .git file leading nowhere, is passed over
// by git on its way up, and so by the callers of WorkTreeOf.
func IsRepository(workTree string) bool {
	gitDir, common := GitDirs(workTree)
	if gitDir == "" {
		return false
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err != nil {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(common, d)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}
