package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync makes what was written to f durable. On macOS fsync only hands
// the data to the drive; F_FULLFSYNC asks the drive to write its cache
// out too (what SQLite itself does there with fullfsync), and plain fsync
// is the fallback where the file system refuses it.
func datasync(f *os.File) error {
	if _, err := unix.FcntlInt(f.Fd(), unix.F_FULLFSYNC, 0); err == nil {
		return nil
	}
	return f.Sync()
}
