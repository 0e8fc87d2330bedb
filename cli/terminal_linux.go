package cli

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openTerminal opens the controlling terminal, provided stdin is a terminal too.
func openTerminal() (*os.File, error) {
	if _, err := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS); err != nil {
		return nil, errors.New("stdin is not a terminal")
	}
	return os.OpenFile("/dev/tty", os.O_RDWR, 0)
}
