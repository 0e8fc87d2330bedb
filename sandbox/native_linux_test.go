//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
	"github.com/agentwarden/warden/sandbox/internal/int80"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	if len(os.Args) > 2 && os.Args[1] == "sandbox-probe" {
		os.Exit(probe(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) == 4 && os.Args[1] == "sandbox-supervise" {
		// The supervisor of TestLongLivedSandbox, started detached by Start.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		m := testManager(os.Args[2])
		m.Egress = func(sandbox.Info) (sandbox.Egress, error) { return &answerServer{answer: "proxied"}, nil }
		if strings.HasPrefix(os.Args[3], "slowcheck") { // TestSlowHealthChecksDoNotRebuild
			m.HealthWall = time.Nanosecond
		}
		if strings.HasPrefix(os.Args[3], "degraded") || strings.HasPrefix(os.Args[3], "nohealth") { // TestDegradedSandboxStarts, TestInterruptedCommandIsSwept: its first check only
			m.HealthEvery = time.Hour
		}
		if err := m.Supervise(ctx, os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "supervise:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe is what the test binary does when it runs as the sandboxed
// command. It prints what happened and exits 0 when the action succeeded,
// 1 when it failed.
func probe(action string, args []string) int {
	var err error
	switch action {
	case "read":
		var b []byte
		if b, err = os.ReadFile(args[0]); err == nil {
			fmt.Printf("read %d bytes\n", len(b))
		}
	case "list":
		var names []string
		if names, err = readDirNames(args[0]); err == nil {
			fmt.Printf("listed %d names\n", len(names))
		}
	case "write":
		err = os.WriteFile(args[0], []byte("x"), 0o644)
	case "tcp":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", args[0], 2*time.Second); err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		if c, err = net.Dial("udp", args[0]); err == nil {
			_, err = c.Write([]byte("escaped"))
			c.Close()
		}
	case "raw":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP); err == nil {
			syscall.Close(fd)
		}
	case "get":
		// An HTTP GET with net/http's defaults (it honours the proxy
		// variables, but never proxies a loopback address).
		var resp *http.Response
		if resp, err = (&http.Client{Timeout: 5 * time.Second}).Get(args[0]); err == nil {
			var b []byte
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("%d %s\n", resp.StatusCode, b)
		}
	case "unix":
		var c net.Conn
		if c, err = net.Dial("unix", args[0]); err == nil {
			c.Close()
		}
	case "spawn":
		err = exec.Command("/bin/true").Run()
	case "unshare-user":
		err = syscall.Unshare(syscall.CLONE_NEWUSER)
	case "clone-user":
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}
		err = cmd.Run()
	case "spin":
		for {
		}
	case "procs":
		entries, _ := os.ReadDir("/proc")
		var pids []string
		for _, e := range entries {
			if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				pids = append(pids, e.Name())
			}
		}
		fmt.Println(strings.Join(pids, " "))
	case "int80":
		fmt.Println("int80 getpid returned", int80.Call(int80.Getpid))
		fmt.Println("int80 mount returned", int32(int80.Call(int80.Mount)))
	case "env":
		fmt.Println(strings.Join(os.Environ(), "\n"))
	case "status":
		b, _ := os.ReadFile("/proc/self/status")
		fmt.Print(string(b))
	case "print":
		n := 0
		fmt.Sscan(args[0], &n)
		os.Stdout.Write(bytes.Repeat([]byte("x"), n))
	default:
		err = fmt.Errorf("unknown probe %q", action)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

var (
	platformOnce sync.Once
	platform     sandbox.Platform
)

// requireMode skips when this kernel cannot run mode; CI runs as root on a
// kernel that can, so there these tests always run.
func requireMode(t *testing.T, mode sandbox.Mode) {
	t.Helper()
	platformOnce.Do(func() { platform = sandbox.Probe() })
	for _, m := range platform.Modes {
		if m == mode {
			return
		}
	}
	t.Skipf("this kernel cannot run sandbox mode %s: %s", mode, platform.Missing(mode))
}

const systemPath = "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// guardSpec is the guard profile's isolation around a fresh project and
// workspace: project read-only, no network, no spawning, 64 MB, 10 s CPU.
func guardSpec(t *testing.T) sandbox.Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.Spec{
		Mode:      sandbox.ModeStandard,
		Project:   t.TempDir(),
		Workspace: t.TempDir(),
		ReadOnly:  []string{self},
		NoSpawn:   true,
		Limits: sandbox.Limits{
			Memory: 64 << 20, CPU: 10 * time.Second, Wall: 30 * time.Second,
			Pids: 64, Output: 1 << 20,
		},
	}
}

type run struct {
	res            sandbox.Result
	stdout, stderr string
	err            error
}

func runIn(t *testing.T, s sandbox.Spec, args ...string) run {
	t.Helper()
	return runWith(t, s, nil, args...)
}

// runWith is runIn with stdin as the command's standard input.
func runWith(t *testing.T, s sandbox.Spec, stdin io.Reader, args ...string) run {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{
		Args: args, Dir: s.Project, Env: []string{"PATH=" + systemPath, "HOME=" + s.Workspace},
		Stdin: stdin, Stdout: &out, Stderr: &errb,
	})
	return run{res, out.String(), errb.String(), err}
}

func probeIn(t *testing.T, s sandbox.Spec, action string, args ...string) run {
	t.Helper()
	self, _ := os.Executable()
	return runIn(t, s, append([]string{self, "sandbox-probe", action}, args...)...)
}

func (r run) String() string {
	return fmt.Sprintf("exit %d signal %d limit %q err %v\nstdout: %s\nstderr: %s", r.res.ExitCode, r.res.Signal, r.res.Limit, r.err, r.stdout, r.stderr)
}

// TestGuardProfileRefuses runs each thing the guard profile must stop
// inside a real sandbox and checks that it failed.
func TestGuardProfileRefuses(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			t.Errorf("a sandboxed command reached the host's TCP listener")
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	outside := outsideFile(t)

	cases := []struct {
		name   string
		setup  func(t *testing.T, s *sandbox.Spec) []string // returns the probe and its arguments
		expect string                                       // substring of the probe's output
	}{
		{"read a denied path inside the project", func(t *testing.T, s *sandbox.Spec) []string {
			dir := filepath.Join(s.Project, ".secrets")
			mustWrite(t, filepath.Join(dir, "key"), "hunter2")
			s.Hidden = []string{dir}
			return []string{"read", filepath.Join(dir, "key")}
		}, "error:"},
		{"read a file outside the allowed paths", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"read", outside}
		}, "permission denied"},
		{"read /etc/shadow", func(t *testing.T, s *sandbox.Spec) []string {
			if _, err := os.Stat("/etc/shadow"); err != nil {
				t.Skip("this host has no /etc/shadow")
			}
			return []string{"read", "/etc/shadow"}
		}, "read 0 bytes"},
		{"write the read-only project", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"write", filepath.Join(s.Project, "new")}
		}, "error:"},
		{"write /etc", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"write", "/etc/warden-sandbox-test"}
		}, "error:"},
		{"connect to a host TCP listener", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"tcp", host.Addr().String()}
		}, "error:"},
		{"connect to the internet", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"tcp", "1.1.1.1:443"}
		}, "error:"},
		{"send UDP to the host", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"udp", udp.LocalAddr().String()}
		}, ""},
		{"open a raw socket", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"raw"}
		}, "operation not permitted"},
		{"connect to a host Unix socket in a readable directory", func(t *testing.T, s *sandbox.Spec) []string {
			path := filepath.Join(s.Project, "agent.sock")
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				if c, err := l.Accept(); err == nil {
					t.Errorf("a sandboxed command reached a host Unix socket")
					c.Close()
				}
			}()
			return []string{"unix", path}
		}, "operation not permitted"},
		{"spawn a process", func(t *testing.T, s *sandbox.Spec) []string {
			return []string{"spawn"}
		}, "operation not permitted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := guardSpec(t)
			args := c.setup(t, &s)
			r := probeIn(t, s, args[0], args[1:]...)
			if r.err != nil {
				t.Fatalf("sandbox failed: %v", r)
			}
			if c.expect == "" {
				return
			}
			wantFail := !strings.HasPrefix(c.expect, "read ")
			if !strings.Contains(r.stdout, c.expect) || wantFail != (r.res.ExitCode == 1) {
				t.Fatalf("probe %v = %v, want a failure mentioning %q", args, r, c.expect)
			}
		})
	}
	udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _, err := udp.ReadFrom(make([]byte, 64)); err == nil {
		t.Errorf("the host received %d UDP bytes from the sandbox", n)
	}
}

// outsideFile is a readable host file outside every granted path and
// outside /tmp (which the sandbox replaces with its own, so a file there
// would be missing rather than refused).
func outsideFile(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "warden-sandbox-test-")
	if err != nil {
		t.Fatalf("create a file outside the sandbox in /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "outside")
	mustWrite(t, path, "not for the sandbox")
	return path
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNoNewNamespaces checks that a command allowed to spawn still cannot
// create namespaces, which would give it capabilities over them.
func TestNoNewNamespaces(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	for _, action := range []string{"unshare-user", "clone-user"} {
		t.Run(action, func(t *testing.T) {
			s := guardSpec(t)
			s.NoSpawn = false
			r := probeIn(t, s, action)
			if r.err != nil || r.res.ExitCode != 1 || !strings.Contains(r.stdout, "not permitted") {
				t.Fatalf("probe %s = %v; want it refused", action, r)
			}
		})
	}
	s := guardSpec(t)
	s.NoSpawn = false
	if r := probeIn(t, s, "spawn"); r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("spawning a plain process with spawning allowed: %v; want it to work", r)
	}
}

func TestGuardProfileHidesHostProcesses(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	r := probeIn(t, guardSpec(t), "procs")
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("procs probe: %v", r)
	}
	pids := strings.Fields(strings.SplitN(r.stdout, "\n", 2)[0])
	// The init (pid 1) and the command, nothing from the host.
	if len(pids) != 2 || pids[0] != "1" {
		t.Fatalf("/proc inside the sandbox lists pids %v, want the init (1) and the command only", pids)
	}
}

// TestCommandsDropCapabilities checks a command started by the stage
// (guard: no new processes) and one started from the init's restricted
// thread (new processes allowed): no capability in any set, no_new_privs,
// seccomp, and the init's environment, memory map and descriptors closed
// to it. (A root caller's command is the init's owner and can list the
// init's descriptor numbers, not open them; an ordinary caller's cannot
// list them: TestCommandRunsAsTheCallersUID.)
func TestCommandsDropCapabilities(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	spawning := guardSpec(t)
	spawning.NoSpawn = false
	for _, s := range []sandbox.Spec{guardSpec(t), spawning} {
		r := probeIn(t, s, "status")
		if r.err != nil || r.res.ExitCode != 0 {
			t.Fatalf("status probe (no_spawn %v): %v", s.NoSpawn, r)
		}
		for _, want := range []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
			"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("/proc/self/status in the sandbox (no_spawn %v) lacks %q:\n%s", s.NoSpawn, want, r.stdout)
			}
		}
		for _, f := range []string{"/proc/1/environ", "/proc/1/maps", "/proc/1/fd/4"} {
			if r := probeIn(t, s, "read", f); r.err != nil || r.res.ExitCode == 0 {
				t.Errorf("the command (no_spawn %v) read the init's %s: %v", s.NoSpawn, f, r)
			}
		}
	}
}

// TestI386CallsAreJudged: a call through the i386 ABI (int 0x80, as a
// 32-bit program makes) runs, judged by the filter under its i386 number:
// getpid returns the pid, mount is refused.
func TestI386CallsAreJudged(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if !int80.Available {
		t.Skip("no i386 ABI on this architecture")
	}
	r := probeIn(t, guardSpec(t), "int80")
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("int 0x80 calls in the sandbox: %v", r)
	}
	if strings.Contains(r.stdout, "getpid returned 0\n") || !strings.Contains(r.stdout, "getpid returned ") {
		t.Errorf("getpid through int 0x80: %q", r.stdout)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("mount returned %d\n", -int32(syscall.EPERM))) {
		t.Errorf("mount through int 0x80 was not refused with EPERM: %q", r.stdout)
	}
}

// TestCPULimitKills: an endless loop is killed by its CPU limit, and the
// run says so. The limit is 2 s of CPU with a wall clock of 60 s, so that on
// a loaded machine (a load of 7 on 2 cores gives the loop a quarter of a
// core) the CPU limit still comes long before the wall clock.
func TestCPULimitKills(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	t.Parallel()
	s := guardSpec(t)
	s.Limits.CPU, s.Limits.Wall = 2*time.Second, 60*time.Second
	r := probeIn(t, s, "spin")
	if r.err != nil {
		t.Fatal(r)
	}
	if r.res.Limit != sandbox.LimitCPU {
		t.Fatalf("an endless loop under a 2s CPU limit: %v (CPU %v in %v); want limit cpu", r, r.res.CPU, r.res.Wall)
	}
	if r.res.CPU < 1800*time.Millisecond || r.res.CPU > 4*time.Second {
		t.Errorf("the loop ran %v of CPU in %v; want it killed at about 2s", r.res.CPU, r.res.Wall)
	}
}

func TestMemoryLimitKills(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if !platform.CgroupWritable {
		t.Skipf("no writable memory cgroup here (%s); the RLIMIT_AS fallback is covered by the warning", platform.CgroupError)
	}
	t.Parallel()
	r := runIn(t, guardSpec(t), "python3", "-c", "b = b'x' * (200 << 20); print(len(b))")
	if r.err != nil {
		t.Fatal(r)
	}
	if r.res.Limit != sandbox.LimitMemory || r.res.ExitCode == 0 {
		t.Fatalf("allocating 200 MB under a 64 MB cap: %v; want it killed by the memory limit", r)
	}
}

func TestNothingOutlivesTheSandbox(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	s.NoSpawn = false
	marker := "313.25"
	r := runIn(t, s, "sh", "-c", "sleep "+marker+" & sleep "+marker+" & echo started")
	if r.err != nil || !strings.Contains(r.stdout, "started") {
		t.Fatalf("background sleeps: %v", r)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v are still running after the sandbox ended", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesWith(arg string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(arg)) {
			found = append(found, e.Name())
		}
	}
	return found
}

// TestGuardProfileRuns checks the everyday commands the guard profile must
// still allow.
func TestGuardProfileRuns(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	cases := []struct {
		name string
		args func(s sandbox.Spec) []string
		want string
	}{
		{"ls", func(s sandbox.Spec) []string { return []string{"ls", s.Project} }, "readme"},
		{"cat", func(s sandbox.Spec) []string { return []string{"cat", filepath.Join(s.Project, "readme")} }, "hello project"},
		{"python3", func(sandbox.Spec) []string { return []string{"python3", "-c", "print(1)"} }, "1"},
		{"go version", func(sandbox.Spec) []string { return []string{"go", "version"} }, "go version go1."},
		{"write in the workspace", func(s sandbox.Spec) []string {
			self, _ := os.Executable()
			return []string{self, "sandbox-probe", "write", filepath.Join(s.Workspace, "out")}
		}, "ok"},
		{"read the project", func(s sandbox.Spec) []string {
			self, _ := os.Executable()
			return []string{self, "sandbox-probe", "read", filepath.Join(s.Project, "readme")}
		}, "ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := guardSpec(t)
			mustWrite(t, filepath.Join(s.Project, "readme"), "hello project")
			r := runIn(t, s, c.args(s)...)
			if r.err != nil || r.res.ExitCode != 0 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("%v: %v; want exit 0 and %q", c.args(s), r, c.want)
			}
		})
	}
}

func TestEnvironmentScrubbed(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	s.PassEnv = []string{"NPM_TOKEN"}
	self, _ := os.Executable()
	var out bytes.Buffer
	_, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{
		Args:   []string{self, "sandbox-probe", "env"},
		Env:    []string{"PATH=" + systemPath, "AWS_SECRET_ACCESS_KEY=a", "GITHUB_TOKEN=b", "MY_API_KEY=c", "NPM_TOKEN=d", "LANG=C"},
		Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	env := out.String()
	for _, gone := range []string{"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_API_KEY"} {
		if strings.Contains(env, gone) {
			t.Errorf("the sandbox's environment still has %s:\n%s", gone, env)
		}
	}
	for _, kept := range []string{"NPM_TOKEN=d", "LANG=C", "TMPDIR=/tmp"} {
		if !strings.Contains(env, kept) {
			t.Errorf("the sandbox's environment lacks %s:\n%s", kept, env)
		}
	}
}

func TestOutputLimitKills(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	s.Limits.Output = 4096
	r := probeIn(t, s, "print", "1000000")
	if r.err != nil {
		t.Fatal(r)
	}
	if r.res.Limit != sandbox.LimitOutput || len(r.stdout) != 4096 {
		t.Fatalf("printing 1 MB under a 4 KB output limit: limit %q, %d bytes kept; want limit output and 4096 bytes", r.res.Limit, len(r.stdout))
	}
}

func TestFileSizeLimitKills(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	s.Limits.FileSize = 1 << 20
	r := runIn(t, s, "cp", "/dev/zero", filepath.Join(s.Workspace, "big"))
	if r.err != nil {
		t.Fatal(r)
	}
	st, err := os.Stat(filepath.Join(s.Workspace, "big"))
	if r.res.Limit != sandbox.LimitFileSize || err != nil || st.Size() > 1<<20 {
		t.Fatalf("cp /dev/zero under a 1 MB file-size limit: %v (file: %v %v); want limit file-size and at most 1 MB written", r, st, err)
	}
}

func TestWallTimeoutKills(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	s.Limits.Wall = 300 * time.Millisecond
	r := runIn(t, s, "sleep", "20")
	if r.err != nil {
		t.Fatal(r)
	}
	if r.res.Limit != sandbox.LimitWall || r.res.Wall > 5*time.Second {
		t.Fatalf("sleep 20 under a 300ms timeout: %v after %v; want limit timeout", r, r.res.Wall)
	}
}

func TestExitStatusAndMissingCommand(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s := guardSpec(t)
	s.NoSpawn = false
	if r := runIn(t, s, "sh", "-c", "exit 7"); r.err != nil || r.res.ExitCode != 7 {
		t.Errorf("sh -c 'exit 7' = %v, want exit 7", r)
	}
	r := runIn(t, s, "no-such-command-here")
	var ee *sandbox.ExecError
	if !errors.As(r.err, &ee) || ee.Err != syscall.ENOENT {
		t.Errorf("a missing command: %v, want an ExecError for ENOENT", r)
	}
}

func TestMaxModeReadOnlyRoot(t *testing.T) {
	requireMode(t, sandbox.ModeMax)
	s := guardSpec(t)
	s.Mode = sandbox.ModeMax
	s.NoSpawn = false // max forbids spawning on its own
	self, _ := os.Executable()
	r := runIn(t, s, self, "sandbox-probe", "write", filepath.Join(s.Workspace, "out"))
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("writing the workspace in max mode: %v", r)
	}
	r = runIn(t, s, self, "sandbox-probe", "write", "/tmp/scratch")
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("writing the private /tmp in max mode: %v", r)
	}
	r = runIn(t, s, self, "sandbox-probe", "spawn")
	if r.err != nil || r.res.ExitCode != 1 {
		t.Fatalf("spawning in max mode: %v; want it refused", r)
	}
}

func TestLightModeRefuses(t *testing.T) {
	requireMode(t, sandbox.ModeLight)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	outside := outsideFile(t)
	for _, c := range []struct {
		name string
		args func(s sandbox.Spec) []string
	}{
		{"read outside", func(sandbox.Spec) []string { return []string{"read", outside} }},
		{"write the project", func(s sandbox.Spec) []string { return []string{"write", filepath.Join(s.Project, "x")} }},
		{"tcp to the host", func(sandbox.Spec) []string { return []string{"tcp", host.Addr().String()} }},
		{"spawn", func(sandbox.Spec) []string { return []string{"spawn"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := guardSpec(t)
			s.Mode = sandbox.ModeLight
			args := c.args(s)
			r := probeIn(t, s, args[0], args[1:]...)
			if r.err != nil || r.res.ExitCode != 1 {
				t.Fatalf("light mode %v = %v; want the probe refused", args, r)
			}
			if r.res.Mode != sandbox.ModeLight || len(r.res.Warnings) == 0 {
				t.Errorf("light mode ran as %s with warnings %q; want light, with what it lacks said", r.res.Mode, r.res.Warnings)
			}
		})
	}
	s := guardSpec(t)
	s.Mode = sandbox.ModeLight
	if r := probeIn(t, s, "write", filepath.Join(s.Workspace, "out")); r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("light mode writing the workspace: %v", r)
	}
}

// BenchmarkRun measures one command in a fresh sandbox from a process that
// is already running (a daemon's cost per command): /bin/true under the
// guard profile's isolation.
func BenchmarkRun(b *testing.B) {
	for _, mode := range []sandbox.Mode{sandbox.ModeLight, sandbox.ModeStandard} {
		b.Run(string(mode), func(b *testing.B) {
			platformOnce.Do(func() { platform = sandbox.Probe() })
			if !slices.Contains(platform.Modes, mode) {
				b.Skipf("this kernel cannot run mode %s", mode)
			}
			s := sandbox.Spec{Mode: mode, Project: b.TempDir(), Workspace: b.TempDir(), NoSpawn: true,
				Limits: sandbox.Limits{Memory: 64 << 20, CPU: 10 * time.Second, Wall: 30 * time.Second, Pids: 64, Output: 1 << 20}}
			n := &sandbox.Native{}
			for b.Loop() {
				res, err := n.Run(context.Background(), s, sandbox.Command{Args: []string{"/bin/true"}})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("/bin/true: %v %+v", err, res)
				}
			}
		})
	}
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
