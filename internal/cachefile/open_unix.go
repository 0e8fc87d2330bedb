//go:build unix

package cachefile

import "syscall"

// openFlags keep Read from following a symlink (Write never leaves one) and
// from waiting for a named pipe's writer.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
