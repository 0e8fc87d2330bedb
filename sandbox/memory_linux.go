package sandbox

import "syscall"

// MemoryShare is pct percent of the machine's memory in bytes, 0 when the
// kernel does not say how much there is.
func MemoryShare(pct int) int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit) / 100 * int64(pct)
}

// DiskShare is pct percent of the space free (to an unprivileged user) on
// the filesystem holding dir, in bytes; 0 when the kernel does not say.
func DiskShare(dir string, pct int) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * st.Bsize / 100 * int64(pct)
}
