//go:build unix

package fstools

import (
	"io/fs"
	"syscall"
)

// noBlock is added to opens of files that should be regular: opening a named
// pipe put in their place then returns at once instead of waiting for a
// writer, and a terminal never becomes the controlling one. On regular files
// O_NONBLOCK changes nothing.
const noBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY

// linkCount returns the number of hard links to the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
