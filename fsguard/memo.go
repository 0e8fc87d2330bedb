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
// once (getdents) for all of their types. A name the listing lacks is
// missing unless some entry has it in another case or a name involved is not
// ASCII: then it is asked with lstat, since a case-insensitive directory
// (ext4 casefold, vfat) may still have it. It is for one goroutine.
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
	// lower holds the entries' names in lower case; nonASCII is set when
	// some name is not ASCII (then no name is known missing).
	lower    map[string]struct{}
	nonASCII bool
}

// missing reports whether the listing shows that name is not in the
// directory even if the filesystem ignores case (ext4 casefold, vfat): no
// entry has its name in any case, and every name involved is ASCII, whose
// case folding is plain.
func (l *dirList) missing(name string) bool {
	if l.nonASCII || !isASCII(name) {
		return false
	}
	_, ok := l.lower[strings.ToLower(name)]
	return !ok
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// newMemoLinks prepares for resolving paths (absolute and clean).
func newMemoLinks(paths []string) *memoLinks {
	children := make(map[string]int) // how many of paths each directory holds
	for _, p := range paths {
		if i := strings.LastIndexByte(p, '/'); i > 0 {
			children[p[:i]]++
		} else if i == 0 && len(p) > 1 {
			children["/"]++
		}
	}
	m := &memoLinks{sys: osLinks{}, modes: make(map[string]modeErr), dirs: make(map[string]*dirList),
		resolved: make(map[string]resolution)}
	for dir, n := range children {
		if n >= listAt {
			m.dirs[dir] = &dirList{}
		}
	}
	return m
}

// resolve is resolveWith(abs, m) for a clean absolute path: its directory
// is resolved once for all the paths in it, and the path from there.
func (m *memoLinks) resolve(abs string) (resolved, error) {
	i := strings.LastIndexByte(abs, '/')
	if name := abs[i+1:]; i > 0 && name != "" && name != "." && name != ".." {
		if dir, err := m.resolveDir(abs[:i]); err == nil {
			return resolveFrom(dir, name, m)
		}
	}
	return resolveWith(abs, m)
}

func (m *memoLinks) resolveDir(dir string) (resolved, error) {
	if x, ok := m.resolved[dir]; ok {
		return x.r, x.err
	}
	r, err := m.resolve(dir)
	m.resolved[dir] = resolution{r, err}
	return r, err
}

// lstat answers from what is known (a missing or non-directory parent, a
// listing) or asks the system, remembering only what the system said.
func (m *memoLinks) lstat(name string) (fs.FileMode, error) {
	if r, ok := m.modes[name]; ok {
		return r.mode, r.err
	}
	if mode, err, ok := m.known(name); ok {
		return mode, err
	}
	mode, err := m.sys.lstat(name)
	m.modes[name] = modeErr{mode, err}
	return mode, err
}

// known answers for name without asking the system, when it can.
func (m *memoLinks) known(name string) (fs.FileMode, error, bool) {
	i := strings.LastIndexByte(name, '/')
	dir, base := name[:i], name[i+1:]
	if dir == "" {
		dir = "/"
	}
	if len(name) >= PathMax || len(base) > 255 || dir == name {
		return 0, nil, false
	}
	d, ok := m.modes[dir]
	if !ok {
		d.mode, d.err, ok = m.known(dir)
	}
	if ok {
		switch {
		case errors.Is(d.err, fs.ErrNotExist):
			return 0, syscall.ENOENT, true // resolution only asks errors.Is; no PathError to build
		case d.err == nil && !d.mode.IsDir() && d.mode&fs.ModeSymlink == 0:
			return 0, syscall.ENOTDIR, true
		}
	}
	if l := m.listing(dir); l != nil {
		if t, ok := l.types[base]; ok {
			return t, nil, true
		}
		if l.missing(base) {
			return 0, syscall.ENOENT, true
		}
	}
	return 0, nil, false
}

// listing returns dir's entries when dir is worth reading whole and could be
// read, else nil.
func (m *memoLinks) listing(dir string) *dirList {
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
		l.lower = make(map[string]struct{}, len(entries))
		for _, e := range entries {
			l.types[e.Name()] = e.Type()
			l.lower[strings.ToLower(e.Name())] = struct{}{}
			l.nonASCII = l.nonASCII || !isASCII(e.Name())
		}
	}
	if l.types == nil {
		return nil
	}
	return l
}

func (m *memoLinks) readlink(name string) (string, error) { return m.sys.readlink(name) }
