package app

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/gate"
)

// TestApprovedRunCoversOnlyItsCommand: the approval a hook's decision used
// covers the run it rewrote the command into (same command, directory and
// session, approved, not on the host) and nothing else; a warden exec that
// names any other approval is refused as without one.
func TestApprovedRunCoversOnlyItsCommand(t *testing.T) {
	a := openTestApp(t, Options{OpenDatabase: true})
	ctx := context.Background()
	ask := func(cmd, session string) string {
		t.Helper()
		req := &warden.Request{Capability: warden.CapShell, Action: "exec", Resource: cmd, Cwd: "/tmp/proj", Session: session}
		d, err := a.Gate.CheckWith(ctx, req, gate.CheckOptions{Approval: "hook:claude"})
		if err != nil || d.Verdict != warden.Ask || d.ApprovalID == "" {
			t.Fatalf("%q: %v %v; want an ask with an approval", cmd, d.Verdict, err)
		}
		return d.ApprovalID
	}
	answer := func(id string, ans warden.Answer) {
		t.Helper()
		if _, err := a.Queue.Answer(ctx, id, ans, approval.Who{Name: "op", Channel: "console"}); err != nil {
			t.Fatal(err)
		}
	}
	push := ask("git push origin main", "s1")
	answer(push, warden.AnswerOnce)
	other := ask("git push origin release", "s1")
	answer(other, warden.AnswerOnce)
	denied := ask("git push origin dev", "s1")
	answer(denied, warden.AnswerDeny)
	pending := ask("git push origin v2", "s1")
	elsewhere := ask("git push origin main", "s2")
	answer(elsewhere, warden.AnswerOnce)

	run := func(cmd, dir, session, id string) bool {
		t.Helper()
		req := &warden.Request{Capability: warden.CapShell, Action: "exec", Resource: cmd, Cwd: dir, Session: session}
		ok, err := a.approvedRun(ctx, req, id)
		if err != nil {
			t.Fatalf("approvedRun(%q, %s): %v", cmd, id, err)
		}
		return ok
	}
	if !run("git push origin main", "/tmp/proj", "s1", push) {
		t.Error("the approved command's run is not covered by its approval")
	}
	for _, c := range []struct {
		name, cmd, dir, session, id string
	}{
		{"another command's approval", "git push origin main", "/tmp/proj", "s1", other},
		{"another command", "git push origin release", "/tmp/proj", "s1", push},
		{"another directory", "git push origin main", "/tmp/elsewhere", "s1", push},
		{"another session", "git push origin main", "/tmp/proj", "s1", elsewhere},
		{"a denied approval", "git push origin dev", "/tmp/proj", "s1", denied},
		{"a pending approval", "git push origin v2", "/tmp/proj", "s1", pending},
		{"no such approval", "git push origin main", "/tmp/proj", "s1", "01a00000-0000-7000-8000-000000000000"},
	} {
		if run(c.cmd, c.dir, c.session, c.id) {
			t.Errorf("%s: the run is covered; want it decided as without an approval", c.name)
		}
	}

	// Through warden exec: a command named with another command's approval
	// is refused (no waiting) rather than run.
	_, err := a.Exec(ctx, ExecRequest{Args: []string{"bash", "-c", "git push origin v3"}, Dir: "/tmp/proj",
		Base: warden.Request{Session: "s1"}, Approval: push})
	var refused *Refused
	if !errors.As(err, &refused) {
		t.Fatalf("exec with another command's approval: %v; want refused", err)
	}
}
