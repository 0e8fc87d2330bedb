//go:build !unix

package config

// withLock runs fn. Without flock, concurrent Sets on this platform can lose
// an update; warden's supported platform is Linux.
func withLock(path string, fn func() error) error { return fn() }
