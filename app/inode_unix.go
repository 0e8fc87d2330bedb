//go:build unix

package app

import (
	"os"
	"syscall"
)

// inode is the file's inode number, so that a file replaced by a rename is
// seen as changed even when its size and time match.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
