package fsguard

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// maxLinks is how many symlinks one resolution may follow, as Linux's
// MAXSYMLINKS: more is a loop.
const maxLinks = 40

// errLoop is returned for a path whose symlinks do not end.
var errLoop = errors.New("too many levels of symbolic links")

// resolved is a path after physical resolution.
type resolved struct {
	path string // absolute and clean, every existing symlink followed
	// viaProc is set when resolution read a link below /proc: such links
	// describe warden's own process (/proc/self, /dev/fd), not the agent's.
	viaProc bool
	// missing is set when some component did not exist; the rest was kept
	// as written.
	missing bool
	links   int // symlinks followed
}

// resolve follows every symlink in abs (absolute and clean) the way the
// kernel would, component by component, so that ".." after a symlink climbs
// from where the link really points. Components that do not exist, or are not
// directories, or cannot be read, are kept as written: a write may create
// them, and the kernel would stop there anyway. A loop is errLoop; a name too
// long for the system is an error.
func resolve(abs string) (resolved, error) { return resolveWith(abs, osLinks{}) }

// RealPath is where the absolute path abs really leads, resolved as the
// kernel would open it (resolve): a symlink at the end is followed even
// when it leads to a name that does not exist yet, as a write through it
// would create that name.
func RealPath(abs string) (string, error) {
	r, err := resolve(abs)
	return r.path, err
}

// links is what resolution asks the filesystem: the type of a name (not
// following it) and a symlink's target.
type links interface {
	lstat(name string) (fs.FileMode, error)
	readlink(name string) (string, error)
}

// osLinks asks the system each time.
type osLinks struct{}

func (osLinks) lstat(name string) (fs.FileMode, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return 0, err
	}
	return fi.Mode(), nil
}

func (osLinks) readlink(name string) (string, error) { return os.Readlink(name) }

func resolveWith(abs string, fsys links) (resolved, error) {
	return resolveFrom(resolved{path: "/"}, abs, fsys)
}

// resolveFrom goes on resolving rest (relative to from.path, or absolute)
// from a resolution already made: resolving a directory and then a name in
// it is resolving the whole path.
func resolveFrom(from resolved, rest string, fsys links) (resolved, error) {
	r := from
	cur := from.path
	if strings.HasPrefix(rest, "/") {
		cur = "/"
	}
	rest = strings.TrimPrefix(rest, "/")
	links := from.links
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, "/")
		switch name {
		case "", ".":
			continue
		case "..":
			cur = parent(cur)
			continue
		}
		next := join(cur, name)
		mode, err := fsys.lstat(next)
		if err != nil {
			if errors.Is(err, syscall.ENAMETOOLONG) {
				return r, err
			}
			// Missing, not a directory, or unreadable: keep it as written.
			r.missing = r.missing || errors.Is(err, fs.ErrNotExist)
			cur = next
			continue
		}
		if mode&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return r, errLoop
		}
		target, err := fsys.readlink(next)
		if err != nil {
			return r, err
		}
		if next == "/proc" || strings.HasPrefix(next, "/proc/") {
			r.viaProc = true
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + "/" + rest
		}
		rest = strings.TrimPrefix(rest, "/")
	}
	r.path, r.links = cur, links
	return r, nil
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
