//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used: on a
// shared machine it shows what a benchmark costs better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
