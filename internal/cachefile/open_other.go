//go:build !unix

package cachefile

// openFlags is 0 where opening cannot wait for a writer; a symlink is then
// followed, and Read still takes only a regular file.
const openFlags = 0
