package sqlite

import (
	"errors"
	"syscall"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/regfile"
	"github.com/ncruces/go-sqlite3"
)

// busy turns SQLite's "database is locked" (another process held the lock for
// longer than BusyTimeout, or than the caller's context allowed) into a
// *warden.Error a user can act on, keeping err as the cause. Other errors pass
// through unchanged.
func busy(err error) error {
	if !errors.Is(err, sqlite3.BUSY) {
		return err
	}
	return &warden.Error{
		Code:    warden.EUnavailable,
		Message: "the audit database is locked by another process",
		Hint:    "check for a stuck warden process or a sqlite3 shell holding a write transaction on warden.db",
		Err:     err,
	}
}

// unreadable reports whether err is SQLite finding that a file is not a
// database it can read: damaged (cut short, pages overwritten) or not a
// database at all.
func unreadable(err error) bool {
	return errors.Is(err, sqlite3.CORRUPT) || errors.Is(err, sqlite3.NOTADB)
}

// storage turns a write that failed because the filesystem holding the audit
// log is full or read-only into a *warden.Error saying so and what to do,
// keeping err as the cause; the generic "check that warden.db is writable"
// sent users looking at permissions. Other errors, and errors that already
// speak to the user, pass through unchanged.
func storage(err error) error { return storageAt("", err) }

// storageAt is storage for a write to the database at path: a disk I/O
// error there counts as full when its filesystem has no space left.
func storageAt(path string, err error) error {
	if err == nil {
		return nil
	}
	var we *warden.Error
	if errors.As(err, &we) {
		return err
	}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, sqlite3.FULL),
		path != "" && errors.Is(err, sqlite3.IOERR) && diskFull(path):
		return &warden.Error{Code: warden.EUnavailable, Err: err,
			Message: "the filesystem holding the audit log is full (or over quota), so nothing could be recorded",
			Hint:    "free space where warden's home lies (df -h \"$WARDEN_HOME\"); nothing was lost, and requests are denied until a record can be written"}
	case errors.Is(err, syscall.EROFS), errors.Is(err, sqlite3.READONLY):
		return &warden.Error{Code: warden.EUnavailable, Err: err,
			Message: "the audit log is on a read-only filesystem or file, so nothing could be recorded",
			Hint:    "make warden's home writable again (mount it read-write, or check the mode of warden.db and warden.db.spool); requests are denied until then"}
	}
	return err
}

// notRegular is the error for a file of warden's home (what names it) that
// is not a regular file: a named pipe, a device or a directory put in its
// place, which warden refuses rather than wait on or read without end.
// hint says what to do.
func notRegular(what string, nr *regfile.NotRegularError, hint string) error {
	return &warden.Error{Code: warden.EConflict, Hint: hint, Err: nr,
		Message: what + " " + nr.Path + " is " + regfile.Kind(nr.Mode) + ", not a regular file, so warden will not open it"}
}
