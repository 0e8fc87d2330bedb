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
