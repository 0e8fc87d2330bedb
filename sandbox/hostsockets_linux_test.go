//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// TestWorkspaceCannotReachHostUnixSockets: a service of the host listening
// on a Unix socket in a directory the workspace profile may read (Docker
// Desktop's ~/.docker/run/docker.sock, a password manager's agent) is not
// reachable from the sandbox, judged by whether the service saw a
// connection; the command's own Unix server still works.
func TestWorkspaceCannotReachHostUnixSockets(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	// The test binary lies in the host's /tmp, which the sandbox replaces:
	// it is copied into the home, which the sandbox carries.
	self := filepath.Join(home, "bin", "probe")
	exe, _ := os.Executable()
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(self), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int32
	for _, rel := range []string{".docker/run/docker.sock", "proj/dev.sock"} {
		path := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Skipf("cannot listen on a Unix socket here: %v", err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				reached.Add(1)
				c.Close()
			}
		}()
		r := runAt(t, s, home, self, "sandbox-unix-dial", path)
		if r.err != nil {
			t.Fatalf("sandbox failed: %v", r)
		}
		time.Sleep(50 * time.Millisecond)
		if n := reached.Load(); n > 0 || strings.Contains(r.stdout, "connected") {
			t.Errorf("the sandbox reached the host's socket %s (%d connections): %s", rel, n, r)
		}
	}
	if r := runAt(t, s, home, self, "sandbox-unix-echo", s.Project); r.err != nil || r.res.ExitCode != 0 {
		t.Errorf("the command's own Unix server no longer works: %v", r)
	}
}

// TestWorldKeepsOutASocketBoundLaterInAMaskedDirectory: a session's world
// lives across commands, so a host socket bound after it started is not in
// its masks; one bound inside a directory masked from the start (git
// credential-cache's, made empty before the world starts) is still out of
// reach, judged by whether the host's listener saw a connection.
func TestWorldKeepsOutASocketBoundLaterInAMaskedDirectory(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	dir := filepath.Join(home, ".cache", "git", "credential")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	spec.Hidden = append(spec.Hidden, dir)
	spec.Tmp = ""
	spec.Background, spec.Session, spec.UserHome = true, "session-late-socket", home
	probe := filepath.Join(home, "bin", "probe")
	exe, _ := os.Executable()
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(probe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Start(ctx, "late", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "late") })

	sock := filepath.Join(dir, "socket")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("cannot listen on a Unix socket here: %v", err)
	}
	defer l.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	var out bytes.Buffer
	res, err := m.Exec(ctx, "late", sandbox.Command{
		Args: []string{probe, "sandbox-unix-dial", sock}, Dir: spec.Project,
		Env: []string{"PATH=" + systemPath, "HOME=" + home}, Stdout: &out, Stderr: &out,
	}, sandbox.Limits{Wall: 20 * time.Second})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := reached.Load(); n > 0 || res.ExitCode == 0 {
		t.Errorf("the world reached a socket the host bound later in a masked directory (%d connections, exit %d): %s", n, res.ExitCode, out.String())
	}
}
