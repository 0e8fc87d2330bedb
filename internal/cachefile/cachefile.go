// Package cachefile writes the files warden keeps beside its policy to
// spare later processes work (the policy cache, the compiled filesystem and
// network rules): each is replaced whole, atomically, and never synced. A
// file cut short by a crash fails the checksum its reader keeps, and is
// computed again; so is one that could not be written.
package cachefile

import (
	"os"
	"path/filepath"
)

// Write replaces the file at path with data: a temporary file beside it,
// renamed over it. The directory is made (mode 0700) when missing. Failures
// are ignored: the next process computes what the file would have held.
func Write(path string, data []byte) {
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}
