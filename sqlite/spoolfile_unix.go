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
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/regfile"
)

const spoolSupported = true

// spoolLockWait bounds the wait for the spool's lock: a warden process
// stopped or stuck while it holds it (a drain waits at most BusyTimeout for
// the database) must not hold every hook behind it past its host's timeout,
// which lets the call through; they are refused instead. A variable for
// tests.
var spoolLockWait = 30 * time.Second

// appendSpool durably appends frame to the spool at path and returns the
// spool's size afterwards. The write is one write(2) under an exclusive flock,
// so frames from concurrent processes never interleave, and a drain never sees
// half a frame from a live writer. It returns only after fdatasync.
//
// With an anchor, it also keeps the anchor's spool claim: before writing it
// compares the spool's size with the claim, and a spool shorter than
// claimed (truncated, or deleted and made anew) is marked lost in the
// claim, durably, and reported in the returned claim; then, if whole is
// set, frame is not written. After the fdatasync, still under the lock (so
// that a drain cannot empty the spool in between), the claim is raised to
// the new size, without a sync: it may lag, never lead.
func appendSpool(path string, frame []byte, a *anchorFile, whole bool) (int64, spoolClaim, error) {
	var claim spoolClaim
	created := false
	f, err := openSpoolFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		created = true
	} else if errors.Is(err, fs.ErrExist) {
		f, err = openSpoolFile(path, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		return 0, claim, err
	}
	defer f.Close()
	if err := lockSpool(f, path); err != nil {
		return 0, claim, err
	}
	defer flock(f, syscall.LOCK_UN)
	if a != nil {
		fi, err := f.Stat()
		if err != nil {
			return 0, claim, fmt.Errorf("stat audit spool: %w", err)
		}
		if claim, err = a.readSpool(); err != nil {
			return 0, claim, err
		}
		if !claim.lost() && claim.Size > fi.Size() {
			claim.LostClaimed, claim.LostFound = claim.Size, fi.Size()
			claim.Size = fi.Size()
			if err := a.writeSpool(claim, true); err != nil {
				return 0, claim, err
			}
		}
		if claim.lost() && whole {
			return fi.Size(), claim, nil
		}
	}
	_, werr := f.Write(frame)
	fi, serr := f.Stat()
	if a == nil {
		flock(f, syscall.LOCK_UN)
	}
	if werr != nil {
		return 0, claim, fmt.Errorf("write audit spool: %w", werr)
	}
	if err := datasync(f); err != nil {
		return 0, claim, fmt.Errorf("sync audit spool: %w", err)
	}
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return 0, claim, fmt.Errorf("sync audit spool directory: %w", err)
		}
	}
	if serr != nil {
		return 0, claim, nil
	}
	if a != nil {
		claim.Size = fi.Size()
		_ = a.writeSpool(claim, false) // a claim that lags is safe
	}
	return fi.Size(), claim, nil
}

// drainSpool runs fn on the spool's contents under an exclusive lock and, when
// fn succeeds, empties the spool durably. A missing or empty spool costs one
// stat and no lock, unless the anchor claims bytes in it: then fn sees
// the empty contents and the claim, and decides.
//
// With an anchor, fn gets the claim, and the claim is lowered to zero,
// durably, before the spool is emptied (so it never claims more than the
// spool holds).
func drainSpool(path string, a *anchorFile, fn func(data []byte, claim spoolClaim) error) error {
	var claim spoolClaim
	if a != nil {
		var err error
		if claim, err = a.readSpool(); err != nil {
			return err
		}
	}
	f, err := openSpoolFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if claim.Size > 0 || claim.lost() {
			return fn(nil, claim)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 && claim.Size == 0 && !claim.lost() {
		return nil
	}
	if err := lockSpool(f, path); err != nil {
		return err
	}
	defer flock(f, syscall.LOCK_UN)
	if a != nil {
		if claim, err = a.readSpool(); err != nil { // again, under the lock
			return err
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("read audit spool: %w", err)
	}
	if len(data) == 0 && claim.Size == 0 && !claim.lost() {
		return nil
	}
	if err := fn(data, claim); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	if a != nil {
		if err := a.writeSpool(spoolClaim{}, true); err != nil {
			return err
		}
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("empty audit spool: %w", err)
	}
	if err := datasync(f); err != nil {
		return fmt.Errorf("sync audit spool: %w", err)
	}
	return nil
}

// resetSpoolClaim clears a lost mark and claims what the spool holds now,
// durably, under the spool's lock.
func resetSpoolClaim(path string, a *anchorFile) error {
	f, err := openSpoolFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockSpool(f, path); err != nil {
		return err
	}
	defer flock(f, syscall.LOCK_UN)
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat audit spool: %w", err)
	}
	return a.writeSpool(spoolClaim{Size: fi.Size()}, true)
}

// readSpoolFile returns the spool's contents without locking or changing
// it (for Verify of a home that is not trusted).
func readSpoolFile(path string) ([]byte, error) {
	f, err := openSpoolFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read audit spool: %w", err)
	}
	return b, nil
}

// spoolHint is what to do about a spool that is not a regular file: it
// holds no record, and the anchor's claim tells what was lost with it.
func spoolHint(path string) string {
	return "something other than warden put it there: move it aside (mv " + path + " " + path + ".bad); the next record starts a new spool, and `warden audit verify` says what, if anything, was lost"
}

// openSpoolFile opens the spool at path with flags, never through a
// symlink and never waiting (regfile.Open): a named pipe or a device in its
// place is refused (opening a pipe waited for its other end, and a hook
// held past its host's timeout lets the call through). The error says what
// to do; one that fs.ErrNotExist or fs.ErrExist matches is the open's own.
func openSpoolFile(path string, flags int, perm os.FileMode) (*os.File, error) {
	f, _, err := regfile.Open(path, flags, perm, false)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, notRegular("the audit spool", nr, spoolHint(path))
	}
	if err != nil {
		return nil, fmt.Errorf("open audit spool: %w", err)
	}
	return f, nil
}

// lockSpool takes the spool's exclusive lock, waiting at most
// spoolLockWait.
func lockSpool(f *os.File, path string) error {
	deadline := time.Now().Add(spoolLockWait)
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock audit spool: %w", err)
		}
		if time.Now().After(deadline) {
			return &warden.Error{Code: warden.EUnavailable,
				Message: fmt.Sprintf("the audit spool %s stayed locked by another warden process for %s, so nothing could be recorded", path, spoolLockWait),
				Hint:    "a warden process is stopped or stuck while it holds it (find it with fuser " + path + "); nothing was lost, and requests are denied until it lets go"}
		}
		time.Sleep(5 * time.Millisecond)
	}
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
