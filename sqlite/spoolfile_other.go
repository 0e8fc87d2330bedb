//go:build !unix

package sqlite

import "errors"

// Without flock the spool is not used: every Record opens the database.
const spoolSupported = false

func appendSpool(string, []byte, *anchorFile, bool) (int64, spoolClaim, error) {
	return 0, spoolClaim{}, errors.New("audit spool: not supported on this platform")
}

func drainSpool(string, *anchorFile, func([]byte, spoolClaim) error) error { return nil }

func readSpoolFile(string) ([]byte, error) { return nil, nil }

func resetSpoolClaim(string, *anchorFile) error { return nil }
