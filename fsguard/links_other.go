//go:build !unix

package fsguard

import "os"

// hardLinks returns 0: the link count is not read on this system, so hard
// links are not asked about here (see the threat model).
func hardLinks(os.FileInfo) uint64 { return 0 }
