//go:build unix

package sqlite

import (
	"path/filepath"
	"syscall"
)

// diskFull reports whether the filesystem holding path has no block left
// for this user: SQLite reports a write that ran out of space as a plain
// disk I/O error, so a failed commit asks the filesystem.
func diskFull(path string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(filepath.Dir(path), &st) != nil {
		return false
	}
	return st.Bavail == 0
}
