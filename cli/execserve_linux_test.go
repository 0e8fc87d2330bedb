package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/internal/execwire"
	"github.com/agentwarden/warden/sandbox"
)

// fastRun sends one `warden exec` to the session's supervisor, as
// warden-exec does, with env as its environment, and returns its exit
// status, its output and the error Call gave.
func fastRun(t *testing.T, home, dir string, env []string, args ...string) (int, string, string, error) {
	t.Helper()
	return fastCall(t, home, dir, env, nil, args...)
}

// fastCall is fastRun with a hook's payload.
func fastCall(t *testing.T, home, dir string, env []string, payload []byte, args ...string) (int, string, string, error) {
	t.Helper()
	return callAt(t, execwire.SocketPath(home, "s1"), dir, env, payload, args...)
}

// callAt sends one request to the supervisor serving socket.
func callAt(t *testing.T, socket, dir string, env []string, payload []byte, args ...string) (int, string, string, error) {
	t.Helper()
	c, err := execwire.Dial(socket)
	if err != nil {
		t.Fatalf("no supervisor serves %s: %v", socket, err)
	}
	defer c.Close()
	inR, inW, _ := os.Pipe()
	inW.Close()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	var stdout, stderr bytes.Buffer
	done := make(chan struct{}, 2)
	go func() { io.Copy(&stdout, outR); done <- struct{}{} }()
	go func() { io.Copy(&stderr, errR); done <- struct{}{} }()
	self, _ := os.Executable()
	status, err := c.Call(execwire.Request{Version: execwire.Version, Warden: self, Args: args, Dir: dir, Env: env, Stdin: payload},
		[3]int{int(inR.Fd()), int(outW.Fd()), int(errW.Fd())})
	inR.Close()
	outW.Close()
	errW.Close()
	<-done
	<-done
	return status, stdout.String(), stderr.String(), err
}

// sandboxedProject skips t where the standard sandbox cannot run, and
// returns a new warden home and a project directory beside it.
func sandboxedProject(t *testing.T) (home, project string) {
	t.Helper()
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		t.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed)")
	}
	home = initHome(t)
	project = filepath.Join(filepath.Dir(home), "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	return home, project
}

// TestSupervisorRunsTheSessionsCommands: once a session's world runs, its
// supervisor runs the session's `warden exec` command lines for
// warden-exec, with the same decisions, statuses and output as the warden
// binary; what it cannot run the same way it hands back before running
// anything.
func TestSupervisorRunsTheSessionsCommands(t *testing.T) {
	t.Parallel() // it waits on processes; it shares nothing with other tests
	home, project := sandboxedProject(t)
	execArgs := func(cmd string) []string {
		return []string{"--home", home, "exec", "--profile", "workspace", "--session", "s1", "--requested-by", "agent", "--", "bash", "-c", cmd}
	}
	// The first command starts the world, through the warden binary.
	first := wardenCmd(home, execArgs("echo started")...)
	first.Dir = project
	if out, err := first.CombinedOutput(); err != nil || string(out) != "started\n" {
		t.Fatalf("the first command: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		worlds, _ := filepath.Glob(filepath.Join(home, "run", "session-*[^k]"))
		for _, w := range worlds {
			_ = wardenCmd(home, "--home", home, "sandbox", "stop", filepath.Base(w)).Run()
		}
	})
	env := os.Environ()

	t.Run("output and status", func(t *testing.T) {
		status, out, errOut, err := fastRun(t, home, project, env, execArgs("echo hello; echo oops >&2; exit 3")...)
		if err != nil || status != 3 || out != "hello\n" || errOut != "oops\n" {
			t.Fatalf("got status %d, stdout %q, stderr %q, err %v; want 3, hello, oops", status, out, errOut, err)
		}
	})
	t.Run("the world is shared", func(t *testing.T) {
		fastRun(t, home, project, env, execArgs("echo kept > /tmp/note")...)
		status, out, _, err := fastRun(t, home, project, env, execArgs("cat /tmp/note")...)
		if err != nil || status != 0 || out != "kept\n" {
			t.Fatalf("got status %d, stdout %q, err %v; want the file a previous command wrote in /tmp", status, out, err)
		}
	})
	t.Run("one-shot guard runs, each with its own stdin", func(t *testing.T) {
		// The supervisor keeps the next one-shot init ready after the
		// first: each later run takes it, and gets its stdin with its plan.
		self, _ := os.Executable()
		for i := range 3 {
			in := filepath.Join(t.TempDir(), "in")
			if err := os.WriteFile(in, []byte(fmt.Sprintf("input %d\n", i)), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			c, err := execwire.Dial(execwire.SocketPath(home, "s1"))
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, _ := os.Pipe()
			var out bytes.Buffer
			copied := make(chan struct{})
			go func() { io.Copy(&out, outR); close(copied) }()
			args := []string{"--home", home, "exec", "--profile", "guard", "--session", "s1", "--requested-by", "agent", "--", "cat"}
			status, err := c.Call(execwire.Request{Version: execwire.Version, Warden: self, Args: args, Dir: project, Env: env},
				[3]int{int(f.Fd()), int(outW.Fd()), int(outW.Fd())})
			outW.Close()
			<-copied
			c.Close()
			f.Close()
			if want := fmt.Sprintf("input %d\n", i); err != nil || status != 0 || out.String() != want {
				t.Fatalf("guard run %d: status %d, output %q, err %v; want 0 and %q", i, status, out.String(), err, want)
			}
		}
	})
	t.Run("refused as by the binary", func(t *testing.T) {
		status, out, errOut, err := fastRun(t, home, project, env, execArgs("rm -rf ~")...)
		if err != nil || status != exitExecRefused || out != "" || !strings.Contains(errOut, "denied") {
			t.Fatalf("got status %d, stdout %q, stderr %q, err %v; want %d and the denial", status, out, errOut, err, exitExecRefused)
		}
	})
	t.Run("the sandbox holds", func(t *testing.T) {
		userHome, err := os.UserHomeDir()
		if err != nil {
			t.Skip("no home directory to try a write in")
		}
		outside := filepath.Join(userHome, ".warden-fastpath-"+filepath.Base(filepath.Dir(home)))
		// A script the guard cannot see into: allowed, it runs contained.
		script := "touch " + outside + "\n"
		if err := os.WriteFile(filepath.Join(project, "probe.sh"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		status, _, errOut, err := fastRun(t, home, project, env, execArgs("sh probe.sh")...)
		if err != nil || status == 0 {
			t.Errorf("the script: status %d, err %v, stderr %q; want touch to fail", status, err, errOut)
		}
		if _, err := os.Stat(outside); err == nil {
			os.Remove(outside)
			t.Fatal("the command wrote in the home directory, outside the sandbox's writable set")
		}
	})
	t.Run("hanging up stops the command", func(t *testing.T) {
		c, err := execwire.Dial(execwire.SocketPath(home, "s1"))
		if err != nil {
			t.Fatal(err)
		}
		null, _ := os.Open(os.DevNull)
		defer null.Close()
		fd := int(null.Fd())
		marker := filepath.Join(project, "late")
		called := make(chan error, 1)
		go func() {
			self, _ := os.Executable()
			_, err := c.Call(execwire.Request{Version: execwire.Version, Warden: self, Args: execArgs("sleep 2; touch late"), Dir: project, Env: env}, [3]int{fd, fd, fd})
			called <- err
		}()
		time.Sleep(500 * time.Millisecond)
		c.Close()
		if err := <-called; err == nil || errors.Is(err, execwire.ErrFallback) {
			t.Errorf("Call after hanging up: %v; want the error that the command may have run", err)
		}
		time.Sleep(2500 * time.Millisecond)
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the command went on after its caller hung up")
		}
	})
	payload := func(event, session, command string) []byte {
		b, _ := json.Marshal(map[string]any{"hook_event_name": event, "session_id": session, "cwd": project,
			"tool_name": "Bash", "tool_use_id": "t-" + event, "tool_input": map[string]string{"command": command}})
		return b
	}
	t.Run("a hook answered", func(t *testing.T) {
		status, out, _, err := fastCall(t, home, project, env, payload("PreToolUse", "s1", "ls"), "hook", "claude", "--home", home)
		if err != nil || status != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) || !strings.Contains(out, " exec --profile workspace --session s1") {
			t.Fatalf("PreToolUse ls: status %d, err %v, stdout %s; want an allow rewritten into warden exec", status, err, out)
		}
		status, out, _, err = fastCall(t, home, project, env, payload("PreToolUse", "s1", "rm -rf ~"), "hook", "claude", "--home", home)
		if err != nil || !strings.Contains(out, `"permissionDecision":"deny"`) {
			t.Fatalf("PreToolUse rm -rf ~: status %d, err %v, stdout %s; want a deny", status, err, out)
		}
	})
	fallbacks := []struct {
		name string
		env  []string
		args []string
	}{
		{"another home", env, []string{"--home", filepath.Join(filepath.Dir(home), "other"), "exec", "--session", "s1", "--", "true"}},
		{"not warden exec", env, []string{"--home", home, "config", "set", "safety.killSwitchActive", "false", "--session", "s1", "--", "x"}},
		{"another home directory", append(slices.Clone(env), "HOME=/nonexistent"), execArgs("true")},
		// What the run's sandbox is computed from in the supervisor's own
		// environment: a PATH naming the project (which then stays
		// read-only), an XDG directory git reads its configuration from.
		{"another PATH", append(slices.Clone(env), "PATH="+project+":"+os.Getenv("PATH")), execArgs("true")},
		{"an XDG directory", append(slices.Clone(env), "XDG_CONFIG_HOME="+project), execArgs("true")},
		{"another session", env, []string{"--home", home, "exec", "--session", "s2", "--", "true"}},
	}
	for _, f := range fallbacks {
		t.Run("falls back: "+f.name, func(t *testing.T) {
			_, _, _, err := fastRun(t, home, project, f.env, f.args...)
			if !errors.Is(err, execwire.ErrFallback) {
				t.Fatalf("got %v, want a fallback", err)
			}
		})
	}
	hookFallbacks := []struct {
		name    string
		payload []byte
	}{
		{"the session's end (it stops the world)", payload("SessionEnd", "s1", "")},
		{"a hook of another session", payload("PreToolUse", "s2", "ls")},
		{"not a payload", []byte("ls")},
	}
	for _, f := range hookFallbacks {
		t.Run("falls back: "+f.name, func(t *testing.T) {
			_, _, _, err := fastCall(t, home, project, env, f.payload, "hook", "claude", "--home", home)
			if !errors.Is(err, execwire.ErrFallback) {
				t.Fatalf("got %v, want a fallback", err)
			}
		})
	}
	t.Run("falls back: another warden binary", func(t *testing.T) {
		c, err := execwire.Dial(execwire.SocketPath(home, "s1"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		null, _ := os.Open(os.DevNull)
		defer null.Close()
		fd := int(null.Fd())
		_, err = c.Call(execwire.Request{Version: execwire.Version, Warden: "/bin/true", Args: execArgs("true"), Dir: project, Env: env}, [3]int{fd, fd, fd})
		if !errors.Is(err, execwire.ErrFallback) {
			t.Fatalf("got %v, want a fallback", err)
		}
	})
	t.Run("concurrent commands", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				status, out, _, err := fastRun(t, home, project, env, execArgs(fmt.Sprintf("echo %d", i))...)
				if err != nil || status != 0 || out != fmt.Sprintf("%d\n", i) {
					t.Errorf("command %d: status %d, stdout %q, err %v", i, status, out, err)
				}
			})
		}
		wg.Wait()
	})
	t.Run("falls back when the world must start anew", func(t *testing.T) {
		policy := filepath.Join(home, "warden.yaml")
		b, err := os.ReadFile(policy)
		if err != nil {
			t.Fatal(err)
		}
		changed := strings.Replace(string(b), `secret_paths: ["~/.ssh",`, `secret_paths: ["~/.fresh-secret", "~/.ssh",`, 1)
		if changed == string(b) {
			t.Fatal("the default policy has no secret_paths list to extend")
		}
		if err := os.WriteFile(policy, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		_, out, _, err := fastRun(t, home, project, env, execArgs("echo must not run here")...)
		if !errors.Is(err, execwire.ErrFallback) || out != "" {
			t.Fatalf("got %v, output %q; want a fallback before anything ran", err, out)
		}
	})
	t.Run("stops serving when the world stops", func(t *testing.T) {
		worlds, _ := filepath.Glob(filepath.Join(home, "run", "session-*[^k]"))
		for _, w := range worlds {
			if out, err := wardenCmd(home, "--home", home, "sandbox", "stop", filepath.Base(w)).CombinedOutput(); err != nil {
				t.Fatalf("sandbox stop: %v\n%s", err, out)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := execwire.Dial(execwire.SocketPath(home, "s1"))
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatal("the session's socket still answers after its world stopped")
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The stopped supervisor exits right after it said so (it lets its
		// server go and closes the home first).
		for {
			out, _ := exec.Command("pgrep", "-f", "--", "--home "+home+" sandbox supervise").Output()
			if len(bytes.TrimSpace(out)) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("supervisors still run 10 s after their worlds stopped: pids %s", out)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := os.Stat(execwire.SocketPath(home, "s1")); err == nil {
			t.Error("the stopped supervisor left its socket file behind")
		}
	})
}

// TestSupervisorRunsOneShotRuns: the supervisor of the sandbox kept for a
// directory's one-shot runs runs the one-shot `warden exec` command lines
// of that directory and profile that warden exec hands it, as the binary
// would (decision, status, output), each alone in a sandbox as new; other
// command lines it hands back before running anything.
func TestSupervisorRunsOneShotRuns(t *testing.T) {
	t.Parallel()
	home, project := sandboxedProject(t)
	// The first two runs have a sandbox of their own, and the second
	// starts the kept one.
	for range 2 {
		first := wardenCmd(home, "--home", home, "exec", "--", "echo", "cold")
		first.Dir = project
		if out, err := first.CombinedOutput(); err != nil || string(out) != "cold\n" {
			t.Fatalf("a first run: %v\n%s", err, out)
		}
	}
	world := app.OneShotWorld("", project)
	t.Cleanup(func() { _ = wardenCmd(home, "--home", home, "sandbox", "stop", world).Run() })
	socket := execwire.OneShotSocketPath(home, world)
	env := os.Environ()
	run := func(args ...string) []string {
		return append([]string{"--home", home, "exec", "--", "bash", "-c"}, args...)
	}
	// Until the kept sandbox is ready, its supervisor (serving already, or
	// not yet) hands every run back.
	for i := 0; ; i++ {
		c, err := execwire.Dial(socket)
		if err == nil {
			c.Close()
			if _, _, _, err = callAt(t, socket, project, env, nil, run("true")...); err == nil {
				break
			}
		}
		if i == 300 {
			t.Fatalf("the kept sandbox's supervisor does not run the one-shot runs on %s: %v", socket, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	status, out, errOut, err := callAt(t, socket, project, env, nil, run("echo hello; echo oops >&2; exit 3")...)
	if err != nil || status != 3 || out != "hello\n" || errOut != "oops\n" {
		t.Fatalf("got status %d, stdout %q, stderr %q, err %v; want 3, hello, oops", status, out, errOut, err)
	}
	callAt(t, socket, project, env, nil, run("echo left > /tmp/note")...)
	if _, out, _, err := callAt(t, socket, project, env, nil, run("cat /tmp/note 2>/dev/null || echo none")...); err != nil || out != "none\n" {
		t.Errorf("a run found /tmp as the last run left it: %q, %v", out, err)
	}
	if status, _, errOut, err := callAt(t, socket, project, env, nil, run("rm -rf ~")...); err != nil || status != exitExecRefused || !strings.Contains(errOut, "denied") {
		t.Errorf("rm -rf ~: status %d, stderr %q, err %v; want %d and the denial", status, errOut, err, exitExecRefused)
	}
	for name, c := range map[string]struct {
		dir  string
		args []string
	}{
		"a session's run":      {project, []string{"--home", home, "exec", "--session", "s1", "--", "true"}},
		"another profile":      {project, []string{"--home", home, "exec", "--profile", "guard", "--", "true"}},
		"another directory":    {filepath.Dir(home), run("true")},
		"another home":         {project, []string{"--home", t.TempDir(), "exec", "--", "true"}},
		"not a warden exec":    {project, []string{"--home", home, "audit"}},
		"a run named as agent": {project, []string{"--home", home, "exec", "--requested-by", "agent", "--", "touch", "ran"}},
	} {
		_, _, _, err := callAt(t, socket, c.dir, env, nil, c.args...)
		if name == "a run named as agent" {
			// The supervisor runs it as the binary would: the kept
			// sandbox is not for it, so it has one of its own.
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, execwire.ErrFallback) {
			t.Errorf("%s: %v; want it handed back", name, err)
		}
	}
}
