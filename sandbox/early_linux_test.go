//go:build amd64 || arm64

package sandbox_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	pid := startEarly(t)
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
	sandbox.StartEarly("", true)
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
		sandbox.StartEarly("", true)
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
			sandbox.StartEarly("", true)
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

// TestEarlyInitNotTakenWhenItCannotServe: an early init is not used for a
// command whose standard input is not a file (it cannot be handed over),
// nor for a light mode run; each such run starts its own, and
// DiscardEarly ends the unused one.
func TestEarlyInitNotTakenWhenItCannotServe(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	pid := startEarly(t)
	s := guardSpec(t)
	r := runWith(t, s, strings.NewReader("from a reader\n"), "/bin/cat")
	if r.err != nil || r.res.ExitCode != 0 || r.stdout != "from a reader\n" {
		t.Fatalf("a run whose stdin is a reader: %v", r)
	}
	light := guardSpec(t)
	light.Mode = sandbox.ModeLight
	if r := runIn(t, light, "/bin/true"); r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("a light run: %v", r)
	}
	if _, taken := sandbox.EarlyState(); taken {
		t.Fatal("a run took an early init it cannot hand its stdin to (or a light one)")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the unused early init (pid %d) ended before DiscardEarly: %v", pid, err)
	}
	sandbox.DiscardEarly()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the early init (pid %d) is still there after DiscardEarly: %v", pid, err)
	}
}

// TestEarlyInitGetsTheRunsStdin: an early init is started before its run's
// standard input is known, and the run hands it over: the command reads
// that very file (its offset moves on the host's descriptor, as it does
// for a command started with it), and a command that does not read it
// leaves it where it was. So for an init that started its stage early
// (the guard profile's runs) and one that did not (the workspace
// profile's, whose command starts from the init's thread), and for each
// with the other profile's run, which it was not started for.
func TestEarlyInitGetsTheRunsStdin(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	workspace, _ := workspaceSpec(t)
	for _, k := range []struct {
		name  string
		spec  sandbox.Spec
		stage bool
	}{
		{"guard, stage started early", guardSpec(t), true},
		{"workspace, no stage", workspace, false},
		{"guard, no stage started early", guardSpec(t), false},
		{"workspace, a stage started early", workspace, true},
	} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			args       []string
			out        string
			wantOffset int64
		}{
			{[]string{"/bin/true"}, "", 0},
			{[]string{"/usr/bin/head", "-c", "5"}, "hello", 5},
			{[]string{"/bin/cat"}, " world\n", 12},
		} {
			startEarlyWith(t, k.stage)
			r := runWith(t, k.spec, f, c.args...)
			if r.err != nil || r.res.ExitCode != 0 || r.stdout != c.out {
				t.Fatalf("%s: %v in an early init with a file as stdin: %v; want %q", k.name, c.args, r, c.out)
			}
			if _, taken := sandbox.EarlyState(); !taken {
				t.Fatalf("%s: %v: the run did not take the early init", k.name, c.args)
			}
			if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != c.wantOffset {
				t.Errorf("%s: %v: stdin's offset on the host after the run = %d, %v; want %d", k.name, c.args, off, err, c.wantOffset)
			}
			sandbox.ForgetEarly()
		}
	}
}

// TestEarlyInitStartsAStageOnlyWhenAsked: an early init started for a run
// that will likely need a stage (StartEarly's stage) has one as soon as it
// is in its cgroup; one started for a workspace run has none, which would
// only take CPU from the gate's decision on the other core.
func TestEarlyInitStartsAStageOnlyWhenAsked(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	// A child is listed under the thread that started it, which need not
	// be the init's first: every thread's list is read.
	children := func(pid int) string {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		var all []string
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			all = append(all, strings.Fields(string(b))...)
		}
		return strings.Join(all, " ")
	}
	pid := startEarlyWith(t, true)
	deadline := time.Now().Add(10 * time.Second)
	for children(pid) == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if children(pid) == "" {
		t.Errorf("an early init asked for a stage (pid %d) has no child after 10 s; want its stage", pid)
	}
	sandbox.ForgetEarly()
	pid = startEarlyWith(t, false)
	time.Sleep(500 * time.Millisecond)
	if c := children(pid); c != "" {
		t.Errorf("an early init for a run without a stage (pid %d) has children %s; want none before its plan", pid, c)
	}
}

// TestKeptEarlyInit runs one-shot commands one after another in a process
// that keeps an init ready (a session's supervisor, which refills it after
// each answer): from the second run on, each takes the init that is ready,
// which ends after it, a new one is ready after it, and each command gets
// its own stdin and output. One that died
// while it waited is not used: that run starts its own.
func TestKeptEarlyInit(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	sandbox.KeepEarly("")
	sandbox.RefillEarly() // as after a served request that ran no one-shot sandbox
	if pid, _ := sandbox.EarlyState(); pid != 0 {
		t.Fatalf("KeepEarly started init %d before any one-shot run; want none until one has run", pid)
	}
	dir := t.TempDir()
	run := func(i int) {
		t.Helper()
		in := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(in, []byte(fmt.Sprintf("run %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := runWith(t, guardSpec(t), f, "/bin/cat")
		if want := fmt.Sprintf("run %d\n", i); r.err != nil || r.res.ExitCode != 0 || r.stdout != want {
			t.Fatalf("run %d: %v; want %q", i, r, want)
		}
		sandbox.RefillEarly() // as the supervisor does once it answered
	}
	run(0)
	last := 0
	for i := 1; i <= 3; i++ {
		pid, taken := sandbox.EarlyState()
		if pid == 0 || taken || pid == last {
			t.Fatalf("before run %d: ready init %d (taken %v, last %d); want a new one ready", i, pid, taken, last)
		}
		// A process that keeps inits ready never forks one itself: its
		// spawner does (a fork would stall this process's other threads).
		if ppid := parentOf(t, pid); ppid == os.Getpid() {
			t.Fatalf("before run %d: the ready init %d is this process's child; want its spawner's", i, pid)
		}
		run(i)
		// It exits on its own once it has reported, off the run's path.
		if !gone(pid, 10*time.Second) {
			t.Errorf("run %d did not take and end the ready init %d", i, pid)
		}
		last = pid
	}
	pid, _ := sandbox.EarlyState()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its parent (the spawner) reaps it: this process learns of its death
	// only when the next run hands it its plan.
	if !gone(pid, 10*time.Second) {
		t.Fatalf("the killed ready init %d was not reaped by its spawner", pid)
	}
	run(4)
	pid, taken := sandbox.EarlyState()
	if pid == 0 || taken {
		t.Fatalf("after a run whose ready init had died: ready init %d (taken %v); want a new one", pid, taken)
	}
	sandbox.DiscardEarly()
	// DiscardEarly waits for its exit; its parent, the spawner, reaps it.
	if !gone(pid, 10*time.Second) {
		t.Errorf("the ready init (pid %d) is still there after DiscardEarly", pid)
	}
	run(5)
	if p, _ := sandbox.EarlyState(); p != pid {
		t.Errorf("a run after DiscardEarly started init %d; want none kept", p)
	}
}

// TestKeptEarlyInitOutlivesItsSpawner: when the spawner that keeps a
// process's inits ready is killed (its ready init dies with it), the next
// run starts an init of its own, and the one kept after it comes from a
// new spawner.
func TestKeptEarlyInitOutlivesItsSpawner(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	sandbox.KeepEarly("")
	run := func(what string) {
		t.Helper()
		if r := runIn(t, guardSpec(t), "/bin/echo", "ran"); r.err != nil || r.res.ExitCode != 0 || r.stdout != "ran\n" {
			t.Fatalf("%s: %v; want it to run", what, r)
		}
		sandbox.RefillEarly()
	}
	run("the first run")
	pid, _ := sandbox.EarlyState()
	if pid == 0 {
		t.Fatal("no init kept ready after a one-shot run")
	}
	spawner := parentOf(t, pid)
	if spawner == os.Getpid() {
		t.Fatalf("the ready init %d is this process's child; want its spawner's", pid)
	}
	if err := syscall.Kill(spawner, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !gone(pid, 10*time.Second) {
		t.Fatalf("the ready init %d outlived its spawner %d", pid, spawner)
	}
	run("a run whose ready init died with its spawner")
	next, _ := sandbox.EarlyState()
	if next == 0 || next == pid {
		t.Fatalf("after the spawner died: ready init %d; want a new one", next)
	}
	if p := parentOf(t, next); p == os.Getpid() || p == spawner {
		t.Errorf("the init kept after the spawner died is the child of %d (this process %d, the dead spawner %d); want a new spawner's", p, os.Getpid(), spawner)
	}
	run("a run with the new spawner's init")
}

// TestEarlyInitEndedWhenTheRunFails: a run that takes the early init and
// then cannot build its sandbox (a granted path that does not exist) ends
// the init, which never got a plan.
func TestEarlyInitEndedWhenTheRunFails(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Cleanup(sandbox.ForgetEarly)
	pid := startEarly(t)
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

// startEarly starts an early init with a stage, as warden exec does for
// the guard profile, and returns its pid; the test ends it.
func startEarly(t *testing.T) int {
	t.Helper()
	return startEarlyWith(t, true)
}

// startEarlyWith is startEarly, with or without the stage.
func startEarlyWith(t *testing.T, stage bool) int {
	t.Helper()
	t.Cleanup(sandbox.ForgetEarly)
	sandbox.StartEarly("", stage)
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

// parentOf returns the parent of process pid.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(b), ") ")
	var state string
	var ppid int
	if _, err := fmt.Sscan(after, &state, &ppid); err != nil {
		t.Fatalf("parse /proc/%d/stat: %v", pid, err)
	}
	return ppid
}

// gone reports whether process pid has ended and been reaped within d.
func gone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return true
		}
	}
	return false
}

// TestNothingOfAOneShotRunOutlivesIt: a command leaves processes in the
// background: one that would write to the project a moment later, one that
// holds the output pipe, and a loop that writes all the time with its
// streams closed. The run returns without waiting for it, and nothing
// it left writes anything after the run returned: in a one-shot process
// (which waits for the init's exit) and in a long-lived one (which keeps
// an init ready and answers as soon as the init has reported).
func TestNothingOfAOneShotRunOutlivesIt(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	for _, longLived := range []bool{false, true} {
		sandbox.ForgetEarly()
		if longLived {
			sandbox.KeepEarly("")
			t.Cleanup(sandbox.ForgetEarly)
		}
		s, home := workspaceSpec(t)
		late := filepath.Join(s.Project, "late.txt")
		start := time.Now()
		r := runAt(t, s, home, "/bin/bash", "-c", `(sleep 0.5; echo late > late.txt) & sleep 30 &
(while :; do echo x >> tick.txt; sleep 0.001; done) </dev/null >/dev/null 2>&1 &
until [ -s tick.txt ]; do sleep 0.001; done; echo started`)
		if r.err != nil || r.res.ExitCode != 0 || r.stdout != "started\n" {
			t.Fatalf("long-lived %v: %v", longLived, r)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("long-lived %v: the run took %s; want it to end with its command, not with what it left running", longLived, took)
		}
		ticks := func() int64 {
			st, err := os.Stat(filepath.Join(s.Project, "tick.txt"))
			if err != nil {
				t.Fatal(err)
			}
			return st.Size()
		}
		at := ticks()
		time.Sleep(time.Second)
		if now := ticks(); now != at {
			t.Errorf("long-lived %v: a loop the command left went on writing after the run returned (%d bytes, then %d)", longLived, at, now)
		}
		if _, err := os.Stat(late); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("long-lived %v: a process the command left wrote %s after the run returned: %v", longLived, late, err)
		}
	}
}
