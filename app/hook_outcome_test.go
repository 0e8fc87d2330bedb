package app_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

// codexEvent is a Codex hook payload for one call.
func codexEvent(event, session, tool, input, callID string) string {
	return `{"session_id":"` + session + `","turn_id":"t-1","cwd":"/tmp","hook_event_name":"` + event + `","model":"gpt-5",` +
		`"permission_mode":"default","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + callID + `"}`
}

// geminiEvent is a Gemini CLI hook payload for one call: it names no call,
// and its keys come in another order after the call ran.
func geminiEvent(event, session, tool, input string) string {
	if event == "AfterTool" {
		return `{"tool_response":{"llmContent":"done","returnDisplay":"done"},"tool_input":` + input + `,"tool_name":"` + tool +
			`","timestamp":"2026-11-28T00:00:05.000Z","hook_event_name":"AfterTool","cwd":"/tmp","session_id":"` + session + `"}`
	}
	return `{"session_id":"` + session + `","cwd":"/tmp","hook_event_name":"` + event + `","timestamp":"2026-11-28T00:00:01.000Z",` +
		`"tool_name":"` + tool + `","tool_input":` + input + `}`
}

// TestCodexAndGeminiReportTheOutcome: Codex's PostToolUse and Gemini CLI's
// AfterTool come only for a call that ran. Neither host can be asked by
// warden, so a call the hook refused (an ask naming an approval, a deny)
// that ran is critical; a call with no decision a warning; an allowed call,
// or an approved retry, nothing. Gemini gives no call id: the decision is
// found by the call's tool and input. The same in-process and through the
// daemon.
func TestCodexAndGeminiReportTheOutcome(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := "in-process"
		if remote {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) {
			dm := startDaemon(t)
			policy, _ := json.Marshal(dm.home.PolicyPath())
			type call struct {
				host, session, before, after string
				decided                      bool   // before is answered first
				approve                      bool   // the ask is approved once, and the call retried
				event                        string // the outcome recorded; "" for none
			}
			mcp := `{"team":"ENG","title":"Flaky test"}`
			calls := []call{
				{host: "codex", session: "c-ask", decided: true, event: warden.EventHostRanDenied,
					before: codexEvent("PreToolUse", "c-ask", "mcp__linear__create_issue", mcp, "call-1"),
					after:  codexEvent("PostToolUse", "c-ask", "mcp__linear__create_issue", mcp, "call-1")},
				{host: "codex", session: "c-deny", decided: true, event: warden.EventHostRanDenied,
					before: codexEvent("PreToolUse", "c-deny", "Bash", `{"command":"rm -rf ~"}`, "call-2"),
					after:  codexEvent("PostToolUse", "c-deny", "Bash", `{"command":"rm -rf ~"}`, "call-2")},
				{host: "codex", session: "c-none", event: warden.EventHostRanUndecided,
					after: codexEvent("PostToolUse", "c-none", "Bash", `{"command":"ls"}`, "call-3")},
				{host: "codex", session: "c-retry", decided: true, approve: true,
					before: codexEvent("PreToolUse", "c-retry", "mcp__linear__create_issue", mcp, "call-4"),
					after:  codexEvent("PostToolUse", "c-retry", "mcp__linear__create_issue", mcp, "call-5")},
				{host: "gemini", session: "g-ask", decided: true, event: warden.EventHostRanDenied,
					before: geminiEvent("BeforeTool", "g-ask", "mcp_linear_create_issue", mcp),
					after:  geminiEvent("AfterTool", "g-ask", "mcp_linear_create_issue", `{"title":"Flaky test","team":"ENG"}`)},
				{host: "gemini", session: "g-deny", decided: true, event: warden.EventHostRanDenied,
					before: geminiEvent("BeforeTool", "g-deny", "read_file", `{"file_path":`+string(policy)+`}`),
					after:  geminiEvent("AfterTool", "g-deny", "read_file", `{"file_path":`+string(policy)+`}`)},
				{host: "gemini", session: "g-allow", decided: true,
					before: geminiEvent("BeforeTool", "g-allow", "read_file", `{"file_path":"/tmp/notes.txt"}`),
					after:  geminiEvent("AfterTool", "g-allow", "read_file", `{"file_path":"/tmp/notes.txt"}`)},
				{host: "gemini", session: "g-none", event: warden.EventHostRanUndecided,
					after: geminiEvent("AfterTool", "g-none", "read_file", `{"file_path":"/tmp/notes.txt"}`)},
				{host: "gemini", session: "g-retry", decided: true, approve: true,
					before: geminiEvent("BeforeTool", "g-retry", "mcp_linear_create_issue", mcp),
					after:  geminiEvent("AfterTool", "g-retry", "mcp_linear_create_issue", mcp)},
			}
			for _, c := range calls {
				if c.decided {
					code, out := runHook(dm, remote, c.host, c.before)
					if c.approve {
						m := approvalIn.FindStringSubmatch(out)
						if m == nil {
							t.Fatalf("%s: %s; want a refusal naming an approval", c.session, out)
						}
						if _, err := dm.op.Answer(ctx, m[1], warden.AnswerOnce, "console", "op"); err != nil {
							t.Fatal(err)
						}
						retry := c.before
						if c.host == "codex" {
							retry = strings.Replace(retry, "call-4", "call-5", 1)
						}
						code, out = runHook(dm, remote, c.host, retry)
						if code != 0 || strings.Contains(out, `"deny"`) {
							t.Fatalf("%s: the approved retry: exit %d, %s; want it to run", c.session, code, out)
						}
					}
					_ = code
				}
				if code, out := runHook(dm, remote, c.host, c.after); code != 0 || strings.TrimSpace(out) != "{}" {
					t.Fatalf("%s after the call: exit %d, %q; want {}", c.session, code, out)
				}
			}
			a, err := app.Open(ctx, dm.home, app.Options{OpenDatabase: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			decisions, err := a.Store.Entries(ctx, warden.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range calls {
				trace := ""
				for _, e := range decisions {
					if e.Session == c.session {
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
						if bytes.Contains(ev.Metadata, []byte(`"session":"`+c.session+`"`)) {
							got = append(got, ev)
						}
					}
				}
				switch {
				case c.event == "" && len(got) != 0:
					t.Errorf("%s: events %+v; want none", c.session, got)
				case c.event != "" && (len(got) != 1 || got[0].Type != c.event):
					t.Errorf("%s: events %+v; want one %s", c.session, got, c.event)
				case c.event != "" && c.decided && got[0].TraceID != trace:
					t.Errorf("%s: event trace %q; want the decision's %q", c.session, got[0].TraceID, trace)
				case c.event != "" && !strings.Contains(string(got[0].Metadata), `"host":"`+c.host+`"`):
					t.Errorf("%s: event metadata %s does not name host %s", c.session, got[0].Metadata, c.host)
				}
			}
		})
	}
}
