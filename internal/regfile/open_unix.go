//go:build unix

package regfile

import "syscall"

// noBlock keeps opening a named pipe from waiting for its other end, and a
// terminal from becoming the controlling one; it changes nothing for a
// regular file.
const noBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY

// noFollow refuses a symlink at the open.
const noFollow = syscall.O_NOFOLLOW
