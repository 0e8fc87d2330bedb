//go:build unix && !linux && !darwin

package sqlite

import "os"

// datasync makes what was written to f durable (fsync: these systems have
// no fdatasync in Go's syscall package).
func datasync(f *os.File) error { return f.Sync() }
