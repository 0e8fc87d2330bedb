package fstools

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/agentwarden/warden"
)

// escapeText is the text of os.Root's unexported error for a path that leaves
// the root: an absolute symlink, or a symlink or ".." that climbs out.
const escapeText = "path escapes from parent"

var (
	escapeOnce sync.Once
	escapeErr  error // os.Root's own escape error value, learnt by learnEscapeError
)

// learnEscapeError captures os.Root's escape error value by asking root for
// "..", which it refuses before making any system call.
func learnEscapeError(root *os.Root) {
	escapeOnce.Do(func() {
		_, err := root.Lstat("..")
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == escapeText {
			escapeErr = pe.Err
		}
	})
}

// isEscape reports whether err is os.Root refusing a path that leaves the root.
func isEscape(err error) bool {
	if escapeErr != nil && errors.Is(err, escapeErr) {
		return true
	}
	// In case the value could not be learnt, fall back on its text.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == escapeText {
			return true
		}
	}
	return false
}

// pathError turns an error from os.Root about name into one a user can act on.
// op says what the tool was doing ("read", "write", ...).
func (r *Root) pathError(op, name string, err error) error {
	var we *warden.Error
	if errors.As(err, &we) {
		return err
	}
	switch {
	case isEscape(err):
		return warden.Errorf(warden.EInvalid, "%q leads outside the root %s: a symlink on the way is absolute or points outside it", name, r.dir).
			WithHint("file tools follow only relative symlinks that stay below the root; use the path of a file inside it").Wrap(err)
	case errors.Is(err, fs.ErrNotExist):
		return warden.Errorf(warden.ENotFound, "%q does not exist in the root %s", name, r.dir).
			WithHint("list its directory to see what is there").Wrap(err)
	case errors.Is(err, syscall.ELOOP):
		return warden.Errorf(warden.EInvalid, "%q goes through too many symlinks (a symlink loop?)", name).
			WithHint("fix or delete the symlinks on the way").Wrap(err)
	case errors.Is(err, syscall.ENOTDIR):
		return warden.Errorf(warden.EInvalid, "%q: a part of the path before the last one is not a directory", name).
			WithHint("list the parent directories to find the file that is in the way").Wrap(err)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return warden.Errorf(warden.EInvalid, "%q is too long for the file system", name).
			WithHint("use shorter names").Wrap(err)
	case errors.Is(err, fs.ErrPermission):
		return warden.Errorf(warden.EInvalid, "cannot %s %q: permission denied", op, name).
			WithHint("the file's owner or mode does not let warden's user do this").Wrap(err)
	default:
		return warden.Errorf(warden.EInternal, "cannot %s %q", op, name).Wrap(err)
	}
}

// errDirOnly is the error for a name that ends in a slash given to a file tool.
func errDirOnly(op, name string) error {
	return warden.Errorf(warden.EInvalid, `%q names a directory (it ends in "/", "." or ".."); %s works on files`, name, op).
		WithHint("give the file's name without a trailing slash")
}

// errIsRoot is the error for a file tool given the root itself.
func (r *Root) errIsRoot(op, name string) error {
	return warden.Errorf(warden.EInvalid, "%q is the root directory %s; %s works on files below it", name, r.dir, op).
		WithHint("name a file inside the root")
}

// errNotRegular is the error for a file tool given something that is not a
// regular file.
func errNotRegular(op, name string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeSymlink != 0:
		what = "a symlink"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	}
	hint := "file tools only " + op + " regular files"
	switch {
	case mode.IsDir():
		hint = "use List to see what the directory holds"
	case mode&fs.ModeSymlink != 0:
		hint = "file tools do not " + op + " through a symlink; name the file it points to"
	}
	return warden.Errorf(warden.EInvalid, "%q is %s; cannot %s it", name, what, op).WithHint(hint)
}
