//go:build !unix

package sqlite

// diskFull is false where the filesystem is not asked: a full disk is then
// reported as the error SQLite gives.
func diskFull(string) bool { return false }
