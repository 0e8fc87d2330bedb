//go:build unix

package fsguard

import (
	"os"
	"syscall"
)

// hardLinks returns the link count of fi, a regular file, or 0.
func hardLinks(fi os.FileInfo) uint64 {
	if !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
