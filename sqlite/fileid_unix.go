//go:build unix

package sqlite

import (
	"os"
	"syscall"
)

// noFollow refuses to open a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// fileID is the device and inode of a file: a file replaced by another
// (a rename over it, or a deletion and a new file) has another.
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
