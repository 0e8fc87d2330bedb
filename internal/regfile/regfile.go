// Package regfile opens the files warden keeps in its home (the policy
// file, its caches, the audit key, spool, journal and anchors) so that
// nothing put in one's place can hold a process: a named pipe is opened
// without waiting for its other end, a terminal without becoming the
// controlling one, and only a regular file is returned. A hook held past
// its host's timeout lets the call through, so a file of the home must
// never make a check wait; os.ReadFile waited forever on a pipe and read
// /dev/zero until memory ran out.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular matches the error of Open for a file that is not a regular
// file (see NotRegularError).
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is Open's error for a path that holds something other
// than a regular file (or, without follow, a symlink).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Open opens path with flag (and perm, when flag creates), never waiting,
// and returns the file only when it is a regular file; without follow a
// symlink is refused too (where the platform can refuse it at the open).
// For anything else the error is a *NotRegularError; other errors are the
// open's own, which fs.ErrNotExist and fs.ErrExist match as usual.
func Open(path string, flag int, perm fs.FileMode, follow bool) (*os.File, fs.FileInfo, error) {
	flag |= noBlock
	stat := os.Stat
	if !follow {
		flag |= noFollow
		stat = os.Lstat
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		// A pipe opened for writing with no reader fails (ENXIO), a
		// symlink without follow too (ELOOP), and with O_EXCL anything
		// there: say what is there, when that is the reason.
		if fi, serr := stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path (symlinks followed), refusing
// more than max bytes: Open, then ReadAll.
func ReadFile(path string, max int64) ([]byte, error) {
	f, _, err := Open(path, os.O_RDONLY, 0, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, max)
}

// ErrTooLarge is ReadAll's error for a file past its bound.
var ErrTooLarge = errors.New("larger than it may be")

// ReadAll reads r to its end, refusing (ErrTooLarge) more than max bytes:
// a file that grows while it is read stops there.
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("more than %d bytes: %w", max, ErrTooLarge)
	}
	return data, nil
}

// Kind names what a file of mode m is, for an error: "a directory", "a
// named pipe", "a symlink".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}
