package app_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

// codexMCPPayload calls a tool no policy names: tier 3, so warden asks.
const codexMCPPayload = `{"session_id":"019a-codex-3","turn_id":"t-3","cwd":"/repo","hook_event_name":"PreToolUse","model":"gpt-5",
"permission_mode":"default","tool_name":"mcp__linear__create_issue","tool_input":{"team":"ENG","title":"Flaky test"},"tool_use_id":"call-3"}`

// runHook answers one hook payload for host: in this process, or through the
// daemon dm; it returns the exit status and everything written.
func runHook(dm *daemon, remote bool, host, payload string) (int, string) {
	var out, errw bytes.Buffer
	in := bytes.NewReader([]byte(payload))
	var code int
	if remote {
		code = app.RunHookRemote(ctx, dm.home, host, in, &out, &errw)
	} else {
		code = app.RunHook(ctx, dm.home, app.Options{}, host, in, &out, &errw)
	}
	return code, out.String() + errw.String()
}

var approvalIn = regexp.MustCompile("warden approvals approve ([^`]+)`")

// TestCodexAskOpensAnApprovalTheRetryUses: Codex cannot ask its user, so an
// ask from its hook opens an approval and blocks naming it; retries before the
// answer join that approval; after "approve once" exactly one retry runs. The
// same in-process and through the daemon.
func TestCodexAskOpensAnApprovalTheRetryUses(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := "in-process"
		if remote {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) {
			dm := startDaemon(t)
			hook := func() (int, string) { return runHook(dm, remote, "codex", codexMCPPayload) }
			code, msg := hook()
			m := approvalIn.FindStringSubmatch(msg)
			if code != 2 || m == nil {
				t.Fatalf("first try: exit %d, %q; want a block naming an approval", code, msg)
			}
			id := m[1]
			if code, msg := hook(); code != 2 || !bytes.Contains([]byte(msg), []byte("approve "+id+"`")) {
				t.Fatalf("retry before the answer: exit %d, %q; want a block naming %s again", code, msg, id)
			}
			pending, err := dm.op.Approvals(ctx, true)
			if err != nil || len(pending) != 1 || pending[0].ID != id || pending[0].Channel != "hook:codex" {
				t.Fatalf("pending approvals = %+v, %v; want only %s, opened through hook:codex", pending, err, id)
			}
			if _, err := dm.op.Answer(ctx, id, warden.AnswerOnce, "console", "op"); err != nil {
				t.Fatal(err)
			}
			if code, msg := hook(); code != 0 {
				t.Fatalf("retry after approve once: exit %d, %q; want the call to run", code, msg)
			}
			code, msg = hook()
			if m := approvalIn.FindStringSubmatch(msg); code != 2 || m == nil || m[1] == id {
				t.Fatalf("the next retry: exit %d, %q; want a block naming a new approval", code, msg)
			}
		})
	}
}

// TestApprovalChannelNameIsChecked: the channel a caller names for its
// approval is a label shown to the operator, so only a plain name is taken.
func TestApprovalChannelNameIsChecked(t *testing.T) {
	dm := startDaemon(t)
	for _, bad := range []string{"Hook:Codex", "hook codex", "<script>", "x" + string(make([]byte, 40)), ":lead"} {
		if d, err := dm.agent.CheckOpen(ctx, toolReq("mcp__x__y", "s"), bad); warden.ErrorCodeOf(err) != warden.EInvalid {
			t.Errorf("channel %q: %+v, %v; want an invalid-input error", bad, d, err)
		}
	}
	d, err := dm.agent.CheckOpen(ctx, toolReq("mcp__x__y", "s"), "hook:gemini")
	if err != nil || d.Verdict != warden.Ask || d.ApprovalID == "" {
		t.Fatalf("a plain channel name: %+v, %v; want an ask with an approval", d, err)
	}
	if a, err := dm.op.Approval(ctx, d.ApprovalID); err != nil || a.Channel != "hook:gemini" {
		t.Errorf("approval = %+v, %v; want channel hook:gemini", a, err)
	}
}

// claudeEvent is a Claude Code hook payload for one call.
func claudeEvent(event, tool, input, toolUseID string) string {
	return `{"session_id":"s-77","cwd":"/tmp","hook_event_name":"` + event + `","tool_name":"` + tool +
		`","tool_input":` + input + `,"tool_use_id":"` + toolUseID + `"}`
}

// TestClaudePostToolUseRecordsTheOutcome: Claude Code asks its user itself;
// when PostToolUse shows an asked call ran, warden records that the user
// approved it, under the decision's trace id. A denied call that ran anyway
// is a critical event, a call with no decision a warning, an allowed call
// nothing. The same in-process and through the daemon.
func TestClaudePostToolUseRecordsTheOutcome(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := "in-process"
		if remote {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) {
			dm := startDaemon(t)
			hook := func(payload string) (int, string) { return runHook(dm, remote, "claude", payload) }
			calls := []struct {
				id, tool, input, verdict, event string
			}{
				{"toolu_ask", "mcp__linear__create_issue", `{"title":"x"}`, `"permissionDecision":"ask"`, warden.EventHostApproved},
				{"toolu_deny", "Read", `{"file_path":"` + dm.home.PolicyPath() + `"}`, `"permissionDecision":"deny"`, warden.EventHostRanDenied},
				{"toolu_allow", "Read", `{"file_path":"/tmp/notes.txt"}`, `"permissionDecision":"allow"`, ""},
				{"toolu_none", "Bash", `{"command":"ls"}`, "", warden.EventHostRanUndecided},
			}
			for _, c := range calls {
				if c.verdict != "" {
					if code, out := hook(claudeEvent("PreToolUse", c.tool, c.input, c.id)); code != 0 || !bytes.Contains([]byte(out), []byte(c.verdict)) {
						t.Fatalf("%s PreToolUse: exit %d, %s; want %s", c.id, code, out, c.verdict)
					}
				}
				if code, out := hook(claudeEvent("PostToolUse", c.tool, c.input, c.id)); code != 0 || out != "{}\n" {
					t.Fatalf("%s PostToolUse: exit %d, %q; want {}", c.id, code, out)
				}
			}
			a, err := app.Open(ctx, dm.home, app.Options{OpenDatabase: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			for _, c := range calls {
				decisions, err := a.Store.Entries(ctx, warden.AuditFilter{})
				if err != nil {
					t.Fatal(err)
				}
				trace := ""
				for _, e := range decisions {
					if bytes.Contains(e.Raw, []byte(`"`+c.id+`"`)) {
						trace = e.TraceID
					}
				}
				var got []warden.SecurityEvent
				for _, typ := range []string{warden.EventHostApproved, warden.EventHostRanDenied, warden.EventHostRanUndecided} {
					evs, err := a.Store.Events(ctx, warden.EventFilter{Type: typ})
					if err != nil {
						t.Fatal(err)
					}
					for _, ev := range evs {
						if bytes.Contains(ev.Metadata, []byte(`"`+c.id+`"`)) {
							got = append(got, ev)
						}
					}
				}
				switch {
				case c.event == "" && len(got) != 0:
					t.Errorf("%s: events %+v; want none for an allowed call", c.id, got)
				case c.event != "" && (len(got) != 1 || got[0].Type != c.event):
					t.Errorf("%s: events %+v; want one %s", c.id, got, c.event)
				case c.event != "" && c.verdict != "" && got[0].TraceID != trace:
					t.Errorf("%s: event trace %q; want the decision's %q", c.id, got[0].TraceID, trace)
				}
			}
		})
	}
}
