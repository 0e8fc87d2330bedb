package fsguard

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// listAt is how many names asked about in one directory make memoLinks read
// the directory once instead of lstat'ing each name.
const listAt = 8

// memoLinks answers resolution's questions for the many patterns of a
// policy, so that compiling it costs filesystem calls per directory, not per
// rule: each name is asked about once; a name below one that is missing or
// not a directory gets the kernel's answer without a call (ENOENT, ENOTDIR);
// and a directory holding listAt or more of the names asked about is read
// once (getdents) for all of their types. A name the listing lacks is asked
// with lstat (a case-insensitive directory may still have it). It is for one
// goroutine.
type memoLinks struct {
	sys      links // the system: osLinks, or a test's counter
	modes    map[string]modeErr
	dirs     map[string]*dirList // directories worth reading whole
	listings int                 // directories read
	resolved map[string]resolution
}

type resolution struct {
	r   resolved
	err error
}

type modeErr struct {
	mode fs.FileMode
	err  error
}

type dirList struct {
	read  bool
	types map[string]fs.FileMode // nil when the directory could not be read
}

// newMemoLinks prepares for resolving paths (absolute and clean).
func newMemoLinks(paths []string) *memoLinks {
	children := make(map[string]map[string]struct{})
	for _, p := range paths {
		cur := "/"
		for name := range strings.SplitSeq(strings.TrimPrefix(p, "/"), "/") {
			if name == "" || name == "." || name == ".." {
				break
			}
			set := children[cur]
			if set == nil {
				set = make(map[string]struct{})
				children[cur] = set
			}
			set[name] = struct{}{}
			cur = join(cur, name)
		}
	}
	m := &memoLinks{sys: osLinks{}, modes: make(map[string]modeErr), dirs: make(map[string]*dirList), resolved: make(map[string]resolution)}
	for dir, set := range children {
		if len(set) >= listAt {
			m.dirs[dir] = &dirList{}
		}
	}
	return m
}

// resolve is resolveWith(abs, m) for a clean absolute path, from the
// resolution of its directory when that was made (and made without error).
func (m *memoLinks) resolve(abs string) (resolved, error) {
	if x, ok := m.resolved[abs]; ok {
		return x.r, x.err
	}
	var x resolution
	i := strings.LastIndexByte(abs, '/')
	if name := abs[i+1:]; i > 0 && name != "" && name != "." && name != ".." {
		if dir, err := m.resolve(abs[:i]); err == nil {
			x.r, x.err = resolveFrom(dir, name, m)
		} else {
			x.r, x.err = resolveWith(abs, m)
		}
	} else {
		x.r, x.err = resolveWith(abs, m)
	}
	m.resolved[abs] = x
	return x.r, x.err
}

func (m *memoLinks) lstat(name string) (fs.FileMode, error) {
	if r, ok := m.modes[name]; ok {
		return r.mode, r.err
	}
	mode, err := m.ask(name)
	m.modes[name] = modeErr{mode, err}
	return mode, err
}

func (m *memoLinks) ask(name string) (fs.FileMode, error) {
	i := strings.LastIndexByte(name, '/')
	dir, base := name[:i], name[i+1:]
	if dir == "" {
		dir = "/"
	}
	if len(name) < PathMax && len(base) <= 255 {
		if r, ok := m.modes[dir]; ok {
			switch {
			case errors.Is(r.err, fs.ErrNotExist):
				return 0, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOENT}
			case r.err == nil && !r.mode.IsDir() && r.mode&fs.ModeSymlink == 0:
				return 0, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOTDIR}
			}
		}
		if types := m.listing(dir); types != nil {
			if t, ok := types[base]; ok {
				return t, nil
			}
		}
	}
	return m.sys.lstat(name)
}

// listing returns the types of dir's entries when dir is worth reading whole
// and could be read, else nil.
func (m *memoLinks) listing(dir string) map[string]fs.FileMode {
	l := m.dirs[dir]
	if l == nil {
		return nil
	}
	if !l.read {
		l.read = true
		m.listings++
		f, err := os.Open(dir)
		if err != nil {
			return nil
		}
		entries, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return nil
		}
		l.types = make(map[string]fs.FileMode, len(entries))
		for _, e := range entries {
			l.types[e.Name()] = e.Type()
		}
	}
	return l.types
}

func (m *memoLinks) readlink(name string) (string, error) { return m.sys.readlink(name) }
