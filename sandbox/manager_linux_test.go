//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

func testManager(dir string) *sandbox.Manager {
	self, _ := os.Executable()
	return &sandbox.Manager{
		Dir:         dir,
		HealthEvery: 100 * time.Millisecond,
		Supervisor: func(name string) *exec.Cmd {
			return exec.Command(self, "sandbox-supervise", dir, name)
		},
		Native: sandbox.Native{GitGuard: plantedGuard},
	}
}

func TestLifecycleTransitions(t *testing.T) {
	for _, c := range []struct {
		from, to sandbox.State
		ok       bool
	}{
		{sandbox.StateUninitialized, sandbox.StateInitializing, true},
		{sandbox.StateUninitialized, sandbox.StateReady, false},
		{sandbox.StateInitializing, sandbox.StateReady, true},
		{sandbox.StateReady, sandbox.StateDegraded, true},
		{sandbox.StateDegraded, sandbox.StateRecovering, true},
		{sandbox.StateRecovering, sandbox.StateReady, true},
		{sandbox.StateReady, sandbox.StateStopping, true},
		{sandbox.StateStopping, sandbox.StateStopped, true},
		{sandbox.StateStopped, sandbox.StateReady, false},
		{sandbox.StateStopped, sandbox.StateInitializing, true},
		{sandbox.StateStopping, sandbox.StateReady, false},
	} {
		if got := c.from.CanBecome(c.to); got != c.ok {
			t.Errorf("%s.CanBecome(%s) = %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}

func TestSandboxNames(t *testing.T) {
	for _, ok := range []string{"dev", "agent-1", "a_b.c"} {
		if err := sandbox.ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "a b", strings.Repeat("x", 65)} {
		if sandbox.ValidName(bad) == nil {
			t.Errorf("ValidName(%q) accepted it", bad)
		}
	}
}

// TestLongLivedSandbox takes one sandbox through its whole lifecycle: start,
// exec, the supervisor recovering it after its init is killed, an explicit
// recovery, stop, and the event log of every transition.
func TestLongLivedSandbox(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec := guardSpec(t)
	ctx := context.Background()
	info, err := m.Start(ctx, "sb", "guard", spec)
	if err != nil {
		t.Fatalf("Start: %v (%+v)", err, info)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "sb") })
	if info.State != sandbox.StateReady || info.Init == 0 {
		t.Fatalf("after Start the sandbox is %s with init %d, want ready", info.State, info.Init)
	}

	run := func(args ...string) (sandbox.Result, string, error) {
		var out bytes.Buffer
		res, err := m.Exec(ctx, "sb", sandbox.Command{Args: args, Env: []string{"PATH=" + systemPath, "GITHUB_TOKEN=x"}, Stdout: &out, Stderr: &out}, sandbox.Limits{})
		return res, out.String(), err
	}
	if res, out, err := run("cat", spec.Project+"/missing"); err != nil || res.ExitCode != 1 || !strings.Contains(out, "No such file") {
		t.Fatalf("exec cat = %+v %q %v, want exit 1 and cat's error", res, out, err)
	}
	self, _ := os.Executable()
	if res, out, err := run(self, "sandbox-probe", "env"); err != nil || res.ExitCode != 0 || strings.Contains(out, "GITHUB_TOKEN") {
		t.Fatalf("exec env = %+v %q %v, want exit 0 without GITHUB_TOKEN", res, out, err)
	}
	if res, out, err := run(self, "sandbox-probe", "spawn"); err != nil || res.ExitCode != 1 || !strings.Contains(out, "not permitted") {
		t.Fatalf("exec spawn = %+v %q %v, want it refused", res, out, err)
	}
	if res, out, err := run(self, "sandbox-probe", "write", spec.Project+"/x"); err != nil || res.ExitCode != 1 {
		t.Fatalf("exec write project = %+v %q %v, want it refused", res, out, err)
	}
	var ee *sandbox.ExecError
	if _, _, err := run("no-such-command-xyz"); !errors.As(err, &ee) {
		t.Fatalf("exec a missing command: %v, want an ExecError", err)
	}
	if res, err := m.Exec(ctx, "sb", sandbox.Command{Args: []string{"sleep", "5"}, Env: []string{"PATH=" + systemPath}}, sandbox.Limits{Wall: 200 * time.Millisecond}); err != nil || res.Limit != sandbox.LimitWall {
		t.Fatalf("exec sleep past its timeout = %+v %v, want limit timeout", res, err)
	}

	if platform.CgroupWritable {
		res, err := m.Exec(ctx, "sb", sandbox.Command{Args: []string{"python3", "-c", "b = b'x' * (200 << 20)"}, Env: []string{"PATH=" + systemPath}}, sandbox.Limits{})
		if err != nil || res.Limit != sandbox.LimitMemory {
			t.Fatalf("exec allocating 200 MB under the sandbox's 64 MB cap = %+v %v, want limit memory", res, err)
		}
	}

	// Kill the init: the supervisor notices and brings the sandbox back.
	oldInit := info.Init
	if err := syscall.Kill(oldInit, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err = m.Status("sb")
		if err == nil && info.State == sandbox.StateReady && info.Init != oldInit && info.Init != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not recover after its init was killed: %+v %v", info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, _, err := run("true"); err != nil {
		t.Fatalf("exec after recovery: %v", err)
	}

	if info, err = m.Recover(ctx, "sb"); err != nil || info.State != sandbox.StateReady {
		t.Fatalf("Recover = %+v %v, want ready", info, err)
	}
	lastInit := info.Init
	if info, err = m.Stop(ctx, "sb"); err != nil || info.State != sandbox.StateStopped {
		t.Fatalf("Stop = %+v %v, want stopped", info, err)
	}
	time.Sleep(50 * time.Millisecond)
	if syscall.Kill(lastInit, 0) == nil {
		t.Errorf("the sandbox's init (pid %d) is still running after Stop", lastInit)
	}
	if _, _, err := run("true"); err == nil {
		t.Errorf("exec in a stopped sandbox succeeded")
	}

	evs, err := m.Events("sb")
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, e := range evs {
		path = append(path, e.To.String())
	}
	got := strings.Join(path, " ")
	for _, want := range []string{"initializing ready", "recovering ready", "stopping stopped"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %q lack %q", got, want)
		}
	}
}

// BenchmarkExecRunning measures one command in an already running
// sandbox, the cost `warden sandbox exec` pays beyond its own start.
func BenchmarkExecRunning(b *testing.B) {
	platformOnce.Do(func() { platform = sandbox.Probe() })
	if len(platform.Modes) < 3 {
		b.Skip("this kernel cannot run the standard sandbox")
	}
	m := testManager(b.TempDir())
	s := sandbox.Spec{Mode: sandbox.ModeStandard, Project: b.TempDir(), Workspace: b.TempDir(), NoSpawn: true,
		Limits: sandbox.Limits{Memory: 64 << 20, CPU: 10 * time.Second, Wall: 30 * time.Second, Pids: 64, Output: 1 << 20}}
	if _, err := m.Start(context.Background(), "bench", "guard", s); err != nil {
		b.Fatal(err)
	}
	defer m.Stop(context.Background(), "bench")
	for b.Loop() {
		res, err := m.Exec(context.Background(), "bench", sandbox.Command{Args: []string{"/bin/true"}}, sandbox.Limits{})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("/bin/true: %v %+v", err, res)
		}
	}
}

// TestDegradedSandboxStarts: a sandbox whose first health check fails (on
// a loaded machine /bin/true may not finish within its 5 s) has started:
// its commands run, so Start and Ensure give it back instead of an error
// that would make a session give up its world.
func TestDegradedSandboxStarts(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec := guardSpec(t)
	// The health check runs /bin/true; masked, it cannot. The test
	// binary's supervisor of a "degraded" sandbox checks only once, at the
	// start: three failed checks would rebuild it under the command.
	spec.Hidden = []string{"/usr/bin/true"}
	ctx := context.Background()
	info, err := m.Start(ctx, "degraded", "guard", spec)
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "degraded") })
	if err != nil || info.State != sandbox.StateDegraded {
		t.Fatalf("Start of a sandbox whose health check fails = %s, %v; want degraded and no error", info.State, err)
	}
	again, started, err := m.Ensure(ctx, "degraded", "guard", spec)
	if err != nil || started || again.Init != info.Init {
		t.Fatalf("Ensure of the degraded sandbox = %+v started=%v %v; want the same init, not started anew", again, started, err)
	}
	self, _ := os.Executable()
	var out bytes.Buffer
	res, err := m.Exec(ctx, "degraded", sandbox.Command{Args: []string{self, "sandbox-probe", "env"}, Env: []string{"PATH=" + systemPath}, Stdout: &out, Stderr: &out}, sandbox.Limits{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("a command in the degraded sandbox = %+v %q %v; want it run", res, out.String(), err)
	}
}

// TestSlowHealthChecksDoNotRebuild: health checks whose command only ran
// too long (a loaded machine) leave the sandbox degraded but never rebuild
// its init, which would end what its commands left running; a check that
// fails outright still counts (TestDegradedSandboxStarts, and
// TestLongLivedSandbox's killed init).
func TestSlowHealthChecksDoNotRebuild(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	ctx := context.Background()
	// The test binary's supervisor of a "slowcheck" sandbox gives its
	// health check's /bin/true 1 ns: every check runs past it.
	info, err := m.Start(ctx, "slowcheck", "guard", guardSpec(t))
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "slowcheck") })
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(time.Second) // ten checks at the test manager's 100 ms
	now, err := m.Status("slowcheck")
	if err != nil || now.Init != info.Init || now.State != sandbox.StateDegraded {
		t.Fatalf("after slow checks the sandbox is %s with init %d (was %d), %v; want degraded with the same init", now.State, now.Init, info.Init, err)
	}
	evs, _ := m.Events("slowcheck")
	for _, e := range evs {
		if e.To == sandbox.StateRecovering {
			t.Fatalf("slow health checks rebuilt the sandbox: %+v", e)
		}
	}
}
