// Package proc reads what warden needs of a process from /proc.
package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Start is pid's start time (field 22 of /proc/PID/stat, in clock ticks
// since boot): with the pid, it names one process against a reused pid.
// ok is false where there is no such process (or no /proc).
func Start(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", false
	}
	return f[19], true // the third field after the parenthesis is field 3
}
