package nestedgit

import "github.com/agentwarden/warden/internal/regfile"

// maxRead bounds a file of a git directory the sweep reads (an index of a
// few hundred thousand entries is tens of MB).
const maxRead = 1 << 30

// readFile reads the file at p, following symlinks as git does, only when
// it is a regular file: a command may leave a FIFO or a device where git
// keeps a file (commondir, a hook, the index), and a sweep that opened it
// to read would wait forever, holding every other sweep back.
func readFile(p string) ([]byte, error) {
	return regfile.ReadFile(p, maxRead)
}
