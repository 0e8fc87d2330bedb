//go:build unix

package fsguard

import (
	"os"
	"path/filepath"
)

// publicSystemFile reports whether real (absolute, clean, symlinks
// resolved) lies in a system directory and every user of the machine may
// read it: others may read it (and search it, for a directory) and search
// every directory above it. Such a file is no secret of the user's.
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
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		di, err := os.Stat(dir)
		if err != nil || di.Mode().Perm()&0o001 == 0 {
			return false
		}
		if dir == "/" {
			return true
		}
	}
}
