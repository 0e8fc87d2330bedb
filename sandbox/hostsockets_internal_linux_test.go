//go:build amd64 || arm64

package sandbox

import (
	"os"
	"path/filepath"
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

// TestPinnedAncestors: the directories between the writable directory and
// each protected path are pinned, shallowest first and once each; a
// protected path directly in the writable directory pins nothing, and the
// chain stops at a missing directory or one that is a symlink.
func TestPinnedAncestors(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "proj")
	for _, d := range []string{".git/hooks", ".git/modules/lib/hooks", ".claude"} {
		if err := os.MkdirAll(filepath.Join(project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(root, filepath.Join(project, "link")); err != nil {
		t.Fatal(err)
	}
	got := pinnedAncestors([]string{
		project + "/.git/config", project + "/.git/hooks", project + "/.git/modules/lib/hooks",
		project + "/.claude", project + "/.husky/_", project + "/link/x/y", "/elsewhere/.git/config",
	}, []string{"", project})
	want := []string{project + "/.git", project + "/.git/modules", project + "/.git/modules/lib"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// BenchmarkHostSockets measures what reading the host's socket table costs
// each sandbox start (go test -bench HostSockets -run ^$ ./sandbox).
func BenchmarkHostSockets(b *testing.B) {
	for b.Loop() {
		_ = hostSockets([]string{"/proc", "/dev", "/run", "/var/run"})
	}
}
