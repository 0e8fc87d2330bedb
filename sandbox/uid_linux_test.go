//go:build amd64 || arm64

package sandbox_test

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// testUID is the unprivileged caller of TestCommandRunsAsTheCallersUID: an
// id no account has, so nothing on the host can lend it a meaning.
const testUID = 54321

// TestCommandRunsAsTheCallersUID runs a sandbox as an ordinary user and
// checks that the command sees that user's own uid and gid, and owns its
// project, as it would on the host, and that it still holds no capability.
func TestCommandRunsAsTheCallersUID(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	setpriv := requireSetpriv(t)
	id := strconv.Itoa(testUID)
	dir := userDir(t, testUID)
	exe := filepath.Join(dir, "sandbox.test")
	copyExecutable(t, exe)
	project, workspace := filepath.Join(dir, "project"), filepath.Join(dir, "workspace")
	for _, d := range []string{project, workspace} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, testUID, testUID); err != nil {
			t.Fatal(err)
		}
	}
	s := guardSpec(t)
	s.Project, s.Workspace, s.ReadOnly = project, workspace, []string{exe}
	// An ordinary user gets no cgroup here, and RLIMIT_AS at 64 MB stops
	// the Go runtime of the probes from starting.
	s.Limits.Memory = 0
	opts := []string{"--reuid=" + id, "--regid=" + id, "--clear-groups"}

	probe := runNested(t, setpriv, exe, opts, nestedJob{Spec: s, Args: []string{"true"}})
	if probe.Err != "" && strings.Contains(probe.Err, "user namespaces are not available") || probe.Mode == sandbox.ModeLight {
		t.Skipf("user namespaces for unprivileged users are disabled here: %s %q", probe.Err, probe.Warnings)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"id", "-u"}, id + "\n"},
		{[]string{"id", "-g"}, id + "\n"},
		{[]string{"stat", "-c", "%u:%g", project}, id + ":" + id + "\n"},
	} {
		rep := runNested(t, setpriv, exe, opts, nestedJob{Spec: s, Args: c.args})
		if rep.Err != "" || rep.Exit != 0 || rep.Stdout != c.want {
			t.Errorf("%v in a sandbox run by uid %d: err %q exit %d stdout %q stderr %q; want %q", c.args, testUID, rep.Err, rep.Exit, rep.Stdout, rep.Stderr, c.want)
		}
		if rep.Mode != sandbox.ModeStandard {
			t.Errorf("%v ran in mode %s, want standard (warnings %q)", c.args, rep.Mode, rep.Warnings)
		}
	}
	// Both ways a one-shot command starts: through the stage (no_spawn)
	// and from a restricted thread of the init (new processes allowed).
	spawning := s
	spawning.NoSpawn = false
	for _, spec := range []sandbox.Spec{s, spawning} {
		rep := runNested(t, setpriv, exe, opts, nestedJob{Spec: spec, Args: []string{exe, "sandbox-probe", "status"}})
		for _, want := range []string{"Uid:\t" + id + "\t" + id, "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
			"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(rep.Stdout, want) {
				t.Errorf("the command run as uid %d (no_spawn %v) has %q missing from its status:\n%s%s", testUID, spec.NoSpawn, want, rep.Stdout, rep.Err)
			}
		}
	}
	var rep nestedReport
	// The command is the init's uid in their namespace: the init's /proc
	// entries must still be closed to it.
	for _, spec := range []sandbox.Spec{s, spawning} {
		for _, probe := range [][2]string{{"list", "/proc/1/fd"}, {"read", "/proc/1/environ"}, {"read", "/proc/1/maps"}} {
			f := probe[1]
			rep = runNested(t, setpriv, exe, opts, nestedJob{Spec: spec, Args: []string{exe, "sandbox-probe", probe[0], f}})
			if rep.Exit == 0 || rep.Err != "" {
				t.Errorf("the command run as uid %d (no_spawn %v) read the init's %s: exit %d %q %q", testUID, spec.NoSpawn, f, rep.Exit, rep.Stdout, rep.Err)
			}
		}
	}
	rep = runNested(t, setpriv, exe, opts, nestedJob{Spec: s, Args: []string{exe, "sandbox-probe", "write", filepath.Join(workspace, "out")}})
	if st, err := os.Stat(filepath.Join(workspace, "out")); rep.Exit != 0 || err != nil {
		t.Errorf("writing the workspace as uid %d: exit %d %q %q %q %v", testUID, rep.Exit, rep.Stdout, rep.Stderr, rep.Err, err)
	} else if got := statOwner(st); got != testUID {
		t.Errorf("the file the command wrote belongs to uid %d on the host, want %d", got, testUID)
	}
}

// TestRootCallerStaysRoot checks that a root caller's command is uid 0, as
// it is on the host.
func TestRootCallerStaysRoot(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if os.Geteuid() != 0 {
		t.Skip("needs a root caller")
	}
	r := runIn(t, guardSpec(t), "id", "-u")
	if r.err != nil || r.stdout != "0\n" {
		t.Fatalf("id -u as root: %v; want 0", r)
	}
}

// userDir is a directory uid can enter and write, removed after the test.
func userDir(t *testing.T, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "warden-uid-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyExecutable copies the test binary to path, where other users can run
// it (go test builds it in a directory only its owner can enter).
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func statOwner(st os.FileInfo) int {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}
