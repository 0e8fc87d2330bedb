//go:build unix

package fsguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// publicSystemFile reports whether real (absolute, clean, symlinks
// resolved) lies in a system directory and every user of the machine may
// read it: others may read it (and search it, for a directory) and search
// every directory above it. Such a file is no secret of the user's. A
// directory is read whole (grep -r, tar) or through a glob (cat
// /etc/ssh/*), so it is public only when everything in it is (publicTree).
func publicSystemFile(real string) bool {
	if !inSystemDir(real) {
		return false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return false
	}
	need := os.FileMode(0o004)
	switch {
	case fi.IsDir():
		need = 0o005
	case !fi.Mode().IsRegular():
		return false
	}
	if fi.Mode().Perm()&need != need {
		return false
	}
	return searchable(filepath.Dir(real)) && (!fi.IsDir() || publicTree(real))
}

// publicTreeMax bounds the entries publicTree looks at: a larger tree
// (/etc, /usr/include) is not taken to be public.
const publicTreeMax = 2048

var errNotPublic = errors.New("not public")

// publicTree reports whether everything below the directory dir is public:
// directories others may read and search, regular files others may read,
// and symlinks to such files in a system directory (not to a directory,
// which would be another tree). It looks at publicTreeMax entries at most.
func publicTree(dir string) bool {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		if n++; n > publicTreeMax {
			return errNotPublic
		}
		need := os.FileMode(0o004)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return errNotPublic
			}
			if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() || !publicSystemFile(real) {
				return errNotPublic
			}
			return nil
		case d.IsDir():
			need = 0o005
		case !d.Type().IsRegular():
			return errNotPublic
		}
		fi, err := d.Info()
		if err != nil || fi.Mode().Perm()&need != need {
			return errNotPublic
		}
		return nil
	})
	return err == nil
}

// publicListing reports whether a bounded listing of names below the
// directory dir (absolute, clean, symlinks resolved), segment by segment
// (Glob's "python3*/json/*.py"), shows only what every user of the machine
// may list: dir and each directory it enters on the way lie in a system
// directory, and others may read and search them and every directory above
// dir. Only the directories the pattern leads into are read (its
// wildcards prune the walk), publicTreeMax entries at most. The files it
// names are not read: their names are what every user may list.
func publicListing(dir string, names []string) bool {
	if !inSystemDir(dir) {
		return false
	}
	if di, err := os.Stat(dir); err != nil || !di.IsDir() || di.Mode().Perm()&0o005 != 0o005 || !searchable(filepath.Dir(dir)) {
		return false
	}
	n := 0
	var walk func(dir string, names []string) bool
	walk = func(dir string, names []string) bool {
		if len(names) == 1 {
			return true // dir's names are listed, and nothing in them
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, e := range entries {
			if n++; n > publicTreeMax {
				return false
			}
			// Letter case ignored: a tool may match either way.
			if ok, err := filepath.Match(strings.ToLower(names[0]), strings.ToLower(e.Name())); err != nil || !ok {
				if err != nil {
					return false
				}
				continue
			}
			p := filepath.Join(dir, e.Name())
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return false
			}
			fi, err := os.Stat(real)
			if err != nil {
				return false
			}
			if !fi.IsDir() {
				continue // a file where the pattern goes on: nothing below it
			}
			if !inSystemDir(real) || fi.Mode().Perm()&0o005 != 0o005 || real != p && !searchable(filepath.Dir(real)) || !walk(real, names[1:]) {
				return false
			}
		}
		return true
	}
	return walk(dir, names)
}

// searchable reports whether others may search dir and every directory
// above it.
func searchable(dir string) bool {
	for ; ; dir = filepath.Dir(dir) {
		di, err := os.Stat(dir)
		if err != nil || di.Mode().Perm()&0o001 == 0 {
			return false
		}
		if dir == "/" {
			return true
		}
	}
}
