//go:build !linux

package cli

import "os"

// keyAtATime is a no-op here: answers are read a line at a time.
func keyAtATime(*os.File) (restore func()) { return func() {} }
