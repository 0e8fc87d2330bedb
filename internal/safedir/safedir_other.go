//go:build !linux

package safedir

import (
	"errors"
	"os"
)

// A Dir needs Linux's /proc/self/fd: elsewhere nothing can be opened, and
// the callers say so.
type Dir struct{}

var errNoSafeDir = errors.New("opening a directory without following symlinks needs Linux")

func Open(string) (*Dir, error)                            { return nil, errNoSafeDir }
func (d *Dir) Path() string                                { return "" }
func (d *Dir) Name() string                                { return "" }
func (d *Dir) Sub(string) (*Dir, error)                    { return nil, errNoSafeDir }
func (d *Dir) SubListable(string) (*Dir, error)            { return nil, errNoSafeDir }
func (d *Dir) SubWritable(string) (*Dir, error)            { return nil, errNoSafeDir }
func (d *Dir) List() ([]os.DirEntry, error)                { return nil, errNoSafeDir }
func (d *Dir) Close()                                      {}
func (d *Dir) ReadNoFollow(string, int64) ([]byte, error)  { return nil, errNoSafeDir }
func (d *Dir) CreateNew(string, []byte, os.FileMode) error { return errNoSafeDir }
