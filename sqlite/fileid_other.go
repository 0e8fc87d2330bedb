//go:build !unix

package sqlite

import "os"

const noFollow = 0

// fileID is zero where the platform has no inode: a replaced database
// is then found only by its contents.
func fileID(os.FileInfo) (dev, ino uint64) { return 0, 0 }
