package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"syscall"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// TestApprovalsWatchRunsOnHost: `warden approvals watch` offers [h] run on
// host for a shell command, and the waiting check ends allowed on the host
// by grant.host.
func TestApprovalsWatchRunsOnHost(t *testing.T) {
	home := initHome(t)
	check := wardenCmd(home, "check", "--wait", "shell", "exec", "docker version")
	var out bytes.Buffer
	check.Stdout = &out
	if err := check.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { check.Process.Kill() })
	pendingApproval(t, home)

	tm := atTerminal(t, wardenCmd(home, "approvals", "watch"))
	at := tm.expect(0, "resource: docker version")
	at = tm.expect(at, "[h] run on host  [v] view > ")
	tm.send("h")
	tm.expect(at, ": approved, to run once on the host")
	if _, err := tm.ptm.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	if _, err := tm.wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("approvals watch after Ctrl-C: %v; want it ended by SIGINT", err)
		}
	}
	check.Wait()
	var d warden.Decision
	if err := json.Unmarshal(out.Bytes(), &d); err != nil || !gate.HostGranted(&d) {
		t.Errorf("the waiting check printed %q (%v); want an allow on the host by %s", out.String(), err, gate.RuleHostGrant)
	}
}
