package cli

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// TestSandboxExecWaitsForApproval: a command the gate asks about waits in
// `warden sandbox exec` until a human answers; approved once, it runs in the
// sandbox. With --no-wait it is refused at once (exit 126).
func TestSandboxExecWaitsForApproval(t *testing.T) {
	t.Parallel() // it waits on processes; it shares nothing with other tests
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		t.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed); CI runs as root where it can")
	}
	home := initHome(t)
	proj := t.TempDir()
	in := func(cmd *exec.Cmd) *exec.Cmd { cmd.Dir = proj; return cmd }
	if out, err := in(wardenCmd(home, "sandbox", "start", "dev", "--profile", "guard")).CombinedOutput(); err != nil {
		t.Fatalf("sandbox start: %v\n%s", err, out)
	}
	t.Cleanup(func() { in(wardenCmd(home, "sandbox", "stop", "dev")).Run() })

	// ssh to a host asks (shell.remote_login).
	noWait := in(wardenCmd(home, "sandbox", "exec", "dev", "--no-wait", "--", "ssh", "example.invalid", "true"))
	out, err := noWait.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 || !strings.Contains(string(out), "wants a human to approve") {
		t.Fatalf("--no-wait = %v\n%s\nwant exit 126 naming the ask", err, out)
	}

	waiter := in(wardenCmd(home, "sandbox", "exec", "dev", "--", "ssh", "example.invalid", "true"))
	var stderr bytes.Buffer
	waiter.Stderr = &stderr
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer waiter.Process.Kill()
	id := pendingApproval(t, home)
	if out, err := wardenCmd(home, "approvals", "approve", id).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	err = waiter.Wait()
	// ssh fails in a sandbox without a network (or is not installed): any
	// status but 126 (not run) shows the command ran once approved.
	if errors.As(err, &exit) && exit.ExitCode() == 126 {
		t.Fatalf("the approved command was not run: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "waiting for approval "+id) {
		t.Errorf("stderr = %q; want it to name approval %s", stderr.String(), id)
	}
	out, err = wardenCmd(home, "audit", "--json", "--limit", "0").Output()
	if err != nil || !strings.Contains(string(out), `"rule":"grant.once"`) {
		t.Errorf("audit = %v; want the approved run allowed by grant.once\n%s", err, out)
	}
}
