//go:build !linux

package nestedgit

import (
	"errors"
	"os"
)

// A safeDir needs Linux's /proc/self/fd: elsewhere the sweep cannot make a
// git directory safe, and says so.
type safeDir struct{ path string }

var errNoSafeDir = errors.New("opening a directory without following symlinks needs Linux")

func openSafeDir(string) (*safeDir, error)                     { return nil, errNoSafeDir }
func (d *safeDir) sub(string) (*safeDir, error)                { return nil, errNoSafeDir }
func (d *safeDir) list() ([]os.DirEntry, error)                { return nil, errNoSafeDir }
func (d *safeDir) close()                                      {}
func (d *safeDir) readNoFollow(string, int64) ([]byte, error)  { return nil, errNoSafeDir }
func (d *safeDir) createNew(string, []byte, os.FileMode) error { return errNoSafeDir }
