//go:build !unix

package sqlite

import "errors"

// Without flock the spool is not used: every Record opens the database.
const spoolSupported = false

func appendSpool(string, []byte) (int64, error) {
	return 0, errors.New("audit spool: not supported on this platform")
}

func drainSpool(string, func([]byte) error) error { return nil }
