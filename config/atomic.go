package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteAtomic replaces the file at path with data, so that a reader sees either
// the old contents or the new, never a mix: it writes a temporary file in the
// same directory, syncs it, sets its mode to perm, renames it over path and
// syncs the directory. If anything fails before the rename, the original file
// is untouched and the temporary file is removed. An error from the final
// directory sync means the new contents are in place but may not survive a
// crash.
//
// A symbolic link at path is replaced by a regular file, not followed.
func WriteAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// Set the mode first, so the data never sits in a file others may read.
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: chmod: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: rename: %w", path, err)
	}
	return syncDir(dir)
}
