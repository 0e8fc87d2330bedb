package fstools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentwarden/warden"
)

// Default limits, used for the zero fields of Limits.
const (
	DefaultMaxRead            = 10 << 20 // 10 MiB
	DefaultMaxWrite           = 10 << 20 // 10 MiB
	DefaultMaxEntries         = 10_000
	DefaultMaxResults         = 1_000
	DefaultMaxSearchFileBytes = 10 << 20 // 10 MiB
)

// Limits caps what one call may read, write or return. A zero field takes its
// default (the Default constants); a negative field is an error in Open.
type Limits struct {
	MaxRead            int64 // most bytes Read returns
	MaxWrite           int64 // most bytes a file may hold after Write, Append or Patch
	MaxEntries         int   // most entries List returns
	MaxResults         int   // most matches Search returns
	MaxSearchFileBytes int64 // Search skips larger files
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() (Limits, error) {
	if l.MaxRead < 0 || l.MaxWrite < 0 || l.MaxEntries < 0 || l.MaxResults < 0 || l.MaxSearchFileBytes < 0 {
		return l, warden.Errorf(warden.EInvalid, "file tool limits must not be negative: %+v", l).
			WithHint("leave a limit at zero to take its default")
	}
	if l.MaxRead == 0 {
		l.MaxRead = DefaultMaxRead
	}
	if l.MaxWrite == 0 {
		l.MaxWrite = DefaultMaxWrite
	}
	if l.MaxEntries == 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxResults == 0 {
		l.MaxResults = DefaultMaxResults
	}
	if l.MaxSearchFileBytes == 0 {
		l.MaxSearchFileBytes = DefaultMaxSearchFileBytes
	}
	return l, nil
}

// Root is an open root directory plus the limits of the tools working in it.
// It is safe for concurrent use. The zero Root is not usable; call Open.
type Root struct {
	root *os.Root
	dir  string // absolute, clean: what Dir returns
	real string // dir with symlinks resolved when opened; also accepted in absolute names
	lim  Limits
}

// Open opens dir, which must exist and be a directory, as the root of the file
// tools. Zero fields of lim take their defaults. The directory is held open:
// if it is later moved, the tools keep working in it at its new place.
func Open(dir string, lim Limits) (*Root, error) {
	if dir == "" {
		return nil, warden.Errorf(warden.EInvalid, "no root directory given for the file tools").
			WithHint("name the directory the agent may work in")
	}
	lim, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "cannot make the root %q absolute", dir).Wrap(err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, warden.Errorf(warden.ENotFound, "root directory %s does not exist", abs).
				WithHint("create it first, or name an existing directory").Wrap(err)
		case errors.Is(err, fs.ErrPermission):
			return nil, warden.Errorf(warden.EInvalid, "root directory %s cannot be opened: permission denied", abs).
				WithHint("run as a user that may read the directory").Wrap(err)
		default:
			return nil, warden.Errorf(warden.EInvalid, "root %s cannot be opened as a directory", abs).
				WithHint("name an existing directory, not a file").Wrap(err)
		}
	}
	learnEscapeError(root)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	return &Root{root: root, dir: abs, real: real, lim: lim}, nil
}

// Close releases the root directory. The tools fail after Close.
func (r *Root) Close() error { return r.root.Close() }

// Dir returns the absolute path of the root directory as given to Open.
func (r *Root) Dir() string { return r.dir }

// Limits returns the limits in force, defaults filled in.
func (r *Root) Limits() Limits { return r.lim }
