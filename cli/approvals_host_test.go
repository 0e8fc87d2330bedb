package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// TestExecRunsOnTheHostByTheHumansAnswer: `warden exec` waits for the
// answer to an ask. Approved once, the command runs in the workspace
// sandbox, where a file outside the project cannot be written; answered
// "run on host", the same command runs on the host and writes it. The host
// run is audited: its decision by grant.host, the answer as a
// host_escalation event naming the command and who answered, and the
// outcome with the isolation it really had (profile host, mode off).
func TestExecRunsOnTheHostByTheHumansAnswer(t *testing.T) {
	t.Parallel() // it waits on processes; it shares nothing with other tests
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		t.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed); CI runs as root where it can")
	}
	home := initHome(t)
	proj, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "escalated.txt")
	// docker asks (shell.needs_host); whether or not docker is installed,
	// the write after it shows where the command ran.
	script := "docker version >/dev/null 2>&1; echo escalated > " + target

	run := func(approve ...string) (string, int) {
		t.Helper()
		waiter := wardenCmd(home, "exec", "--profile", "workspace", "--session", "s1", "--", "bash", "-c", script)
		waiter.Dir = proj
		var stderr bytes.Buffer
		waiter.Stderr = &stderr
		if err := waiter.Start(); err != nil {
			t.Fatal(err)
		}
		defer waiter.Process.Kill()
		id := pendingApproval(t, home)
		out, err := wardenCmd(home, append([]string{"approvals", "approve", id}, approve...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("approvals approve %s %v: %v\n%s", id, approve, err, out)
		}
		code := 0
		var exit *exec.ExitError
		if err := waiter.Wait(); errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code == 126 {
			t.Fatalf("the approved command was not run: %s", stderr.String())
		}
		if onHost := strings.Contains(stderr.String(), "runs on the host, outside the sandbox"); onHost != (len(approve) > 0) {
			t.Errorf("warden exec's stderr %q; want it to say the command runs on the host exactly when answered so", stderr.String())
		}
		return string(out), code
	}

	run()
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("approved once, the command wrote %s outside the sandbox (%v); want it confined", target, err)
	}

	said, code := run("--host")
	if !strings.Contains(said, "on the host") {
		t.Errorf("approvals approve --host said %q; want it to say the command runs on the host", said)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "escalated\n" || code != 0 {
		t.Fatalf("answered run on host: exit %d, %s holds %q, %v; want the command run on the host", code, target, b, err)
	}

	out, err := wardenCmd(home, "audit", "--json", "--limit", "0").Output()
	if err != nil || !strings.Contains(string(out), `"rule":"grant.host"`) {
		t.Errorf("audit = %v; want the host run allowed by grant.host\n%s", err, out)
	}
	events := securityEvents(t, home)
	var escalations, hostRuns int
	for _, ev := range events {
		switch {
		case ev.Type == "host_escalation":
			escalations++
			if ev.Severity != "warn" || ev.Meta["command"] != script || ev.Meta["channel"] != "terminal" || !strings.HasPrefix(ev.Meta["by"].(string), "terminal") {
				t.Errorf("escalation event %+v; want warn, naming the command and the terminal", ev)
			}
		case ev.Type == "action_result" && ev.Meta["profile"] == "host":
			hostRuns++
			if ev.Meta["mode"] != "off" || ev.Meta["exit_code"] != float64(0) {
				t.Errorf("host run's outcome %+v; want mode off, exit 0", ev)
			}
		}
	}
	if escalations != 1 || hostRuns != 1 {
		t.Errorf("%d host_escalation events and %d host runs audited; want one each", escalations, hostRuns)
	}
}

// TestApproveHostRefusedForOtherRequests: "run on host" is only for shell
// commands; a waiting tool call refuses it with an error saying so, and
// stays pending.
func TestApproveHostRefusedForOtherRequests(t *testing.T) {
	home := initHome(t)
	waiter := wardenCmd(home, "check", "--wait", "tool", "call", "write_file", "--param", "path=notes.txt")
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waiter.Process.Kill(); waiter.Wait() })
	id := pendingApproval(t, home)
	out, err := wardenCmd(home, "approvals", "approve", id, "--host").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "only a shell command can be run on the host") {
		t.Errorf("approvals approve --host on a tool call: %v\n%s\nwant it refused", err, out)
	}
	if got := pendingApproval(t, home); got != id {
		t.Errorf("after the refused answer the pending approval is %s, want %s still", got, id)
	}
}

type securityEvent struct {
	Type     string         `json:"type"`
	Severity string         `json:"severity"`
	Summary  string         `json:"summary"`
	Meta     map[string]any `json:"metadata"`
}

// securityEvents reads the home's security events through warden audit.
func securityEvents(t *testing.T, home string) []securityEvent {
	t.Helper()
	out, err := wardenCmd(home, "audit", "events", "--json", "--limit", "0").Output()
	if err != nil {
		t.Fatalf("audit events: %v", err)
	}
	var events []securityEvent
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var ev securityEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("audit events line %s: %v", line, err)
		}
		events = append(events, ev)
	}
	return events
}
