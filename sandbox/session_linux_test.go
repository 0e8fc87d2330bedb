//go:build amd64 || arm64

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// TestSessionWorld runs the commands of one agent session in one
// long-lived workspace sandbox, as warden exec does for a session: a server
// one command starts in the background answers the next command on the
// sandbox's own loopback, /tmp carries over, and the egress proxy served
// by the supervisor is the way out.
func TestSessionWorld(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	m.Egress = func(sandbox.Info) (sandbox.Egress, error) { return &answerServer{answer: "proxied"}, nil }
	spec, home := workspaceSpec(t)
	spec.Tmp, spec.Quarantine = "", ""
	spec.Background, spec.Session, spec.UserHome = true, "session-1", home
	spec.Net = sandbox.NetProxy
	spec.Egress = &answerServer{answer: "unused"} // the supervisor builds its own
	ctx := context.Background()
	if _, err := m.Start(ctx, "session", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "session") })
	python := pythonPath(t)
	run := worldShell(t, m, "session", spec.Project, home)
	out, res := run("echo 'hello from the dev server' > index.html; nohup " + python + " -m http.server 8765 --bind 127.0.0.1 > /tmp/serve.log 2>&1 & sleep 1; echo started")
	if res.ExitCode != 0 || !strings.Contains(out, "started") {
		t.Fatalf("starting the server: exit %d: %s", res.ExitCode, out)
	}
	var got string
	for range 20 {
		got, res = run("curl -s http://127.0.0.1:8765/index.html; cat /tmp/serve.log | head -1")
		if strings.Contains(got, "hello from the dev server") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(got, "hello from the dev server") {
		t.Fatalf("the next command cannot reach the server the previous one started: exit %d: %s", res.ExitCode, got)
	}
	// A background process that keeps the command's output open neither
	// holds the caller up nor dies of a closed pipe.
	start := time.Now()
	got, res = run("(while true; do echo tick; sleep 0.2; done) & echo left-running")
	if res.ExitCode != 0 || !strings.Contains(got, "left-running") || time.Since(start) > 5*time.Second {
		t.Errorf("a command leaving a writer in the background: exit %d after %s: %q", res.ExitCode, time.Since(start), got)
	}
	time.Sleep(500 * time.Millisecond)
	if got, _ = run("pgrep -fc 'echo tic[k]'"); strings.TrimSpace(got) == "0" {
		t.Errorf("the background writer died after its command ended: %q", got)
	}
	// A later command can stop what an earlier one left running.
	got, res = run("pkill -f 'echo tic[k]'; sleep 0.3; pgrep -fc 'echo tic[k]' || echo none-left")
	if !strings.Contains(got, "none-left") {
		t.Errorf("a later command cannot stop the background process: exit %d: %q", res.ExitCode, got)
	}
	// The user's home (under /tmp here, which the sandbox replaces) is
	// readable but its masks, and read-only.
	// (Everything on stdout: the order of two pipes' lines is not kept.)
	got, _ = run("grep -c someone ~/.gitconfig; cat ~/.ssh/id_rsa 2>&1; { echo x >> ~/.bashrc; } 2>&1")
	if !strings.HasPrefix(got, "1") || strings.Contains(got, "WORKSPACE-SECRET") {
		t.Errorf("the world's view of the home: %q; want .gitconfig read, the key masked", got)
	}
	if b, _ := os.ReadFile(home + "/.bashrc"); string(b) != "# rc\n" {
		t.Errorf("a session command changed ~/.bashrc: %q", b)
	}
	got, _ = run("curl -s http://example.invalid/")
	if !strings.Contains(got, "proxied example.invalid") {
		t.Errorf("the session's commands do not reach the egress proxy: %q", got)
	}
	got, _ = run("env | grep -i '^no_proxy='")
	if !strings.Contains(got, "localhost") {
		t.Errorf("NO_PROXY does not name the sandbox's own loopback: %q", got)
	}
	// A command whose directory is gone (a later command removed it) is
	// said to be so, not a command not found.
	gone := filepath.Join(spec.Project, "gone")
	_, err := m.Exec(ctx, "session", sandbox.Command{
		Args: []string{"/bin/true"}, Dir: gone, Env: []string{"PATH=" + systemPath, "HOME=" + home},
	}, sandbox.Limits{Wall: 20 * time.Second})
	var ee *sandbox.ExecError
	if !errors.As(err, &ee) || !ee.Dir || ee.Path != gone || !strings.Contains(err.Error(), "cannot enter the working directory") {
		t.Errorf("a command in a directory that is gone: %v; want an ExecError naming the directory", err)
	}
}

// worldShell returns a runner of bash scripts in the world name of m, in
// dir with HOME=home, giving their output (stdout and stderr together).
func worldShell(t *testing.T, m *sandbox.Manager, name, dir, home string) func(script string) (string, sandbox.Result) {
	return func(script string) (string, sandbox.Result) {
		t.Helper()
		var out bytes.Buffer
		res, err := m.Exec(context.Background(), name, sandbox.Command{
			Args: []string{"/bin/bash", "-c", script}, Dir: dir,
			Env:    []string{"PATH=" + systemPath, "HOME=" + home},
			Stdout: &out, Stderr: &out,
		}, sandbox.Limits{Wall: 20 * time.Second})
		if err != nil {
			t.Fatalf("Exec %q: %v", script, err)
		}
		return out.String(), res
	}
}

// pythonPath is a python3 outside pyenv's shims (which need HOME).
func pythonPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no python3 in /usr/bin or /usr/local/bin")
	return ""
}

// TestWorldCommandsStartRestricted: a world's commands are started by its
// launcher (one restricted thread that forks them all) instead of a stage
// each; each must be exactly as restricted as the stage makes it, the
// launcher must be out of its commands' reach, a command that cannot start
// says why, and a caller that gives up stops its command.
func TestWorldCommandsStartRestricted(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp, spec.Quarantine = "", ""
	spec.Background, spec.Session, spec.UserHome = true, "session-1", home
	ctx := context.Background()
	if _, err := m.Start(ctx, "world", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "world") })
	run := func(ctx context.Context, script string) (string, sandbox.Result, error) {
		t.Helper()
		var out bytes.Buffer
		res, err := m.Exec(ctx, "world", sandbox.Command{
			Args: []string{"/bin/bash", "-c", script}, Dir: spec.Project,
			Env:    []string{"PATH=" + systemPath, "HOME=" + home},
			Stdout: &out, Stderr: &out,
		}, sandbox.Limits{Wall: 20 * time.Second})
		return out.String(), res, err
	}
	out, _, err := run(ctx, "pgrep -f warden-sandbox-launche[r]")
	launcher := strings.TrimSpace(out)
	if err != nil || launcher == "" {
		t.Fatalf("no launcher runs in the world (%v): %q", err, out)
	}
	out, _, _ = run(ctx, "grep -E '^(NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status")
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000",
		"CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("a world command's status lacks %q:\n%s", want, out)
		}
	}
	for _, c := range []struct{ name, script string }{
		{"read the masked secret", "cat " + home + "/.ssh/id_rsa"},
		{"write outside the project", "touch " + home + "/new"},
		{"read the launcher's environment", "cat /proc/" + launcher + "/environ"},
		{"read the launcher's memory", "head -c 16 /proc/" + launcher + "/mem"},
		{"follow the launcher's descriptors", "cat /proc/" + launcher + "/fd/4"},
		{"trace the launcher", "python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16, " + launcher + ", 0, 0) == 0 else 1)'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, res, err := run(ctx, c.script)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode == 0 || strings.Contains(out, "WORKSPACE-SECRET") {
				t.Errorf("%q: exit %d: %s", c.script, res.ExitCode, out)
			}
			if res.ExitCode == 127 || strings.Contains(out, "not found") {
				t.Errorf("%q could not try: %s", c.script, out)
			}
		})
	}
	var execErr *sandbox.ExecError
	if _, err := m.Exec(ctx, "world", sandbox.Command{Args: []string{"no-such-command-xyz"}, Dir: spec.Project, Env: []string{"PATH=" + systemPath}}, sandbox.Limits{}); !errors.As(err, &execErr) || execErr.Err != syscall.ENOENT {
		t.Errorf("a command that does not exist: %v, want ENOENT", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, _, err := run(short, "sleep 2; touch late"); err == nil {
		t.Error("a command whose caller gave up ended without an error")
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(spec.Project, "late")); err == nil {
		t.Error("the command went on after its caller gave up")
	}
}

// TestWorldSweepsWhatItsBackgroundCreates: a protected path that was missing
// (.claude/, whose settings' hooks the next session would run on the host)
// is swept when a process a command left in the background creates it,
// between commands and when the world stops, not only when a command ends.
func TestWorldSweepsWhatItsBackgroundCreates(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp = ""
	spec.Background, spec.Session, spec.UserHome = true, "session-sweep", home
	ctx := context.Background()
	if _, err := m.Start(ctx, "sweep", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_, _ = m.Stop(context.Background(), "sweep")
		}
	})
	run := func(script string) {
		t.Helper()
		res, err := m.Exec(ctx, "sweep", sandbox.Command{
			Args: []string{"/bin/bash", "-c", script}, Dir: spec.Project,
			Env: []string{"PATH=" + systemPath, "HOME=" + home},
		}, sandbox.Limits{Wall: 20 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Exec %q: exit %d, %v", script, res.ExitCode, err)
		}
	}
	settings := filepath.Join(spec.Project, ".claude", "settings.json")
	quarantined := func() int {
		entries, _ := os.ReadDir(spec.Quarantine)
		return len(entries)
	}

	run("(sleep 0.3; mkdir .claude && echo '{\"hooks\":{}}' > .claude/settings.json) >/dev/null 2>&1 &")
	time.Sleep(300 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for quarantined() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Lstat(settings); err == nil || quarantined() == 0 {
		t.Fatalf("a background process created %s after its command ended, and it is still there (quarantine holds %d)", settings, quarantined())
	}

	// Created over and over until the world stops: the stop sweeps it too.
	run("(while true; do mkdir -p .claude && echo '{}' > .claude/settings.json; sleep 0.02; done) >/dev/null 2>&1 &")
	time.Sleep(300 * time.Millisecond)
	if _, err := m.Stop(ctx, "sweep"); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	stopped = true
	if _, err := os.Lstat(filepath.Join(spec.Project, ".claude")); err == nil {
		t.Errorf("the world stopped with .claude, which its background process created, still in the project")
	}
}

// TestWorldKeepsProtectedPathsAfterTheHostReplacesThem: the user's own
// git replaces .git/config on the host (a rename over it), which detaches
// the world's read-only mount of the file; the world mounts the new file
// read-only again by itself as soon as it sees the change (within a
// moment, read from its init's mountinfo), and in any case before its
// next command, which cannot write it.
func TestWorldKeepsProtectedPathsAfterTheHostReplacesThem(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp, spec.Quarantine = "", ""
	spec.Background, spec.Session, spec.UserHome = true, "session-1", home
	ctx := context.Background()
	info, err := m.Start(ctx, "session", "workspace", spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "session") })
	cfg := filepath.Join(spec.Project, ".git", "config")
	mounted := func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", info.Init))
		if err != nil {
			t.Fatalf("read the world's mounts: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[4] == cfg {
				return true
			}
		}
		return false
	}
	if !mounted() {
		t.Fatalf("the world does not mount %s read-only at its start", cfg)
	}
	mounts := func() int {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", info.Init))
		return strings.Count(string(b), "\n")
	}
	atStart := mounts()
	replace := func(content string) {
		t.Helper()
		if err := os.WriteFile(cfg+".lock", []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(cfg+".lock", cfg); err != nil {
			t.Fatal(err)
		}
	}
	replace("[core]\n\tbare = false\n")
	deadline := time.Now().Add(5 * time.Second)
	for !mounted() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !mounted() {
		t.Errorf("5 s after the host replaced %s, the world has not mounted it again", cfg)
	}
	replace("[core]\n\tbare = false\n[user]\n\tname = me\n")
	var out bytes.Buffer
	if _, err := m.Exec(ctx, "session", sandbox.Command{
		Args: []string{"/bin/bash", "-c", "echo x >> .git/config && echo wrote"}, Dir: spec.Project,
		Env:    []string{"PATH=" + systemPath, "HOME=" + home},
		Stdout: &out, Stderr: &out,
	}, sandbox.Limits{Wall: 20 * time.Second}); err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if strings.Contains(out.String(), "wrote") {
		t.Errorf("the next command wrote the replaced .git/config: %q", out.String())
	}
	// Each check mounts only what is missing: the world's mounts do not
	// pile up command after command. (They may be fewer: a mask over a
	// host entry that went meanwhile, another test's socket, goes with
	// it.)
	if n := mounts(); n > atStart {
		t.Errorf("the world holds %d mounts after a replacement and a command; it held %d at its start", n, atStart)
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), "name = me") || strings.Contains(string(b), "x\n") {
		t.Errorf(".git/config after the world's command:\n%s", b)
	}
}

// TestHeldWorldStopsItsCommands: a held world's processes stop (a writer
// left running in the background writes nothing while it is held) and go
// on once released; a command sent while it is held waits for the
// release; the world's init still answers.
func TestHeldWorldStopsItsCommands(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp, spec.Quarantine = "", ""
	spec.Background, spec.Session, spec.UserHome = true, "session-hold", home
	ctx := context.Background()
	if _, err := m.Start(ctx, "held", "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "held") })
	run := func(script string) string {
		t.Helper()
		var out bytes.Buffer
		res, err := m.Exec(ctx, "held", sandbox.Command{
			Args: []string{"/bin/bash", "-c", script}, Dir: spec.Project,
			Env:    []string{"PATH=" + systemPath, "HOME=" + home},
			Stdout: &out, Stderr: &out,
		}, sandbox.Limits{Wall: 20 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Exec %q: exit %d, %v: %s", script, res.ExitCode, err, out.String())
		}
		return out.String()
	}
	run("(while true; do echo t >> ticks; sleep 0.05; done) > /dev/null 2>&1 & echo started")
	// A writer whose first thread has ended (the raw exit call, not
	// exit_group) lives on in its other thread while /proc/PID/stat, its
	// first thread's, says Z (red-team-11).
	run(`python3 -c '
import ctypes, platform, threading, time
def work():
    while True:
        with open("zticks", "a") as f:
            f.write("t")
        time.sleep(0.05)
threading.Thread(target=work).start()
time.sleep(0.1)
ctypes.CDLL(None).syscall(60 if platform.machine() == "x86_64" else 93, 0)
' > /dev/null 2>&1 & echo started`)
	count := func() int {
		n := 0
		for _, name := range []string{"ticks", "zticks"} {
			b, _ := os.ReadFile(filepath.Join(spec.Project, name))
			n += strings.Count(string(b), "t")
		}
		return n
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	zcount := func() int {
		b, _ := os.ReadFile(filepath.Join(spec.Project, "zticks"))
		return strings.Count(string(b), "t")
	}
	// Four writes: 0.15 s, past its first thread's end.
	for zcount() < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if zcount() < 4 {
		t.Fatal("the writer whose first thread ended did not go on")
	}
	if err := m.Hold(ctx, "held"); err != nil {
		t.Fatalf("Hold: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // a write under way ends
	before := count()
	time.Sleep(500 * time.Millisecond)
	if after := count(); after != before {
		t.Errorf("the background writer wrote %d lines while the world was held", after-before)
	}
	if err := m.Protect(ctx, "held"); err != nil {
		t.Errorf("the held world's init does not answer: %v", err)
	}
	waited := make(chan time.Time, 1)
	go func() {
		run("true")
		waited <- time.Now()
	}()
	time.Sleep(300 * time.Millisecond)
	released := time.Now()
	if err := m.Release(ctx, "held"); err != nil {
		t.Fatalf("Release: %v", err)
	}
	select {
	case at := <-waited:
		if at.Before(released) {
			t.Errorf("a command sent to the held world ran before the release")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a command sent to the held world never ran after the release")
	}
	before = count()
	deadline = time.Now().Add(5 * time.Second)
	for count() == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if count() == before {
		t.Error("the background writer did not go on after the release")
	}

	// Leases: the world stays held while any is in force; each ends at its
	// release (by name, or every name with a prefix) or at its time.
	if err := m.HoldLease(ctx, "held", "tool:1", 20*time.Second); err != nil {
		t.Fatalf("HoldLease: %v", err)
	}
	if err := m.HoldLease(ctx, "held", "ask:2", 600*time.Millisecond); err != nil {
		t.Fatalf("HoldLease: %v", err)
	}
	if err := m.ReleaseLeases(ctx, "held", true, "tool:"); err != nil {
		t.Fatalf("ReleaseLeases: %v", err)
	}
	before = count()
	time.Sleep(300 * time.Millisecond)
	if after := count(); after != before {
		t.Errorf("the background writer wrote %d lines while a lease was still in force", after-before)
	}
	deadline = time.Now().Add(5 * time.Second)
	for count() == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if count() == before {
		t.Error("the background writer did not go on after the last lease's time ended")
	}
}

// TestHeldOneShotRunStopsItsCommand: a one-shot run registered in a
// directory (Spec.Runs) is held like a world: its command stops (a writer
// writes nothing while held) and goes on at the release; two leases hold
// it until both end.
func TestHeldOneShotRunStopsItsCommand(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	spec, home := workspaceSpec(t)
	spec.Runs = filepath.Join(t.TempDir(), "runs")
	ticks := filepath.Join(spec.Project, "ticks")
	done := make(chan run, 1)
	go func() {
		done <- runAt(t, spec, home, "/bin/bash", "-c", "for i in $(seq 60); do echo t >> ticks; sleep 0.05; done")
	}()
	count := func() int {
		b, _ := os.ReadFile(ticks)
		return strings.Count(string(b), "t")
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := sandbox.HoldRuns(spec.Runs, "tool:1", 20*time.Second); err != nil {
		t.Fatalf("HoldRuns: %v", err)
	}
	if err := sandbox.HoldRuns(spec.Runs, "asked:2", 20*time.Second); err != nil {
		t.Fatalf("HoldRuns: %v", err)
	}
	before := count()
	time.Sleep(400 * time.Millisecond)
	if after := count(); after != before {
		t.Errorf("the run's command wrote %d lines while held", after-before)
	}
	if err := sandbox.ReleaseRuns(spec.Runs, false, "tool:1"); err != nil {
		t.Fatalf("ReleaseRuns: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if after := count(); after != before {
		t.Errorf("the run's command wrote %d lines while a lease was still in force", after-before)
	}
	if err := sandbox.ReleaseRuns(spec.Runs, true, "asked:"); err != nil {
		t.Fatalf("ReleaseRuns: %v", err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.res.ExitCode != 0 || count() != 60 {
			t.Errorf("the run after its release: %s, %d lines", r, count())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run never ended after its release")
	}
	if paths, _ := filepath.Glob(filepath.Join(spec.Runs, "*.json")); len(paths) != 0 {
		t.Errorf("the run and its leases left %q", paths)
	}
}

// TestHeldWorldKillsWhatWouldContinueItself: a process that armed a POSIX
// timer sending it SIGCONT would go on while the world is held; the hold
// kills it, and nothing is written while held.
func TestHeldWorldKillsWhatWouldContinueItself(t *testing.T) {
	m, count := startTicking(t, "timer", `import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
class sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int), ("pad", ctypes.c_byte * 48)]
class itimerspec(ctypes.Structure):
    _fields_ = [("i_s", ctypes.c_long), ("i_ns", ctypes.c_long), ("v_s", ctypes.c_long), ("v_ns", ctypes.c_long)]
ev, tid = sigevent(signo=18, notify=0), ctypes.c_void_p()
assert libc.timer_create(1, ctypes.byref(ev), ctypes.byref(tid)) == 0
libc.timer_settime(tid, 0, ctypes.byref(itimerspec(0, 5000000, 0, 5000000)), None)
while True:
    open("ticks", "a").write("t")
    time.sleep(0.05)
`, 1)
	ctx := context.Background()
	if err := m.HoldLease(ctx, "timer", "tool:1", 20*time.Second); err != nil {
		t.Fatalf("HoldLease: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	before := count()
	time.Sleep(400 * time.Millisecond)
	if after := count(); after != before {
		t.Errorf("a process with a SIGCONT timer wrote %d times while the world was held", after-before)
	}
	if err := m.ReleaseLeases(ctx, "timer", false, "tool:1"); err != nil {
		t.Fatalf("ReleaseLeases: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if after := count(); after != before {
		t.Errorf("the process with a SIGCONT timer is still running after the hold (%d more writes)", after-before)
	}
}

// TestOneShotRunWaitsForAHold: a one-shot run that starts while a lease of
// its directory is in force (a host file tool at work, no run registered
// yet) waits for the release, as a command sent to a held world does.
func TestOneShotRunWaitsForAHold(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	spec, home := workspaceSpec(t)
	spec.Runs = filepath.Join(t.TempDir(), "runs")
	if err := sandbox.HoldRuns(spec.Runs, "tool:1", 20*time.Second); err != nil {
		t.Fatalf("HoldRuns: %v", err)
	}
	done := make(chan run, 1)
	go func() { done <- runAt(t, spec, home, "/bin/bash", "-c", "echo ran > ran") }()
	time.Sleep(400 * time.Millisecond)
	if _, err := os.Stat(spec.Project + "/ran"); err == nil {
		t.Error("a run started while its directory was held ran at once")
	}
	if err := sandbox.ReleaseRuns(spec.Runs, false, "tool:1"); err != nil {
		t.Fatalf("ReleaseRuns: %v", err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.res.ExitCode != 0 {
			t.Fatalf("the run after the release: %s", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run never started after the release")
	}
	if _, err := os.Stat(spec.Project + "/ran"); err != nil {
		t.Errorf("the run did not run after the release: %v", err)
	}
}

// TestHeldWorldOutlastsTheDeathsItCauses: a process the hold kills (it has
// a POSIX timer sending SIGCONT, or SIGKILL) can make the kernel continue
// another as it ends: here its child, alone in a process group the death
// orphans, gets SIGHUP and SIGCONT (red-team-12). The hold returns only
// once that death is over and every process is seen stopped again.
func TestHeldWorldOutlastsTheDeathsItCauses(t *testing.T) {
	for _, c := range []struct {
		sig  int
		fire time.Duration // when the timer fires: its SIGKILL kills the group's parent
	}{{18, 30 * time.Second}, {9, 800 * time.Millisecond}} {
		sig, fire := c.sig, c.fire
		t.Run(fmt.Sprintf("timer signal %d", sig), func(t *testing.T) {
			m, count := startTicking(t, "orphan", fmt.Sprintf(`import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
class sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int), ("pad", ctypes.c_byte * 48)]
class itimerspec(ctypes.Structure):
    _fields_ = [("i_s", ctypes.c_long), ("i_ns", ctypes.c_long), ("v_s", ctypes.c_long), ("v_ns", ctypes.c_long)]
if os.fork():
    os._exit(0)
os.setsid()
ev, tid = sigevent(signo=%d, notify=0), ctypes.c_void_p()
assert libc.timer_create(1, ctypes.byref(ev), ctypes.byref(tid)) == 0
ballast = bytearray(8 << 20)  # its end takes a moment
if os.fork() == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while True:
        with open("ticks", "a") as f:
            f.write("t")
        time.sleep(0.02)
libc.timer_settime(tid, 0, ctypes.byref(itimerspec(0, 0, %d, %d)), None)
while True:
    time.sleep(1)
`, sig, fire/time.Second, fire%time.Second), 3)
			ctx := context.Background()
			if err := m.HoldLease(ctx, "orphan", "tool:1", 20*time.Second); err != nil {
				t.Fatalf("HoldLease: %v", err)
			}
			before := count()
			time.Sleep(1500 * time.Millisecond) // past the SIGKILL timer's time
			if after := count(); after != before {
				t.Errorf("the orphaned child wrote %d times while the world was held", after-before)
			}
			if err := m.ReleaseLeases(ctx, "orphan", false, "tool:1"); err != nil {
				t.Fatalf("ReleaseLeases: %v", err)
			}
		})
	}
}

// startTicking starts a workspace world named name, runs python3 on script
// in its background (the script writes to the project's "ticks"), and
// returns the world's manager and a count of those writes, once it is at
// least least.
func startTicking(t *testing.T, name, script string, least int) (*sandbox.Manager, func() int) {
	t.Helper()
	requireMode(t, sandbox.ModeStandard)
	python := pythonPath(t)
	m := testManager(t.TempDir())
	spec, home := workspaceSpec(t)
	spec.Tmp, spec.Quarantine = "", ""
	spec.Background, spec.Session, spec.UserHome = true, "session-"+name, home
	ctx := context.Background()
	if _, err := m.Start(ctx, name, "workspace", spec); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), name) })
	mustWrite(t, spec.Project+"/"+name+".py", script)
	var out bytes.Buffer
	res, err := m.Exec(ctx, name, sandbox.Command{
		Args: []string{"/bin/bash", "-c", "nohup " + python + " " + name + ".py > /dev/null 2>&1 & echo started"}, Dir: spec.Project,
		Env: []string{"PATH=" + systemPath, "HOME=" + home}, Stdout: &out, Stderr: &out,
	}, sandbox.Limits{Wall: 20 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("starting %s.py: %v %+v %s", name, err, res, out.String())
	}
	count := func() int {
		b, _ := os.ReadFile(spec.Project + "/ticks")
		return len(b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() < least && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if count() < least {
		t.Fatalf("%s.py wrote %d ticks in 5 s; want %d", name, count(), least)
	}
	return m, count
}

// TestSessionTmpIsCapped: a session's /tmp is on disk and shared, so no
// tmpfs bounds it; a command that grows it past Limits.Tmp is killed, in a
// one-shot run and in a world (with what the world runs in the
// background), and says so. What it left may stay, and a later command can
// still list and remove it.
func TestSessionTmpIsCapped(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	spec, home := workspaceSpec(t)
	spec.Limits.Tmp = 4 << 20
	spec.Limits.Wall = 20 * time.Second
	// About 1 MiB every 50 ms: past 4 MiB well within the wall clock.
	const fill = `for i in $(seq 200); do head -c 1048576 /dev/zero >> /tmp/fill; sleep 0.05; done; echo filled`

	r := runAt(t, spec, home, "/bin/bash", "-c", fill)
	if r.err != nil || r.res.Limit != sandbox.LimitTmp || strings.Contains(r.stdout, "filled") {
		t.Fatalf("one-shot run filling /tmp: %v, limit %q, exit %d, %q; want it killed for the /tmp cap", r.err, r.res.Limit, r.res.ExitCode, r.stdout+r.stderr)
	}
	if d := r.res.Limit.Describe(spec.Limits); !strings.Contains(d, "4M") || !strings.Contains(d, "tmp_size") {
		t.Errorf("the limit says %q; want the cap and the setting named", d)
	}
	if st, err := os.Stat(filepath.Join(spec.Tmp, "fill")); err != nil || st.Size() > 64<<20 {
		t.Errorf("what the run left in the session's /tmp: %v, %v; want a file cut short", st, err)
	}
	// A directory the command cannot list is counted all the same.
	r = runAt(t, spec, home, "/bin/bash", "-c", "mkdir -p /tmp/d && chmod 311 /tmp/d && "+strings.ReplaceAll(fill, "/tmp/fill", "/tmp/d/fill"))
	if r.err != nil || r.res.Limit != sandbox.LimitTmp || strings.Contains(r.stdout, "filled") {
		t.Errorf("filling an unlistable directory of /tmp: %v, limit %q, exit %d, %q; want it killed for the /tmp cap", r.err, r.res.Limit, r.res.ExitCode, r.stdout+r.stderr)
	}
	_ = os.Chmod(filepath.Join(spec.Tmp, "d"), 0o755)
	if err := os.RemoveAll(filepath.Join(spec.Tmp, "d")); err != nil {
		t.Fatal(err)
	}

	m := testManager(t.TempDir())
	world := spec
	world.Background, world.Session, world.UserHome = true, "session-tmp", home
	world.Quarantine = ""
	ctx := context.Background()
	if _, err := m.Start(ctx, "tmpcap", "workspace", world); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "tmpcap") })
	run := worldShell(t, m, "tmpcap", world.Project, home)
	// Within its cap (the world started with what the one-shot run left,
	// over it, which may stay): listing and removing work.
	if out, res := run("ls /tmp && rm -f /tmp/fill && echo removed"); res.ExitCode != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("removing what the killed run left: exit %d, %q", res.ExitCode, out)
	}
	if out, res := run("(sleep 60 & echo $! > /tmp/bg.pid); echo started"); res.ExitCode != 0 || !strings.Contains(out, "started") {
		t.Fatalf("starting a background process: exit %d, %q", res.ExitCode, out)
	}
	out, res := run(fill)
	if res.Limit != sandbox.LimitTmp || strings.Contains(out, "filled") {
		t.Fatalf("a world's command filling /tmp: limit %q, exit %d, %q; want it killed for the /tmp cap", res.Limit, res.ExitCode, out)
	}
	out, res = run("kill -0 $(cat /tmp/bg.pid) 2>/dev/null && echo alive || echo gone; rm -f /tmp/fill; echo ok")
	if res.ExitCode != 0 || !strings.Contains(out, "gone") || !strings.Contains(out, "ok") {
		t.Errorf("after the kill: exit %d, %q; want the background process gone and the next command working", res.ExitCode, out)
	}
}
