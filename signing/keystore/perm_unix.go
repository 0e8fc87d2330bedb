//go:build unix

package keystore

import (
	"io/fs"
	"os"
)

// private reports whether info's mode gives group and others no permission
// at all.
func private(info fs.FileInfo) bool { return info.Mode().Perm()&0o077 == 0 }

// othersMayWrite reports whether group or others may write in the directory
// info describes: rename, replace or delete its files.
func othersMayWrite(info fs.FileInfo) bool { return info.Mode().Perm()&0o022 != 0 }

// syncDir makes a new name in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
