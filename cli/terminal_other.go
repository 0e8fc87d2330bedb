//go:build !linux

package cli

import (
	"errors"
	"os"
)

// openTerminal is not supported on this platform: confirmation is refused.
func openTerminal() (*os.File, error) {
	return nil, errors.New("terminal confirmation is only supported on Linux")
}
