package nestedgit

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
)

// maxGitfile bounds a .git file read: git's own is one line.
const maxGitfile = 4096

// ErrGitfile is wrapped by every error parseGitfile returns.
var ErrGitfile = errors.New("not a .git file")

// parseGitfile reads the target of a .git file ("gitdir: PATH", as git
// writes for a submodule or a linked worktree) that lies in dir: PATH
// made absolute against dir and cleaned. Like git, it takes the rest of
// the first line after "gitdir: ", with trailing white space removed.
func parseGitfile(data []byte, dir string) (string, error) {
	if len(data) > maxGitfile {
		return "", fmt.Errorf("%w: %d bytes", ErrGitfile, len(data))
	}
	rest, ok := bytes.CutPrefix(data, []byte("gitdir: "))
	if !ok {
		return "", fmt.Errorf("%w: it does not start with \"gitdir: \"", ErrGitfile)
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	rest = bytes.TrimRight(rest, " \t\r\n")
	if len(rest) == 0 || bytes.IndexByte(rest, 0) >= 0 {
		return "", fmt.Errorf("%w: no path", ErrGitfile)
	}
	p := string(rest)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}
