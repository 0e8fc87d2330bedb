//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

const spoolSupported = true

// appendSpool durably appends frame to the spool at path and returns the
// spool's size afterwards. The write is one write(2) under an exclusive flock,
// so frames from concurrent processes never interleave, and a drain never sees
// half a frame from a live writer. It returns only after fdatasync.
func appendSpool(path string, frame []byte) (int64, error) {
	created := false
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		created = true
	} else if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	}
	if err != nil {
		return 0, fmt.Errorf("open audit spool: %w", err)
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("lock audit spool: %w", err)
	}
	_, werr := f.Write(frame)
	fi, serr := f.Stat()
	flock(f, syscall.LOCK_UN)
	if werr != nil {
		return 0, fmt.Errorf("write audit spool: %w", werr)
	}
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return 0, fmt.Errorf("sync audit spool: %w", err)
	}
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return 0, fmt.Errorf("sync audit spool directory: %w", err)
		}
	}
	if serr != nil {
		return 0, nil
	}
	return fi.Size(), nil
}

// drainSpool runs fn on the spool's contents under an exclusive lock and, when
// fn succeeds, empties the spool durably. A missing or empty spool costs one
// stat and no lock.
func drainSpool(path string, fn func(data []byte) error) error {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open audit spool: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		return nil
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock audit spool: %w", err)
	}
	defer flock(f, syscall.LOCK_UN)
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("read audit spool: %w", err)
	}
	if len(data) == 0 {
		return nil
	}
	if err := fn(data); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("empty audit spool: %w", err)
	}
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("sync audit spool: %w", err)
	}
	return nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
