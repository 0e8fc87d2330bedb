//go:build unix

package fsguard

import (
	"os"
	"syscall"
)

// hardLinks returns the link count of a regular file at p, or 0.
func hardLinks(p string) uint64 {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
