//go:build amd64 || arm64

package sandbox

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// procNetUnix lists the Unix sockets of the network namespace of the
// process that reads it: the host's, when the plan is compiled.
const procNetUnix = "/proc/net/unix"

// hostSockets returns the pathname Unix sockets the host's processes have
// bound (an SSH, GPG or password manager's agent, Docker Desktop's or
// Colima's daemon, an editor's server) that still exist as sockets and do
// not lie under any of skip. A workspace command reads the whole
// filesystem and may make Unix sockets of its own, and Landlock does not
// govern connect(2) to a pathname socket, so each of these must be masked:
// the network namespace keeps the host's loopback and abstract sockets
// out, but not a socket reached through the filesystem. Sockets the
// command's own world binds are in that world's namespace, not listed here.
func hostSockets(skip []string) []string {
	f, err := os.Open(procNetUnix)
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseHostSockets(f, skip, isSocket)
}

func isSocket(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeSocket != 0
}

// parseHostSockets reads /proc/net/unix's table: its last column, when
// there are eight, is the bound path ("@…" for an abstract socket). A path
// holding spaces or newlines is not told apart reliably by the kernel's
// format and is left out, as is any that exists is not a socket.
func parseHostSockets(r io.Reader, skip []string, exists func(string) bool) []string {
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue // the header
		}
		fields := bytes.Fields(sc.Bytes())
		if len(fields) != 8 {
			continue
		}
		p := string(fields[7])
		if !strings.HasPrefix(p, "/") || seen[p] {
			continue
		}
		seen[p] = true
		clean := filepath.Clean(p)
		if clean != p || skipped(clean, skip) || !exists(clean) {
			continue
		}
		out = append(out, clean)
	}
	return out
}

func skipped(path string, skip []string) bool {
	for _, s := range skip {
		if within(path, filepath.Clean(s)) {
			return true
		}
	}
	return false
}
