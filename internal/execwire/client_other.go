//go:build !linux

package execwire

import "errors"

// ErrFallback is Call's error when nothing ran through a server.
var ErrFallback = errors.New("the session's supervisor did not take the command")

// A Conn is warden-exec's connection to a supervisor; there is none on
// this platform.
type Conn struct{}

// Dial fails: session sandbox worlds exist on Linux only.
func Dial(string) (*Conn, error) { return nil, ErrFallback }

// Close does nothing.
func (c *Conn) Close() error { return nil }

// Call runs nothing.
func (c *Conn) Call(Request, [3]int) (int, error) { return 0, ErrFallback }
