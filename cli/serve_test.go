package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// startServe runs `warden serve` as its own process and waits until it
// serves.
func startServe(t *testing.T, home string) *exec.Cmd {
	t.Helper()
	cmd := wardenCmd(home, "serve", "--no-proxy")
	startUntil(t, cmd, "serving on")
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func decision(t *testing.T, out []byte) warden.Decision {
	t.Helper()
	var d warden.Decision
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("not a decision: %q (%v)", out, err)
	}
	return d
}

// TestDaemonKilledMidApprovalLosesNoDecision kills `warden serve` with
// SIGKILL while a request waits for approval. Nothing is lost: the ask is in
// the audit log, the approval is still pending after a restart, answering it
// there lets the retried request through, and the whole log verifies.
func TestDaemonKilledMidApprovalLosesNoDecision(t *testing.T) {
	home := initHome(t)
	srv := startServe(t, home)
	waiter := wardenCmd(home, "check", "--remote", "--wait", "tool", "call", "write_file", "--session", "s1")
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer waiter.Process.Kill()
	id := pendingApproval(t, home)
	if err := srv.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	srv.Wait()
	if err := waiter.Wait(); err == nil {
		t.Error("the waiting check exited 0 although its daemon died; it must fail (deny)")
	}

	startServe(t, home)
	out, err := wardenCmd(home, "approvals", "list").Output()
	if err != nil || !strings.Contains(string(out), id) {
		t.Fatalf("after the restart approvals list = %q, %v; want %s still pending", out, err, id)
	}
	out, err = wardenCmd(home, "approvals", "approve", id, "--answer", "session").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "approved") {
		t.Fatalf("approve after the restart = %q, %v", out, err)
	}
	out, err = wardenCmd(home, "check", "--remote", "tool", "call", "write_file", "--session", "s1").Output()
	if err != nil {
		t.Fatal(err)
	}
	if d := decision(t, out); d.Verdict != warden.Allow || d.Rule != "grant.session" {
		t.Errorf("the retried request = %s %s; want allow by grant.session", d.Verdict, d.Rule)
	}
	out, err = wardenCmd(home, "audit", "export", "--format", "jsonl").Output()
	if err != nil {
		t.Fatal(err)
	}
	asks, allows := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e struct{ Verdict string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit export line %q: %v", line, err)
		}
		asks += btoi(e.Verdict == "ask")
		allows += btoi(e.Verdict == "allow")
	}
	if asks != 1 || allows != 1 {
		t.Errorf("audit log has %d asks and %d allows; want the one ask before the kill and the one allow after", asks, allows)
	}
	if out, err := wardenCmd(home, "audit", "verify").CombinedOutput(); err != nil {
		t.Errorf("audit verify after kill -9: %v\n%s", err, out)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
