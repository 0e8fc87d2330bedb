//go:build !unix

package fstools

import "io/fs"

// noBlock adds nothing where named pipes cannot block an open.
const noBlock = 0

// linkCount returns 1: hard links are not counted on this platform.
func linkCount(fs.FileInfo) uint64 { return 1 }
