//go:build unix

package config

import "syscall"

// openNonBlocking keeps opening a named pipe from waiting for a writer; it
// changes nothing for a regular file.
const openNonBlocking = syscall.O_NONBLOCK
