//go:build darwin || freebsd || netbsd || dragonfly

package nestedgit

import "syscall"

// changeTime is the inode change time of st, in nanoseconds.
func changeTime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
