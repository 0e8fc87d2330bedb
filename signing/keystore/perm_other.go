//go:build !unix

package keystore

import "io/fs"

// private is always true here: outside Unix the mode bits do not describe
// who can read a file (Windows uses ACLs, which this package does not
// inspect). warden's supported platform is Linux.
func private(fs.FileInfo) bool { return true }

// othersMayWrite is always false here, for the same reason as private.
func othersMayWrite(fs.FileInfo) bool { return false }

// syncDir does nothing here: a directory cannot be opened for syncing on
// Windows.
func syncDir(string) error { return nil }
