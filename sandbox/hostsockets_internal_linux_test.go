//go:build amd64 || arm64

package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// TestParseHostSockets reads /proc/net/unix's format: pathname sockets
// are kept (once), abstract and unnamed ones dropped, as are those under a
// skipped directory, those that are no longer sockets, and paths that are
// not clean.
func TestParseHostSockets(t *testing.T) {
	table := `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20001 /home/u/.docker/run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20002 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 20003
0000000000000000: 00000002 00000000 00010000 0001 01 20004 /run/user/1000/bus
0000000000000000: 00000002 00000000 00010000 0001 01 20005 /home/u/.1password/agent.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20006 /home/u/.docker/run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20007 /home/u/gone.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20008 /home/u/../u/x.sock
0000000000000000: 00000002 00000000 00010000 0001 01 20009 relative.sock
`
	exists := func(p string) bool { return p != "/home/u/gone.sock" }
	got := parseHostSockets(strings.NewReader(table), []string{"/run"}, exists)
	want := []string{"/home/u/.docker/run/docker.sock", "/home/u/.1password/agent.sock"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
