package app_test

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/sandbox"
)

// codexDockerPayload runs docker through Codex's shell tool: it asks
// (shell.needs_host), and is a command a human may run on the host.
const codexDockerPayload = `{"session_id":"019a-codex-9","turn_id":"t-9","cwd":"/repo","hook_event_name":"PreToolUse","model":"gpt-5",
"permission_mode":"default","tool_name":"Bash","tool_input":{"command":"docker version"},"tool_use_id":"call-9"}`

// TestCodexRetryRunsOnTheHostByTheHumansAnswer: Codex's retry of a command
// whose approval a human answered "run on host" is allowed as it is, not
// rewritten into warden exec, so the host runs it; once only, and audited
// by grant.host and a host_escalation event. Approved once instead, the
// retry runs in the workspace sandbox. The same in-process and through the
// daemon.
func TestCodexRetryRunsOnTheHostByTheHumansAnswer(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := "in-process"
		if remote {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) {
			dm := startDaemon(t)
			hook := func() (int, string) { return runHook(dm, remote, "codex", codexDockerPayload) }
			ask := func() string {
				t.Helper()
				code, msg := hook()
				m := approvalIn.FindStringSubmatch(msg)
				if code != 2 || m == nil {
					t.Fatalf("the ask: exit %d, %q; want a block naming an approval", code, msg)
				}
				return m[1]
			}

			id := ask()
			if _, err := dm.op.Answer(ctx, id, warden.AnswerHost, "console", "op"); err != nil {
				t.Fatal(err)
			}
			code, out := hook()
			if code != 0 || strings.Contains(out, " exec ") || strings.Contains(out, "updatedInput") {
				t.Fatalf("retry after run on host: exit %d, %q; want an allow that leaves the command as it is", code, out)
			}
			if code, msg := hook(); code != 2 || approvalIn.FindStringSubmatch(msg) == nil {
				t.Fatalf("the next retry: exit %d, %q; want a new ask (run on host is once)", code, msg)
			}

			a, err := app.Open(ctx, dm.home, app.Options{OpenDatabase: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			rows, err := a.Store.Entries(ctx, warden.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			var hostRuns int
			for _, e := range rows {
				if e.Rule == gate.RuleHostGrant && e.Verdict == warden.Allow && e.Resource == "docker version" && e.Host == "codex" {
					hostRuns++
				}
			}
			if hostRuns != 1 {
				t.Errorf("%d decisions by %s recorded; want the one retry", hostRuns, gate.RuleHostGrant)
			}
			evs, err := a.Store.Events(ctx, warden.EventFilter{Type: warden.EventHostEscalation})
			if err != nil || len(evs) != 1 || evs[0].Severity != warden.SevWarn || !strings.Contains(string(evs[0].Metadata), `"command":"docker version"`) ||
				!strings.Contains(string(evs[0].Metadata), `"by":"console:op"`) {
				t.Errorf("host_escalation events = %+v, %v; want one warning naming the command and console:op", evs, err)
			}

			if sandbox.Supported() != nil {
				return // without a sandbox an approved-once shell command asks the host's user again
			}
			id = ask()
			if _, err := dm.op.Answer(ctx, id, warden.AnswerOnce, "console", "op"); err != nil {
				t.Fatal(err)
			}
			if code, out := hook(); code != 0 || !strings.Contains(out, " exec --profile workspace ") {
				t.Errorf("retry after approve once: exit %d, %q; want it rewritten into warden exec in the workspace sandbox", code, out)
			}
		})
	}
}

// TestDenyRuleBeatsAHostGrant: a deny rule written after the answer "run on
// host" denies the retry; the grant stays unused.
func TestDenyRuleBeatsAHostGrant(t *testing.T) {
	dm := startDaemon(t)
	hook := func() (int, string) { return runHook(dm, false, "codex", codexDockerPayload) }
	code, msg := hook()
	m := approvalIn.FindStringSubmatch(msg)
	if code != 2 || m == nil {
		t.Fatalf("the ask: exit %d, %q; want a block naming an approval", code, msg)
	}
	if _, err := dm.op.Answer(ctx, m[1], warden.AnswerHost, "console", "op"); err != nil {
		t.Fatal(err)
	}
	if err := config.Set(dm.home.PolicyPath(), "shell.destructive", `["docker version"]`); err != nil {
		t.Fatal(err)
	}
	if code, msg := hook(); code != 2 || !strings.Contains(msg, "shell.user.destructive") {
		t.Fatalf("retry under a deny rule: exit %d, %q; want it denied by the rule", code, msg)
	}
}

// TestDaemonRefusesHostForOtherRequests: through the daemon's API, "run on
// host" for a tool call is refused (400, saying only a shell command can),
// and the approval stays pending.
func TestDaemonRefusesHostForOtherRequests(t *testing.T) {
	dm := startDaemon(t)
	d, err := dm.agent.CheckOpen(ctx, toolReq("mcp__x__y", "s"), "hook:codex")
	if err != nil || d.ApprovalID == "" {
		t.Fatalf("CheckOpen = %+v, %v; want an ask with an approval", d, err)
	}
	_, err = dm.op.Answer(ctx, d.ApprovalID, warden.AnswerHost, "api", "op")
	if warden.ErrorCodeOf(err) != warden.EInvalid || !strings.Contains(warden.UserMessage(err), "only a shell command") {
		t.Errorf("answer host for a tool call = %v; want refused: only a shell command", err)
	}
	if a, err := dm.op.Approval(ctx, d.ApprovalID); err != nil || a.State != warden.ApprovalPending {
		t.Errorf("approval after the refused answer = %+v, %v; want pending", a, err)
	}
}
