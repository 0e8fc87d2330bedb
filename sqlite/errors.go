package sqlite

import (
	"errors"

	"github.com/agentwarden/warden"
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
