package sqlite

import (
	"os"
	"syscall"
)

// datasync makes what was written to f durable: its data and the metadata
// needed to read it back.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
