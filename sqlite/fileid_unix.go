//go:build unix

package sqlite

import (
	"os"
	"syscall"
)

// noFollow refuses to open a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// noBlock keeps opening a named pipe from waiting for its other end; it
// changes nothing for a regular file.
const noBlock = syscall.O_NONBLOCK

// fileID is the device and inode of a file: a file replaced by another
// (a rename over it, or a deletion and a new file) has another.
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
