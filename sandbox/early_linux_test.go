//go:build amd64 || arm64

package sandbox_test

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden/sandbox"
)

// TestEarlyInitRunsTheCommand starts an init before the run is known, as a
// one-shot `warden exec` does, and runs a command that uses everything a
// run wires up: both output streams, its exit status, the project, and the
// egress proxy on its loopback. The run takes that init, and leaves it
// ended.
func TestEarlyInitRunsTheCommand(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	pid := startEarly(t, nil)
	egress := &answerServer{answer: "proxied"}
	s, home := workspaceSpec(t)
	s.Net, s.Egress = sandbox.NetProxy, egress
	r := runAt(t, s, home, "/bin/bash", "-c", `echo out; echo err >&2; echo made > made.txt
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://example.invalid/", timeout=5).read().decode())'
exit 3`)
	if r.err != nil || r.res.ExitCode != 3 || r.stdout != "out\nproxied example.invalid\n" || r.stderr != "err\n" {
		t.Fatalf("a command in the early init: %v", r)
	}
	if b, err := os.ReadFile(filepath.Join(s.Project, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the command's write to the project: %q, %v", b, err)
	}
	if _, taken := sandbox.EarlyState(); !taken {
		t.Errorf("the run did not take the early init; want it used")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the early init (pid %d) is still there after the run: %v", pid, err)
	}
	if !egress.returned.Load() {
		t.Errorf("the egress listener was not closed at the end of the run")
	}
}

// TestEarlyInitKeepsTheLimits runs what the memory and process caps must
// stop in an early init, which was moved into its cgroup before the limits
// were known: the run's limits still hold.
func TestEarlyInitKeepsTheLimits(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if !platform.CgroupWritable {
		t.Skipf("no writable memory cgroup here (%s)", platform.CgroupError)
	}
	t.Cleanup(sandbox.ForgetEarly)
	sandbox.StartEarly("", nil)
	r := runIn(t, guardSpec(t), "python3", "-c", "b = b'x' * (200 << 20); print(len(b))")
	if r.err != nil || r.res.Limit != sandbox.LimitMemory || r.res.ExitCode == 0 {
		t.Fatalf("allocating 200 MB under a 64 MB cap in an early init: %v; want it killed by the memory limit", r)
	}
	if _, taken := sandbox.EarlyState(); !taken {
		t.Fatal("the run did not take the early init")
	}
	// 60 background processes: they start under a cap of 400 processes
	// (and threads), not under one of 40.
	const script = `import subprocess
n = 0
for _ in range(60):
    try:
        subprocess.Popen(["sleep", "30"])
        n += 1
    except OSError:
        pass
print(n, "started")`
	for _, pids := range []int{400, 40} {
		sandbox.ForgetEarly()
		sandbox.StartEarly("", nil)
		s := guardSpec(t)
		s.NoSpawn, s.Limits.Pids = false, pids
		r = runIn(t, s, "python3", "-c", script)
		if _, taken := sandbox.EarlyState(); !taken {
			t.Fatal("the run did not take the early init")
		}
		if all := r.stdout == "60 started\n"; r.err != nil || all != (pids > 60) {
			t.Errorf("60 background processes under a cap of %d in an early init: %v", pids, r)
		}
	}
}

// TestInheritedDescriptorsDoNotReachTheCommand opens a descriptor without
// close-on-exec, as a host's pipe or a directory a parent left open would
// be, and runs a command with no network, in an early init (which got the
// listener socket anyway) and in a fresh one: the command holds its three
// streams and nothing else.
func TestInheritedDescriptorsDoNotReachTheCommand(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	s, home := workspaceSpec(t)
	fd, err := syscall.Open(filepath.Join(home, ".ssh", "id_rsa"), syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatal("the test's descriptor is close-on-exec; want it inheritable")
	}
	for _, early := range []bool{true, false} {
		sandbox.ForgetEarly()
		if early {
			sandbox.StartEarly("", nil)
		}
		// ls's own descriptor on the directory it lists is 3.
		r := runAt(t, s, home, "/bin/ls", "/proc/self/fd")
		if r.err != nil || r.res.ExitCode != 0 {
			t.Fatalf("early %v: %v", early, r)
		}
		if got := strings.Fields(r.stdout); strings.Join(got, " ") != "0 1 2 3" {
			t.Errorf("early %v: the command holds descriptors %q; want only 0 1 2 and ls's own 3", early, got)
		}
		if _, taken := sandbox.EarlyState(); taken != early {
			t.Errorf("early %v: the run took the early init: %v", early, taken)
		}
	}
}

// TestEarlyInitNotTakenWhenItCannotServe: an early init started with one
// standard input is not used for a command with another, nor for a light
// mode run; each such run starts its own, and DiscardEarly ends the unused
// one.
func TestEarlyInitNotTakenWhenItCannotServe(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	pid := startEarly(t, os.Stdin)
	s := guardSpec(t)
	if r := runIn(t, s, "/bin/true"); r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("a run with no stdin: %v", r)
	}
	light := guardSpec(t)
	light.Mode = sandbox.ModeLight
	if r := runIn(t, light, "/bin/true"); r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("a light run: %v", r)
	}
	if _, taken := sandbox.EarlyState(); taken {
		t.Fatal("a run took an early init started with another stdin (or for light mode)")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the unused early init (pid %d) ended before DiscardEarly: %v", pid, err)
	}
	sandbox.DiscardEarly()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the early init (pid %d) is still there after DiscardEarly: %v", pid, err)
	}
}

// TestEarlyInitEndedWhenTheRunFails: a run that takes the early init and
// then cannot build its sandbox (a granted path that does not exist) ends
// the init, which never got a plan.
func TestEarlyInitEndedWhenTheRunFails(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	pid := startEarly(t, nil)
	s := guardSpec(t)
	s.ReadOnly = append(s.ReadOnly, filepath.Join(t.TempDir(), "missing"))
	if r := runIn(t, s, "/bin/true"); r.err == nil {
		t.Fatalf("a run granting a missing path: %v; want it refused", r)
	}
	if _, taken := sandbox.EarlyState(); !taken {
		t.Fatal("the run did not take the early init")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the early init (pid %d) of a run that failed is still there: %v", pid, err)
	}
}

// TestMissingDirectoryIsSaid: a command whose working directory does not
// exist inside the sandbox fails saying so, not as a command not found.
func TestMissingDirectoryIsSaid(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	dir := filepath.Join(s.Project, "gone")
	_, err := (&sandbox.Native{}).Run(t.Context(), s, sandbox.Command{Args: []string{"/bin/true"}, Dir: dir, Env: []string{"PATH=" + systemPath}})
	var ee *sandbox.ExecError
	if !errors.As(err, &ee) || !ee.Dir || ee.Path != dir || !strings.Contains(err.Error(), "cannot enter the working directory") {
		t.Fatalf("a run in a missing directory: %v; want an ExecError naming the directory", err)
	}
}

// TestHelperUsedOnlyWithItsBuildID checks which binary a sandbox's init
// starts from: warden-sandbox beside this executable only when its Go build
// ID is the one this binary was built to expect; this executable otherwise
// (no ID expected, no helper, another build's helper, not a Go binary).
func TestHelperUsedOnlyWithItsBuildID(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a helper with")
	}
	dir := t.TempDir()
	helper := filepath.Join(dir, sandbox.HelperName)
	build := func(ldflags string) string {
		t.Helper()
		cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags", ldflags, "-o", helper, "github.com/agentwarden/warden/cmd/warden-sandbox")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build warden-sandbox: %v\n%s", err, out)
		}
		out, err := exec.Command(goTool, "tool", "buildid", helper).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	id := build("")
	if got := sandbox.GoBuildID(helper); got != id {
		t.Fatalf("GoBuildID = %q; go tool buildid says %q", got, id)
	}
	warden := filepath.Join(dir, "warden")
	resolve := func(want string) {
		t.Helper()
		got, err := sandbox.InitExeBeside(warden)
		if err != nil || got != want {
			t.Errorf("the init's binary = %q, %v; want %q", got, err, want)
		}
	}
	restore := sandbox.SetHelperBuildID("")
	resolve(warden) // built without a helper
	restore()
	defer sandbox.SetHelperBuildID(id)()
	resolve(helper)
	other := build("-X main.unused=1")
	if other == id {
		t.Fatal("two builds with other flags have one build ID")
	}
	resolve(warden) // another build's helper
	if err := os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	resolve(warden) // not a Go binary
	os.Remove(helper)
	resolve(warden) // none
}

// startEarly starts an early init with stdin, as warden exec does, and
// returns its pid; the test ends it.
func startEarly(t *testing.T, stdin *os.File) int {
	t.Helper()
	t.Cleanup(sandbox.ForgetEarly)
	sandbox.StartEarly("", stdin)
	pid, _ := sandbox.EarlyState()
	if pid == 0 {
		t.Fatal("StartEarly started no init")
	}
	return pid
}

// FuzzNoteBuildID: any note bytes give an ID that is a slice of them after
// the 16-byte header, sized as the header says, or nothing; never a panic.
func FuzzNoteBuildID(f *testing.F) {
	id := "Krd_Q1OC4QZZcHjTYFJb/koU0C2KJKDYkprdD56Ij/hf-mYx8DAFe6hBzyIGiQ/dL0LbDwsvUDq7BcBV_UV"
	note := binary.LittleEndian.AppendUint32(nil, 4)
	note = binary.LittleEndian.AppendUint32(note, uint32(len(id)))
	note = binary.LittleEndian.AppendUint32(note, 4)
	note = append(append(note, "Go\x00\x00"...), id...)
	if got := sandbox.NoteBuildID(binary.LittleEndian, note); got != id {
		f.Fatalf("the seed note gives %q, want %q", got, id)
	}
	f.Add(note)
	f.Add(note[:20])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := sandbox.NoteBuildID(binary.LittleEndian, b)
		if got == "" {
			return
		}
		if len(b) < 16 || string(b[12:16]) != "Go\x00\x00" || int(binary.LittleEndian.Uint32(b[4:8])) != len(got) || string(b[16:16+len(got)]) != got {
			t.Fatalf("noteBuildID(%q) = %q", b, got)
		}
	})
}
