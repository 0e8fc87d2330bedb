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
	seen := make(map[string]struct{}, len(paths)) // every directory prefix of paths
	children := make(map[string]int)              // how many of them each directory holds
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") {
			continue
		}
		parent := "/"
		for i := 1; i <= len(p); i++ {
			if i < len(p) && p[i] != '/' {
				continue
			}
			prefix := p[:i]
			if name := prefix[len(parent):]; name == "" || name == "/" || name == "/." || name == "/.." || name == "." || name == ".." {
				break
			}
			if _, ok := seen[prefix]; !ok {
				seen[prefix] = struct{}{}
				children[parent]++
			}
			parent = prefix
		}
	}
	m := &memoLinks{sys: osLinks{}, modes: make(map[string]modeErr, len(seen)), dirs: make(map[string]*dirList),
		resolved: make(map[string]resolution, len(seen))}
	for dir, n := range children {
		if n >= listAt {
			m.dirs[dir] = &dirList{}
		}
	}
	return m
}

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
				return 0, syscall.ENOENT // resolution only asks errors.Is; no PathError to build
			case r.err == nil && !r.mode.IsDir() && r.mode&fs.ModeSymlink == 0:
				return 0, syscall.ENOTDIR
			}
		}
		if l := m.listing(dir); l != nil {
			if t, ok := l.types[base]; ok {
				return t, nil
			}
			if l.missing(base) {
				return 0, syscall.ENOENT
			}
		}
	}
	return m.sys.lstat(name)
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
