package sandbox

import (
	"fmt"
	"syscall"
)

// ExecError says the command could not be started inside the sandbox.
type ExecError struct {
	Path string
	Err  syscall.Errno
	Dir  bool // Path is the working directory, which could not be entered
}

func (e *ExecError) Error() string {
	if e.Dir {
		return fmt.Sprintf("cannot enter the working directory %s inside the sandbox: %v", e.Path, e.Err)
	}
	if e.Err == syscall.ENOENT {
		return fmt.Sprintf("%s: command not found inside the sandbox", e.Path)
	}
	return fmt.Sprintf("%s: cannot run it inside the sandbox: %v", e.Path, e.Err)
}

func (e *ExecError) Unwrap() error { return e.Err }
